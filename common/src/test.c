/*
 * test.c - the harness every workbook test runs in.
 *
 * Rule kept here: a test passes only by reaching sim_test_end(). Leaving any
 * other way (exit(), _exit(), a crash, a hang) is a failure, and every
 * failure tells how to replay it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sim/test.h>
#include <valgrind/valgrind.h>
#include <valgrind/memcheck.h>
#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef HAVE_LSAN
int __lsan_do_recoverable_leak_check(void);
#endif

extern char sim_replay_cmd[1024];
extern char sim_failure_tag[256];
void sim_failure_report(const char *why);

static bool in_test, reached_end;
static char test_id[256];

/*
 * A hang is never silent: a thread armed at the test's time-out minus a
 * margin prints the task list, the seed, the replay command and the
 * timeline before Criterion kills the worker.
 */
static pthread_t hang_thread;
static bool hang_armed;
static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cv = PTHREAD_COND_INITIALIZER;
static bool hang_stop;

static double test_timeout_s(void)
{
	double t = SIM_TEST_TIMEOUT;
#ifndef WORKBOOK_SHIM
	/* Criterion's test records are packed in a section, unaligned: copy. */
	if (criterion_current_test && criterion_current_test->data) {
		struct criterion_test_extra_data d;

		memcpy(&d, criterion_current_test->data, sizeof(d));
		if (d.timeout > 0)
			t = d.timeout;
	}
	if (criterion_options.timeout > 0 && criterion_options.timeout < t)
		t = criterion_options.timeout;
#endif
	const char *e = getenv("WORKBOOK_HANG_DUMP_S");

	if (e && atof(e) > 0)
		return atof(e);
	/* The margin: a tenth, at least 1 s and at most 5 s. */
	double m = t / 10 < 1 ? 1 : t / 10 > 5 ? 5 : t / 10;

	return t - m > 0.5 ? t - m : 0.5;
}

static void *hang_main(void *arg)
{
	struct timespec ts;
	double s = *(double *)arg;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)s;
	ts.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&hang_lock);
	while (!hang_stop && rc == 0)
		rc = pthread_cond_timedwait(&hang_cv, &hang_lock, &ts);
	bool fire = !hang_stop;

	pthread_mutex_unlock(&hang_lock);
	if (fire)
		sim_report_hang(test_id, s);
	return NULL;
}

static void hang_arm(void)
{
	static double s;

	s = test_timeout_s();
	hang_stop = false;
	hang_armed = pthread_create(&hang_thread, NULL, hang_main, &s) == 0;
}

static void hang_disarm(void)
{
	if (!hang_armed)
		return;
	pthread_mutex_lock(&hang_lock);
	hang_stop = true;
	pthread_cond_signal(&hang_cv);
	pthread_mutex_unlock(&hang_lock);
	pthread_join(hang_thread, NULL);
	hang_armed = false;
}

static void early_exit(const char *how, int code)
{
	fflush(stdout);
	fprintf(stderr, "\nBUG: %s(%d) called before the test reached its end: "
		"the test fails (an early exit never counts as a pass)\n", how, code);
	sim_failure_report("early exit");
	fflush(stderr);
	signal(SIGABRT, SIG_DFL);
	abort();
}

static void exit_guard(void)
{
	if (in_test && !reached_end)
		early_exit("exit", 0);
}

/* Student code is linked with -Wl,--wrap=_exit,--wrap=_Exit: catch those too. */
void __real__exit(int code) __attribute__((noreturn));
void __wrap__exit(int code)
{
	if (in_test && !reached_end)
		early_exit("_exit", code);
	__real__exit(code);
}

void __real__Exit(int code) __attribute__((noreturn));
void __wrap__Exit(int code)
{
	if (in_test && !reached_end)
		early_exit("_Exit", code);
	__real__Exit(code);
}

void sim_test_begin(const char *lab, const char *suite, const char *name)
{
	snprintf(test_id, sizeof(test_id), "%s/%s", suite, name);
	snprintf(sim_failure_tag, sizeof(sim_failure_tag), "%s-%s-%s", lab, suite, name);
	snprintf(sim_replay_cmd, sizeof(sim_replay_cmd),
		 "./workbook check %s --test %s", lab, test_id);
}

void sim_test_setup(void)
{
	static bool registered;

	if (!registered) {
		atexit(exit_guard);
		at_quick_exit(exit_guard);
		registered = true;
	}
	in_test = true;
	reached_end = false;
	setvbuf(stdout, NULL, _IONBF, 0);
	hang_arm();
}

void sim_test_teardown(void)
{
	hang_disarm();
	if (in_test && !reached_end) {
		fprintf(stderr, "test %s did not reach its end\n", test_id);
		sim_failure_report(test_id);
	}
	in_test = false;
}

void sim_test_end(void)
{
	long leaks = sim_booted() ? sim_halt() : 0;

	cr_assert(leaks == 0, "%ld kmalloc()ed object(s) never kfree()d (listed on stderr)",
		  leaks);
	if (RUNNING_ON_VALGRIND) {
		unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;

		VALGRIND_DO_LEAK_CHECK;
		VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
		unsigned errors = VALGRIND_COUNT_ERRORS;

		cr_assert(errors == 0 && leaked == 0,
			  "Valgrind: %u memory error(s), %lu byte(s) definitely leaked "
			  "(details on stderr)", errors, leaked);
		(void)dubious;
		(void)reachable;
		(void)suppressed;
	}
#ifdef HAVE_LSAN
	cr_assert(__lsan_do_recoverable_leak_check() == 0,
		  "LeakSanitizer found leaks (details on stderr)");
#endif
	reached_end = true;
}

int sim_seeds_count(void)
{
	const char *s = getenv("WORKBOOK_SEEDS");
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : 20;
}

void sim_run_seeds(const struct sim_config *base, sim_scenario_fn fn, void *arg)
{
	const char *one = getenv("WORKBOOK_SEED");
	int n = (one && *one) ? 1 : sim_seeds_count();

	for (int i = 0; i < n; i++) {
		struct sim_config cfg = *base;

		if (one && *one)
			cfg.seed = strtoull(one, NULL, 0);
		else
			cfg.seed = (uint64_t)i + 1;
		sim_boot(&cfg);
		fn(arg);
		long leaks = sim_halt();

		cr_assert(leaks == 0, "seed %llu: %ld kmalloc()ed object(s) never kfree()d",
			  (unsigned long long)cfg.seed, leaks);
	}
}
