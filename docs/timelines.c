/*
 * timelines.c - draws the docs' timelines from real runs of the simulated
 * kernel with the reference solutions (cmake/Docs.cmake builds and runs it
 * on every docs build; the SVGs land in the HTML output through IMAGE_PATH).
 *
 * Rule kept here: a picture is only drawn from a run that showed what the
 * page says it shows. Each scenario checks its own outcome; it runs in a
 * child process, seed 1 first, and a run that fails its checks or ends in a
 * BUG is reported and the next seed tried. The program exits non-zero
 * (failing the docs build) when no seed showed it, so the pictures cannot
 * silently drift from the text.
 *
 * Usage: docs_timelines OUTDIR [--scan]   (writes the SVG files, and
 * timelines.log with every run's output, into OUTDIR; --scan runs seeds 1..20
 * of every scenario and reports each, a quick check of the solutions)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <sim/sim.h>
#include <sim/trace.h>
#ifdef TIMELINES_HAVE_LAB4
#include "qq4_scenario.h"
#endif

static const char *outdir;
static int failures;
static uint64_t seed = 1;       /* the seed this attempt runs with */
static int scan;                /* --scan: try every seed, report each */

/* The configuration every scenario boots with: deterministic, our seed. */
__attribute__((unused)) static struct sim_config config(void)
{
	struct sim_config cfg = sim_forced_config();

	cfg.seed = seed;
	return cfg;
}

static void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "docs_timelines: FAILED: %s\n", what);
		failures++;
	}
}

/*
 * Give the SVG a viewBox (from its width and height) if it has none, so that
 * the page can scale it down to fit instead of cutting it off.
 */
static void add_viewbox(const char *path)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;
	int w, h;
	char *end;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	end = strchr(buf, '>');
	if (!end || strstr(buf, "viewBox") ||
	    sscanf(buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\"",
		   &w, &h) != 2)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	fwrite(buf, 1, (size_t)(end - buf), f);
	fprintf(f, " viewBox=\"0 0 %d %d\"", w, h);
	fputs(end, f);
	fclose(f);
}

__attribute__((unused)) static void write_svg(const char *name, const char *title)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	expect(trace_write_svg(path, title) == 0, path);
	add_viewbox(path);
}

/* ---- 1. A grace period waiting for a reader (lab 1) --------------------- */

#ifdef TIMELINES_HAVE_LAB1
static int writer_done;

//! [gp-waits-for-reader]
static int reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	sim_point("reader-inside");     /* the test holds the reader here */
	rcu_read_unlock();
	return 0;
}

static int writer(void *arg)
{
	(void)arg;
	synchronize_rcu();              /* must wait for the reader */
	WRITE_ONCE(writer_done, 1);
	return 0;
}

static void gp_waits_for_reader(void)
{
	struct sim_config cfg = config();

	sim_boot(&cfg);
	sim_hold_point("reader-inside");
	struct task_struct *r = kthread_run_on_cpu(reader, NULL, 1, "reader");

	sim_run_until_idle();           /* the reader is inside, on CPU 1 */
	struct task_struct *w = kthread_run_on_cpu(writer, NULL, 0, "writer");

	sim_run_until_idle();           /* the grace period has started ... */
	expect(trace_count(TR_GP_START) == 1, "no grace period started");
	expect(!READ_ONCE(writer_done),
	       "synchronize_rcu() returned while a reader was still inside");
	trace_mark("reader let go");
	sim_release_point("reader-inside");
	kthread_stop(r);
	kthread_stop(w);                /* ... and ends after the reader left */
	expect(READ_ONCE(writer_done), "synchronize_rcu() never returned");
	write_svg("gp-waits-for-reader.svg",
		  "synchronize_rcu() on CPU 0 waits for the reader on CPU 1");
	sim_halt();
}
//! [gp-waits-for-reader]
#endif

/* ---- 2. Quick Quiz #4: the premature return, and the fixed barrier ------ */

#ifdef TIMELINES_HAVE_LAB4
/*
 * Quick Quiz #4's schedule exactly as lab 4's qq4/ tests force it
 * (labs/04-rcu-barrier/tests/qq4_scenario.c, linked in): a callback queued
 * on CPU 1 blocks; CPU 1 takes the barrier's cross-call late (its
 * interrupts are held), while on_each_cpu(..., 1) waits sleeping, so CPU 0
 * passes quiescent states meanwhile. @article: the 2007 listing (count from
 * zero), else the reference rcu_barrier() of lab 4.
 */
static void qq4(int article)
{
	struct sim_config cfg = config();
	const char *name = article ? "qq4-premature.svg" : "qq4-fixed.svg";
	char path[4096];
	struct qq4_run r = {
		.do_barrier = article ? article_rcu_barrier : rcu_barrier,
		.ipi_wait_sleeps = true,
		.svg_path = path,
		.svg_title = article ? "QQ4: the article's rcu_barrier() returns while CPU 1's "
				       "earlier callback still runs"
				     : "QQ4's schedule with the fixed rcu_barrier(): it waits "
				       "for CPU 1's callback and marker",
	};

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	unlink(path);
	sim_boot(&cfg);
	qq4_scenario(&r);
	expect(r.slow_started, "CPU 1's blocking callback never started");
	if (article)
		expect(r.returned_while_blocked,
		       "the article's barrier did not return prematurely under QQ4's schedule");
	else
		expect(!r.returned_before_ipi && !r.returned_while_blocked &&
		       r.blocked_done_at_return,
		       "the fixed rcu_barrier() returned before CPU 1's earlier callback finished");
	expect(access(path, R_OK) == 0, path);
	add_viewbox(path);
	sim_halt();
}
#endif

#if !defined(TIMELINES_HAVE_LAB4) || !defined(TIMELINES_HAVE_LAB1)
static void placeholder(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "w");
	expect(f != NULL, path);
	if (!f)
		return;
	fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"40\">"
	      "<text x=\"10\" y=\"25\" font-family=\"sans-serif\" font-size=\"14\">"
	      "Not drawn: the reference solution this timeline runs (solutions/) "
	      "was not there when the docs were built.</text></svg>\n", f);
	fclose(f);
}
#endif

/*
 * Run one scenario in a child process, seed after seed, until a run behaves
 * as the page says; draw that run. A run that fails its checks or ends in a
 * BUG (a kernel or reference-solution bug: it belongs in a lab's tests, and
 * its report is in OUTDIR/timelines.log) is reported here and the next seed
 * tried. The build fails only if no seed of the first 20 works.
 */
__attribute__((unused)) static void draw(const char *what, void (*scenario)(int), int arg)
{
	int bad = 0;

	for (seed = 1; seed <= 20; seed++) {
		pid_t pid;
		int status;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			char log[4096];
			int fd;

			snprintf(log, sizeof(log), "%s/timelines.log", outdir);
			fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
				close(fd);
			}
			failures = 0;
			printf("== %s, seed %llu\n", what, (unsigned long long)seed);
			scenario(arg);
			fflush(NULL);
			_exit(failures ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			break;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && scan) {
			printf("docs_timelines: %s: seed %llu ok\n", what,
			       (unsigned long long)seed);
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("docs_timelines: %s: drawn from seed %llu%s\n", what,
			       (unsigned long long)seed,
			       bad ? " (earlier seeds failed: see timelines.log)" : "");
			return;
		}
		fprintf(stderr, "docs_timelines: %s: seed %llu %s (see %s/timelines.log)\n",
			what, (unsigned long long)seed,
			WIFSIGNALED(status) ? "ended in a BUG or a crash" : "did not show it",
			outdir);
		bad++;
	}
	if (scan) {
		printf("docs_timelines: %s: %d of 20 seeds failed\n", what, bad);
		return;
	}
	fprintf(stderr, "docs_timelines: FAILED: %s: no seed showed it\n", what);
	failures++;
}

#ifdef TIMELINES_HAVE_LAB1
static void run_gp(int unused)
{
	(void)unused;
	gp_waits_for_reader();
}
#endif

int main(int argc, char **argv)
{
	char log[4096];

	if (argc == 3 && strcmp(argv[2], "--scan") == 0)
		scan = 1;
	else if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR [--scan]\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	snprintf(log, sizeof(log), "%s/timelines.log", outdir);
	unlink(log);
#ifdef TIMELINES_HAVE_LAB1
	draw("a grace period waiting for a reader", run_gp, 0);
#else
	placeholder("gp-waits-for-reader.svg");
#endif
#ifdef TIMELINES_HAVE_LAB4
	draw("QQ4 with the article's rcu_barrier()", qq4, 1);
	draw("QQ4 with the fixed rcu_barrier()", qq4, 0);
#else
	placeholder("qq4-premature.svg");
	placeholder("qq4-fixed.svg");
#endif
	return failures ? 1 : 0;
}
