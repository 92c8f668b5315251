/*
 * criterion_shim.c - the runner behind criterion_shim.h (tsan and valgrind
 * presets).
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
#include <valgrind/valgrind.h>
#include <sim/criterion_shim.h>
#include "../json_str.h"

/* Under TSan, let a real SIGSEGV end the test (tests may expect one), and
 * stop at the first report. TSAN_OPTIONS still overrides these. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "handle_segv=0:halt_on_error=1:second_deadlock_stack=1";
}

static struct criterion_shim_test *tests;
static struct criterion_shim_test *suites;
static size_t ntests;

/*
 * How many times longer a test may run under a checker that slows all code
 * down: memcheck (the valgrind preset) and ThreadSanitizer (tsan), the factors
 * of cmake/Checkers.cmake's WORKBOOK_TIMEOUT_SCALE, which CTest's own limits
 * use. Unscaled, a test's time-out meant for a plain build fired under a
 * loaded machine's memcheck before CTest's.
 */
static double timeout_scale(void)
{
#ifdef __SANITIZE_THREAD__
	return 3;
#else
	return RUNNING_ON_VALGRIND ? 5 : 1;
#endif
}

/* Child state. */
static jmp_buf test_jmp;
static double child_limit;      /* its time-out in seconds, scaled */
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

void criterion_shim_register_suite(struct criterion_shim_test *s)
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

double criterion_shim_timeout(void)
{
	return child_limit;
}

/* Seconds test @t may run: its time-out (or 300), at most --timeout, scaled. */
static double test_limit(const struct criterion_shim_test *t, double max_timeout)
{
	double limit = t->timeout > 0 ? t->timeout : 300;

	if (max_timeout > 0 && max_timeout < limit)
		limit = max_timeout;
	return limit * timeout_scale();
}

static void __attribute__((noreturn)) run_child(struct criterion_shim_test *t, int fd,
						double limit)
{
	child_limit = limit;
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

struct opts {
	const char *filter, *json;
	bool list;
	int jobs;
	double max_timeout;
};

/* @return -1 to go on, or the exit status main() returns at once. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .jobs = 1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--filter=", 9))
			o->filter = a + 9;
		else if (!strcmp(a, "--filter") && i + 1 < argc)
			o->filter = argv[++i];
		else if (!strcmp(a, "--list") || !strcmp(a, "-l"))
			o->list = true;
		else if (!strncmp(a, "-j", 2) && a[2])
			o->jobs = atoi(a + 2);
		else if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && i + 1 < argc)
			o->jobs = atoi(argv[++i]);
		else if (!strncmp(a, "--jobs=", 7))
			o->jobs = atoi(a + 7);
		else if (!strncmp(a, "--timeout=", 10))
			o->max_timeout = atof(a + 10);
		else if (!strcmp(a, "--timeout") && i + 1 < argc)
			o->max_timeout = atof(argv[++i]);
		else if (!strncmp(a, "--json=", 7))
			o->json = a + 7;
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
	if (o->jobs < 1)
		o->jobs = 1;
	return -1;
}

/* A test takes its suite's timeout and disabled flag. */
static void inherit_suite(struct criterion_shim_test *t)
{
	for (struct criterion_shim_test *s = suites; s; s = s->next) {
		if (strcmp(s->suite, t->suite))
			continue;
		if (!t->timeout)
			t->timeout = s->timeout;
		if (s->disabled)
			t->disabled = true;
	}
}

/* The registered tests that match the filter, sorted by suite and name. */
static struct criterion_shim_test **select_tests(const char *filter, size_t *n)
{
	struct criterion_shim_test **all = calloc(ntests + 1, sizeof(*all));

	*n = 0;
	for (struct criterion_shim_test *t = tests; t; t = t->next) {
		char id[512];

		inherit_suite(t);
		snprintf(id, sizeof(id), "%s/%s", t->suite, t->name);
		if (filter && fnmatch(filter, id, FNM_EXTMATCH))
			continue;
		all[(*n)++] = t;
	}
	qsort(all, *n, sizeof(*all), cmp_tests);
	return all;
}

/* The run: its children in slots, and the verdicts so far. */
struct run {
	const struct opts *o;
	struct slot *slots;
	struct result *res;
	size_t nres, done, passing, failing, crashing;
	int running;
};

/* Fork a child for t and give it a free slot. @return 0, or 2 if it cannot. */
static int start_test(struct run *r, struct criterion_shim_test *t)
{
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
		run_child(t, p[1], test_limit(t, r->o->max_timeout));
	}
	close(p[1]);
	for (int s = 0; s < r->o->jobs; s++) {
		if (r->slots[s].t)
			continue;
		r->slots[s] = (struct slot){ .t = t, .pid = pid, .fd = p[0], .start = now(),
					     .limit = test_limit(t, r->o->max_timeout) };
		break;
	}
	r->running++;
	return 0;
}

/* No child ended: kill those past their limit, and wait a little. */
static void kill_overdue(struct run *r)
{
	double tnow = now();

	for (int s = 0; s < r->o->jobs; s++) {
		struct slot *sl = &r->slots[s];

		if (sl->t && !sl->timed_out && tnow - sl->start > sl->limit) {
			sl->timed_out = true;
			kill(sl->pid, SIGKILL);
		}
	}
	usleep(5000);
}

/* The child pid ended with status: judge it, print the verdict, free its slot. */
static void reap(struct run *r, pid_t pid, int status)
{
	for (int s = 0; s < r->o->jobs; s++) {
		if (!r->slots[s].t || r->slots[s].pid != pid)
			continue;
		struct result *res = &r->res[r->nres++];

		res->t = r->slots[s].t;
		res->secs = now() - r->slots[s].start;
		res->v = judge(&r->slots[s], status, res->why, sizeof(res->why));
		if (res->v == V_PASS) {
			r->passing++;
			fprintf(stderr, "[PASS] %s::%s: (%.2fs)\n", res->t->suite, res->t->name,
				res->secs);
		} else {
			r->failing++;
			r->crashing += res->v == V_CRASH;
			fprintf(stderr, "[FAIL] %s::%s: %s (%.2fs)\n", res->t->suite,
				res->t->name, res->why[0] ? res->why : "", res->secs);
		}
		r->slots[s].t = NULL;
		r->running--;
		r->done++;
	}
}

/* Run the n tests, o->jobs at a time. @return 0, or 2 if a child could not start. */
static int run_tests(struct run *r, struct criterion_shim_test **all, size_t n)
{
	size_t next = 0;

	signal(SIGPIPE, SIG_IGN);
	while (r->done < n) {
		while (r->running < r->o->jobs && next < n) {
			struct criterion_shim_test *t = all[next++];

			if (t->disabled) {
				fprintf(stderr, "[SKIP] %s::%s: Test is disabled\n", t->suite, t->name);
				r->done++;
				continue;
			}
			if (start_test(r, t))
				return 2;
		}
		if (!r->running)
			continue;
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0)
			kill_overdue(r);
		else
			reap(r, pid, status);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	size_t n;
	struct criterion_shim_test **all = select_tests(o.filter, &n);

	if (o.list) {
		for (size_t i = 0; i < n; i++)
			printf("%s/%s\n", all[i]->suite, all[i]->name);
		return 0;
	}
	struct run r = { .o = &o, .res = calloc(n + 1, sizeof(struct result)),
			 .slots = calloc((size_t)o.jobs, sizeof(struct slot)) };

	if (run_tests(&r, all, n))
		return 2;
	if (o.json) {
		qsort(r.res, r.nres, sizeof(*r.res), cmp_tests); /* struct result starts with t */
		write_json(o.json, r.res, r.nres);
	}
	fprintf(stderr, "[====] Synthesis: Tested: %zu | Passing: %zu | Failing: %zu | "
		"Crashing: %zu \n", r.passing + r.failing, r.passing, r.failing, r.crashing);
	free(all);
	free(r.res);
	free(r.slots);
	return r.failing ? 1 : 0;
}
