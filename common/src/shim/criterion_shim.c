/*
 * criterion_shim.c - the runner behind criterion_shim.h (tsan preset).
 *
 * Rule kept here: a test passes only if the forked child that ran it says so
 * through a pipe after its body and .fini returned with no failed
 * assertion, or (with .signal) if the child died of exactly that signal.
 * A child that exits any other way, crashes or outlives its timeout fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sim/criterion_shim.h>

/* Under TSan, let a real SIGSEGV end the test (tests may expect one), and
 * stop at the first report. TSAN_OPTIONS still overrides these. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "handle_segv=0:halt_on_error=1:second_deadlock_stack=1";
}

static struct criterion_shim_test *tests;
static struct criterion_shim_suite *suites;
static size_t ntests;

/* Child state. */
static jmp_buf test_jmp;
static bool in_body;
static pthread_t test_thread;
static volatile int failures;
static int result_fd = -1;

void criterion_shim_register(struct criterion_shim_test *t)
{
	t->next = tests;
	tests = t;
	ntests++;
}

void criterion_shim_register_suite(struct criterion_shim_suite *s)
{
	s->next = suites;
	suites = s;
}

/* Leave the child without atexit handlers (the harness treats exit() as an
 * early exit) and without the _exit() wrapper. */
static void __attribute__((noreturn)) child_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	syscall(SYS_exit_group, code);
	for (;;)
		;
}

static void report(char verdict)
{
	if (result_fd >= 0) {
		ssize_t r = write(result_fd, &verdict, 1);
		(void)r;
		close(result_fd);
		result_fd = -1;
	}
}

void criterion_shim_assert(bool ok, bool fatal, const char *file, int line,
			   const char *expr, const char *fmt, ...)
{
	if (ok)
		return;
	__atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const char *base = strrchr(file, '/');
	fprintf(stderr, "[----] %s:%d: Assertion Failed\n[----]   %s\n", base ? base + 1 : file,
		line, msg[0] ? msg : expr);
	if (!fatal)
		return;
	if (in_body && pthread_equal(pthread_self(), test_thread))
		longjmp(test_jmp, 1);
	/* A fatal assertion in another thread: no longjmp across threads. */
	report('F');
	child_exit(1);
}

void criterion_shim_log(const char *level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[----] %s: %s\n", level, msg);
}

static void __attribute__((noreturn)) run_child(struct criterion_shim_test *t, int fd)
{
	result_fd = fd;
	test_thread = pthread_self();
	if (t->init)
		t->init();
	in_body = true;
	if (setjmp(test_jmp) == 0)
		t->fn();
	in_body = false;
	if (t->fini)
		t->fini();
	report(failures ? 'F' : 'P');
	child_exit(0);
}

enum verdict { V_PASS, V_FAIL, V_CRASH, V_TIMEOUT };

struct slot {
	struct criterion_shim_test *t;
	pid_t pid;
	int fd;
	double start, limit;
	bool timed_out;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct result {
	struct criterion_shim_test *t;
	enum verdict v;
	double secs;
	char why[128];
};

static enum verdict judge(struct slot *s, int status, char *why, size_t len)
{
	char verdict = 0;
	ssize_t r = read(s->fd, &verdict, 1);

	(void)r;
	close(s->fd);
	if (s->timed_out) {
		snprintf(why, len, "Timed out.");
		return V_TIMEOUT;
	}
	if (s->t->signal) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == s->t->signal)
			return V_PASS;
		if (WIFSIGNALED(status)) {
			snprintf(why, len, "CRASH! (signal %d, expected %d)", WTERMSIG(status),
				 s->t->signal);
			return V_CRASH;
		}
		snprintf(why, len, "expected signal %d, the test ended normally", s->t->signal);
		return V_FAIL;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, len, "CRASH! (signal %d: %s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		return V_CRASH;
	}
	if (verdict == 'P' && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return V_PASS;
	if (verdict == 0)
		snprintf(why, len, "the test left before its end (exit status %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return V_FAIL;
}

static int cmp_tests(const void *a, const void *b)
{
	const struct criterion_shim_test *x = *(struct criterion_shim_test *const *)a;
	const struct criterion_shim_test *y = *(struct criterion_shim_test *const *)b;
	int c = strcmp(x->suite, y->suite);

	return c ? c : strcmp(x->name, y->name);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* A report in the layout of Criterion's --json output. */
static void write_json(const char *path, struct result *res, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t pass = 0;

	if (!f) {
		fprintf(stderr, "criterion shim: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++)
		pass += res[i].v == V_PASS;
	fprintf(f, "{\n  \"id\": \"Criterion shim\",\n  \"passed\": %zu,\n  \"failed\": %zu,\n"
		   "  \"errored\": 0,\n  \"skipped\": 0,\n  \"test_suites\": [", pass, n - pass);
	for (size_t i = 0; i < n; i++) {
		bool first = i == 0 || strcmp(res[i - 1].t->suite, res[i].t->suite);
		bool last = i + 1 == n || strcmp(res[i + 1].t->suite, res[i].t->suite);

		if (first) {
			fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
			json_str(f, res[i].t->suite);
			fprintf(f, ", \"tests\": [");
		}
		fprintf(f, "%s\n      {\"name\": ", first ? "" : ",");
		json_str(f, res[i].t->name);
		fprintf(f, ", \"status\": \"%s\", \"messages\": [",
			res[i].v == V_PASS ? "PASSED" : res[i].v == V_CRASH ? "ERRORED" : "FAILED");
		if (res[i].why[0])
			json_str(f, res[i].why);
		fprintf(f, "]}");
		if (last)
			fprintf(f, "\n    ]}");
	}
	fprintf(f, "\n  ]\n}\n");
	fclose(f);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--filter GLOB] [--list] [-jN] [--timeout S] [--json=FILE] "
		"[--color=WHEN] [--verbose]\n", argv0);
}

int main(int argc, char **argv)
{
	const char *filter = NULL, *json = NULL;
	bool list = false;
	int jobs = 1;
	double max_timeout = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--filter=", 9))
			filter = a + 9;
		else if (!strcmp(a, "--filter") && i + 1 < argc)
			filter = argv[++i];
		else if (!strcmp(a, "--list") || !strcmp(a, "-l"))
			list = true;
		else if (!strncmp(a, "-j", 2) && a[2])
			jobs = atoi(a + 2);
		else if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && i + 1 < argc)
			jobs = atoi(argv[++i]);
		else if (!strncmp(a, "--jobs=", 7))
			jobs = atoi(a + 7);
		else if (!strncmp(a, "--timeout=", 10))
			max_timeout = atof(a + 10);
		else if (!strcmp(a, "--timeout") && i + 1 < argc)
			max_timeout = atof(argv[++i]);
		else if (!strncmp(a, "--json=", 7))
			json = a + 7;
		else if (!strncmp(a, "--color", 7) || !strcmp(a, "--verbose") ||
			 !strncmp(a, "--verbose=", 10) || !strcmp(a, "--ascii"))
			;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(argv[0]);
			return 0;
		} else {
			fprintf(stderr, "criterion shim: unknown option %s\n", a);
			usage(argv[0]);
			return 2;
		}
	}
	if (jobs < 1)
		jobs = 1;

	struct criterion_shim_test **all = calloc(ntests + 1, sizeof(*all));
	size_t n = 0;

	for (struct criterion_shim_test *t = tests; t; t = t->next) {
		for (struct criterion_shim_suite *s = suites; s; s = s->next) {
			if (strcmp(s->name, t->suite))
				continue;
			if (!t->timeout)
				t->timeout = s->timeout;
			if (s->disabled)
				t->disabled = true;
		}
		char id[512];

		snprintf(id, sizeof(id), "%s/%s", t->suite, t->name);
		if (filter && fnmatch(filter, id, 0))
			continue;
		all[n++] = t;
	}
	qsort(all, n, sizeof(*all), cmp_tests);
	if (list) {
		for (size_t i = 0; i < n; i++)
			printf("%s/%s\n", all[i]->suite, all[i]->name);
		return 0;
	}

	struct result *res = calloc(n + 1, sizeof(*res));
	struct slot *slots = calloc((size_t)jobs, sizeof(*slots));
	size_t next = 0, done = 0, nres = 0, skipped = 0;
	size_t passing = 0, failing = 0, crashing = 0;
	int running = 0;

	signal(SIGPIPE, SIG_IGN);
	while (done < n) {
		while (running < jobs && next < n) {
			struct criterion_shim_test *t = all[next++];

			if (t->disabled) {
				fprintf(stderr, "[SKIP] %s::%s: Test is disabled\n", t->suite, t->name);
				done++;
				skipped++;
				continue;
			}
			int p[2];

			if (pipe(p)) {
				perror("pipe");
				return 2;
			}
			fflush(stdout);
			fflush(stderr);
			pid_t pid = fork();

			if (pid < 0) {
				perror("fork");
				return 2;
			}
			if (pid == 0) {
				close(p[0]);
				run_child(t, p[1]);
			}
			close(p[1]);
			for (int s = 0; s < jobs; s++) {
				if (slots[s].t)
					continue;
				double limit = t->timeout > 0 ? t->timeout : 300;

				if (max_timeout > 0 && max_timeout < limit)
					limit = max_timeout;
				slots[s] = (struct slot){ .t = t, .pid = pid, .fd = p[0],
							  .start = now(), .limit = limit };
				break;
			}
			running++;
		}
		if (!running)
			continue;
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0) {
			double tnow = now();

			for (int s = 0; s < jobs; s++) {
				if (slots[s].t && !slots[s].timed_out &&
				    tnow - slots[s].start > slots[s].limit) {
					slots[s].timed_out = true;
					kill(slots[s].pid, SIGKILL);
				}
			}
			usleep(5000);
			continue;
		}
		for (int s = 0; s < jobs; s++) {
			if (!slots[s].t || slots[s].pid != pid)
				continue;
			struct result *r = &res[nres++];

			r->t = slots[s].t;
			r->secs = now() - slots[s].start;
			r->v = judge(&slots[s], status, r->why, sizeof(r->why));
			if (r->v == V_PASS) {
				passing++;
				fprintf(stderr, "[PASS] %s::%s: (%.2fs)\n", r->t->suite, r->t->name,
					r->secs);
			} else {
				failing++;
				crashing += r->v == V_CRASH;
				fprintf(stderr, "[FAIL] %s::%s: %s (%.2fs)\n", r->t->suite,
					r->t->name, r->why[0] ? r->why : "", r->secs);
			}
			slots[s].t = NULL;
			running--;
			done++;
		}
	}
	if (json) {
		qsort(res, nres, sizeof(*res), cmp_tests); /* struct result starts with t */
		write_json(json, res, nres);
	}
	fprintf(stderr, "[====] Synthesis: Tested: %zu | Passing: %zu | Failing: %zu | "
		"Crashing: %zu \n", passing + failing, passing, failing, crashing);
	(void)skipped;
	free(all);
	free(res);
	free(slots);
	return failing ? 1 : 0;
}
