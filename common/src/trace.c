/*
 * trace.c - the event trace, its text and JSON forms, and the failure report
 * (the SVG timeline is drawn by trace_svg.c).
 *
 * Rule kept here: an event is stamped with a logical sequence number taken
 * under the trace lock, and carries names, never addresses or clock times,
 * so the same deterministic run yields the same bytes. Each CPU's ring keeps
 * its last TRACE_RING_SIZE events; the off-CPU lane (the test's controller)
 * is one more ring.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "json_str.h"

struct ring {
	struct trace_ev *ev;
	unsigned long len; /* events ever recorded here */
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring *rings;
static int nr_rings;
static unsigned long next_seq;
static long counts[TR_NR_TYPES];

/* Set by the test harness: how to replay the current run, and a file tag. */
char sim_replay_cmd[1024];
char sim_failure_tag[256];
char sim_failure_what[512];

static const char *const type_names[TR_NR_TYPES] = {
	"switch", "idle", "read_lock", "read_unlock", "gp_start", "gp_end",
	"cb_queue", "cb_invoke", "irq_enter", "irq_exit", "ipi_send",
	"module_load", "module_unload", "bug", "warn", "mark", "hold",
	"srcu_lock", "srcu_unlock", "srcu_gp_start", "srcu_gp_end",
};

void trace_free(void)
{
	pthread_mutex_lock(&trace_lock);
	for (int i = 0; i < nr_rings; i++)
		free(rings[i].ev);
	free(rings);
	rings = NULL;
	nr_rings = 0;
	pthread_mutex_unlock(&trace_lock);
}

/*
 * Empty the rings for a boot with @nr_cpus CPUs. The rings of the previous
 * boot are kept when the CPU count is the same: only each ring's count says
 * which events are real, so nothing is cleared (a boot used to calloc and
 * zero 1.5 MB, most of a short test's time under memcheck).
 */
void trace_reset(int nr_cpus)
{
	if (nr_rings != nr_cpus + 1)
		trace_free();
	pthread_mutex_lock(&trace_lock);
	if (!rings) {
		nr_rings = nr_cpus + 1;
		rings = calloc((size_t)nr_rings, sizeof(*rings));
		for (int i = 0; rings && i < nr_rings; i++)
			rings[i].ev = malloc(TRACE_RING_SIZE * sizeof(struct trace_ev));
	}
	for (int i = 0; rings && i < nr_rings; i++)
		rings[i].len = 0;
	next_seq = 0;
	memset(counts, 0, sizeof(counts));
	pthread_mutex_unlock(&trace_lock);
}

/* NAME into an event's N bytes; one that does not fit ends in "..." so a
 * reader of the timeline sees it was cut. */
static void trace_copy_name(char *dst, size_t n, const char *name)
{
	if (snprintf(dst, n, "%s", name) >= (int)n && n > 4)
		memcpy(dst + n - 4, "...", 4);
}

void trace_emit(int cpu, const struct task_struct *t, enum trace_type type,
		const char *name, long arg)
{
	if (!S.cfg.trace || !rings)
		return;
	pthread_mutex_lock(&trace_lock);
	if (rings) {
		int r = (cpu >= 0 && cpu < nr_rings - 1) ? cpu : nr_rings - 1;
		struct ring *ring = &rings[r];
		struct trace_ev *e = &ring->ev[ring->len++ % TRACE_RING_SIZE];

		e->seq = next_seq++;
		e->cpu = r == nr_rings - 1 ? -1 : r;
		e->type = type;
		e->arg = arg;
		snprintf(e->task, sizeof(e->task), "%s", t ? t->comm : "-");
		trace_copy_name(e->name, sizeof(e->name), name ? name : "");
		counts[type]++;
	}
	pthread_mutex_unlock(&trace_lock);
}

void trace_start_here(void)
{
	pthread_mutex_lock(&trace_lock);
	for (int i = 0; rings && i < nr_rings; i++)
		rings[i].len = 0;
	pthread_mutex_unlock(&trace_lock);
}

void trace_event(enum trace_type type, const char *name, long arg)
{
	struct task_struct *t = sim_current;

	trace_emit(t ? t->cpu : -1, t, type, name, arg);
}

void trace_mark(const char *fmt, ...)
{
	char buf[128];  /* longer than an event keeps: trace_emit() shows the cut */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	trace_event(TR_MARK, buf, 0);
}

void trace_rcu_gp(int start, unsigned long gp_seq)
{
	trace_event(start ? TR_GP_START : TR_GP_END, start ? "gp start" : "gp end",
		    (long)gp_seq);
}

void trace_rcu_callback_queued(struct rcu_head *head)
{
	module_note_queued(head);
	if (S.cfg.trace)
		trace_event(TR_CB_QUEUE, callback_name(head->func), 0);
}

long trace_count(enum trace_type type)
{
	pthread_mutex_lock(&trace_lock);
	long n = counts[type];

	pthread_mutex_unlock(&trace_lock);
	return n;
}

const char *trace_type_name(int type)
{
	return type_names[type];
}

/* All kept events, merged by sequence number. Caller frees. */
static struct trace_ev *trace_collect(size_t *n, int *rings_seen)
{
	pthread_mutex_lock(&trace_lock);
	size_t total = 0;

	*rings_seen = nr_rings;

	for (int i = 0; i < nr_rings; i++)
		total += rings[i].len < TRACE_RING_SIZE ? rings[i].len : TRACE_RING_SIZE;
	struct trace_ev *all = malloc((total ? total : 1) * sizeof(*all));
	size_t k = 0;

	for (int i = 0; all && i < nr_rings; i++) {
		unsigned long len = rings[i].len, first = len > TRACE_RING_SIZE ? len - TRACE_RING_SIZE : 0;

		for (unsigned long j = first; j < len; j++)
			all[k++] = rings[i].ev[j % TRACE_RING_SIZE];
	}
	pthread_mutex_unlock(&trace_lock);
	/* insertion-merge: rings are each sorted, total is small */
	for (size_t i = 1; all && i < k; i++) {
		struct trace_ev e = all[i];
		size_t j = i;

		while (j > 0 && all[j - 1].seq > e.seq) {
			all[j] = all[j - 1];
			j--;
		}
		all[j] = e;
	}
	*n = k;
	return all;
}

int trace_dump_open(struct trace_dump *d, const char *path)
{
	d->ev = trace_collect(&d->n, &d->nr_rings);
	d->f = fopen(path, "w");
	if (d->ev && d->f)
		return 0;
	int err = d->f ? -ENOMEM : -errno;

	free(d->ev);
	if (d->f)
		fclose(d->f);
	return err;
}

int trace_dump_close(struct trace_dump *d)
{
	free(d->ev);
	return fclose(d->f) ? -errno : 0;
}

int trace_write_text(FILE *f)
{
	int nr_rings_seen;
	size_t n;
	struct trace_ev *ev = trace_collect(&n, &nr_rings_seen);

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%6lu cpu%-2d %-16s %-13s %s %ld\n", ev[i].seq, ev[i].cpu,
			ev[i].task, type_names[ev[i].type], ev[i].name, ev[i].arg);
	free(ev);
	return 0;
}

int trace_write_json(const char *path)
{
	struct trace_dump d;
	int err = trace_dump_open(&d, path);

	if (err)
		return err;
	FILE *f = d.f;

	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
		"\"args\":{\"name\":\"simulated kernel (logical time)\"}}");
	for (int c = -1; c < d.nr_rings - 1; c++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
			"\"args\":{\"name\":\"%s%d\"}}", c + 1, c < 0 ? "off-CPU " : "CPU ",
			c < 0 ? 0 : c);
	for (size_t i = 0; i < d.n; i++) {
		const struct trace_ev *e = &d.ev[i];
		const char *ph = "i";

		switch (e->type) {
		case TR_IRQ_ENTER: case TR_READ_LOCK: ph = "B"; break;
		case TR_IRQ_EXIT: case TR_READ_UNLOCK: ph = "E"; break;
		case TR_GP_START: ph = "b"; break;
		case TR_GP_END: ph = "e"; break;
		default: break;
		}
		fprintf(f, ",\n{\"name\":");
		json_str(f, e->type == TR_READ_LOCK || e->type == TR_READ_UNLOCK
			 ? "RCU read-side" : e->type == TR_GP_START || e->type == TR_GP_END
			 ? "grace period" : e->name);
		fprintf(f, ",\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":%lu,\"pid\":1,\"tid\":%d",
			type_names[e->type], ph, e->seq, e->cpu + 1);
		if (*ph == 'b' || *ph == 'e')
			fprintf(f, ",\"id\":%ld", e->arg);
		if (*ph == 'i')
			fprintf(f, ",\"s\":\"t\"");
		fprintf(f, ",\"args\":{\"task\":");
		json_str(f, e->task);
		fprintf(f, ",\"arg\":%ld}}", e->arg);
	}
	fprintf(f, "\n]}\n");
	return trace_dump_close(&d);
}

/*
 * The timeline of the current run, in WORKBOOK_TRACE_DIR (default traces/),
 * named by the test and seed; its path on stderr ("timeline: PATH").
 */
void sim_write_timeline(const char *why)
{
	const char *dir = getenv("WORKBOOK_TRACE_DIR");
	char path[1200];

	if (!rings)
		return;
	if (!dir || !*dir)
		dir = "traces";
	mkdir(dir, 0777);
	if (sim_failure_tag[0])
		snprintf(path, sizeof(path), "%s/%s-seed%llu.svg", dir, sim_failure_tag,
			 (unsigned long long)S.cfg.seed);
	else
		snprintf(path, sizeof(path), "%s/failure-%d.svg", dir, (int)getpid());
	/* titled by the test (the replay command ends with its suite/name) */
	const char *test = strstr(sim_replay_cmd, "--test ");

	if (trace_write_svg(path, test ? test + strlen("--test ") : why) == 0)
		fprintf(stderr, "  timeline: %s\n", path);
}

/*
 * On any failure: how to see it again. Never takes S.lock. Only a
 * deterministic run is replayed by its seed; a parallel run's schedule is
 * the host's, so it gets the command that re-runs the test deterministically.
 */
void sim_failure_report(const char *why)
{
	bool parallel = S.cfg.mode == SIM_PARALLEL;
	/* the mode the environment forced is part of what replays the run */
	const char *mode = getenv("WORKBOOK_MODE");
	bool forced = mode && *mode;

	if (S.ever_booted && !parallel)
		fprintf(stderr, "  seed: %llu (deterministic mode)\n",
			(unsigned long long)S.cfg.seed);
	if (sim_replay_cmd[0] && S.ever_booted && parallel)
		fprintf(stderr, "  replay: WORKBOOK_MODE=deterministic %s "
			"(a parallel run is not replayable: this re-runs the test "
			"deterministically)\n", sim_replay_cmd);
	else if (sim_replay_cmd[0] && S.ever_booted)
		fprintf(stderr, "  replay: %s%s%s%sWORKBOOK_SEED=%llu %s\n",
			forced ? "WORKBOOK_MODE=" : "", forced ? mode : "", forced ? " " : "",
			explore_replay_env(), (unsigned long long)S.cfg.seed, sim_replay_cmd);
	else if (sim_replay_cmd[0])
		fprintf(stderr, "  rerun: %s\n", sim_replay_cmd);
	sim_write_timeline(why);
}
