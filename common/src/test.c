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
#include <fcntl.h>
#include <signal.h>
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

static bool in_test, reached_end;
static char test_id[256];

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

/*
 * Each test's own output goes to its own file, WORKBOOK_TEST_LOG_DIR/
 * SUITE-NAME.log, when the runner names a folder: two tests run side by
 * side (-j2) never interleave, and the runner reads the cause of a failure
 * (the BUG, the task, the replay line) from the failing test's file alone.
 * Criterion runs each test in a worker process of its own, so the
 * redirection ends with the test.
 */
static void redirect_test_output(const char *suite, const char *name)
{
	const char *dir = getenv("WORKBOOK_TEST_LOG_DIR");
	char path[1200];
	int fd;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%s-%s.log", dir, suite, name);
	fflush(stdout);
	fflush(stderr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return;         /* the output stays where it was: still readable */
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* ThreadSanitizer (and the shim its build uses) reports a handler's stdio as
 * signal-unsafe: there a crash is left to Criterion alone. */
#if !defined(WORKBOOK_SHIM) && !defined(__SANITIZE_THREAD__)
/*
 * A real crash (SIGSEGV, SIGBUS) of a test says where and who before it
 * ends the worker, and leaves its timeline: best effort, the handler is not
 * async-signal-safe, but the process is dying anyway. SA_RESETHAND re-raises
 * with the default action, so Criterion still sees the signal (and a test
 * that expects it still passes).
 */
static void crash_handler(int sig)
{
	snprintf(sim_failure_what, sizeof(sim_failure_what),
		 "crashed with %s: an invalid memory access",
		 sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "a signal");
	fprintf(stderr, "\nBUG: %s\n", sim_failure_what);
	sim_report_crash();
	raise(sig);
}

static void catch_crashes(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}
#else
static void catch_crashes(void)
{
}
#endif

#ifndef WORKBOOK_SHIM
/*
 * Every Criterion assertion goes through criterion_send_assert(); test
 * binaries are linked with -Wl,--wrap=criterion_send_assert, so a failing
 * one is seen here first: its message and the moment it fired go into the
 * trace (the timeline's red line).
 */
void __real_criterion_send_assert(struct criterion_assert_stats *stats);
void __wrap_criterion_send_assert(struct criterion_assert_stats *stats)
{
	if (in_test && !stats->passed && !sim_failure_what[0]) {
		snprintf(sim_failure_what, sizeof(sim_failure_what), "%s",
			 stats->message && *stats->message ? stats->message : "assertion failed");
		trace_event(TR_BUG, sim_failure_what, 0);
		fprintf(stderr, "assertion failed at %s:%u: %s\n", stats->file, stats->line,
			sim_failure_what);
	}
	__real_criterion_send_assert(stats);
}
#endif

void sim_test_begin(const char *lab, const char *suite, const char *name)
{
	sim_failure_what[0] = 0;
	redirect_test_output(suite, name);
	catch_crashes();
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
}

void sim_test_teardown(void)
{
	if (in_test && !reached_end) {
		fprintf(stderr, "test %s did not reach its end\n", test_id);
		if (!sim_failure_what[0]) {
			snprintf(sim_failure_what, sizeof(sim_failure_what),
				 "the test did not reach its end");
			trace_event(TR_BUG, "did not reach its end", 0);
		}
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
