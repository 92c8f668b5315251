/**
 * @file criterion_shim.h
 * @brief A small stand-in for Criterion, for the `tsan` and `valgrind` presets.
 *
 * ThreadSanitizer cannot run Criterion 2.4.1 (it aborts at start-up), and
 * under Valgrind Criterion re-executes the binary for every test, one more
 * memcheck start-up (seconds) per test; so those builds compile the very
 * same test files against this header (test.h includes it when
 * WORKBOOK_SHIM is defined). Its runner forks each test without exec: one
 * checker process per binary run. It implements the subset the
 * workbook's tests use: Test(suite, name, .init, .fini, .timeout, .signal,
 * .exit_code, .description, .disabled), TestSuite(), cr_assert()/cr_expect()
 * and their _eq/_neq/_lt/_leq/_gt/_geq/_null/_not_null/_str_eq/_str_neq
 * forms, cr_fail(), cr_fatal(), cr_log_info()/warn()/error().
 *
 * Each test runs in a forked child with a timeout; a test passes only if its
 * body and .fini ran to their end with no failed assertion (or, with
 * .signal, if it died of that signal). The runner ends with Criterion's line
 * `[====] Synthesis: Tested: N | Passing: N | Failing: N | Crashing: N`.
 * Options: --filter GLOB (suite/name; extended globs too, such as
 * tools/valgrind-run's, which leaves the parallel tests out; the last one
 * given wins), --list, -jN/--jobs N, --timeout S, --json=FILE, --color=...,
 * --verbose.
 * @ingroup control
 */
#ifndef SIM_CRITERION_SHIM_H
#define SIM_CRITERION_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/**
 * A registered test (filled in by Test()), or a suite's defaults (filled in
 * by TestSuite(): .suite names it, and only .timeout and .disabled are read).
 * One record for both, so that TestSuite() takes every option Test() takes.
 */
struct criterion_shim_test {
	const char *suite, *name, *file;
	int line;
	void (*fn)(void);
	void (*init)(void);
	void (*fini)(void);
	double timeout;
	int signal;
	int exit_code;
	bool disabled;
	const char *description;
	struct criterion_shim_test *next;
};

/** Called by Test()'s constructor. */
void criterion_shim_register(struct criterion_shim_test *t);
/** Called by TestSuite()'s constructor. */
void criterion_shim_register_suite(struct criterion_shim_test *s);
/** Record an assertion; on failure print it and, if @p fatal, end the test. */
void criterion_shim_assert(bool ok, bool fatal, const char *file, int line,
			   const char *expr, const char *fmt, ...);
/**
 * criterion_shim_timeout() - in a test: the seconds it may run before the
 * runner kills it (its .timeout or its suite's, at most --timeout, times 5
 * under Valgrind and 3 under ThreadSanitizer); 0 outside a test. Not part of
 * Criterion. Does not promise the kill comes at that second: the runner
 * looks every few milliseconds, and a loaded machine runs it late.
 */
double criterion_shim_timeout(void);
/** Print a log line (`[----] ...`) at @p level ("INFO", "WARN", "ERROR"). */
void criterion_shim_log(const char *level, const char *fmt, ...);

#define CRITERION_SHIM_PUSH_                                              \
	_Pragma("GCC diagnostic push")                                     \
	_Pragma("GCC diagnostic ignored \"-Woverride-init\"")             \
	_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"")
#define CRITERION_SHIM_POP_ _Pragma("GCC diagnostic pop")

/** Test(suite, name, options...) { body } - as Criterion's. */
#define Test(S_, N_, ...)                                                   \
	static void S_##_##N_##__shim_fn(void);                              \
	CRITERION_SHIM_PUSH_                                                 \
	static struct criterion_shim_test S_##_##N_##__shim_desc = {         \
		.suite = #S_, .name = #N_, .file = __FILE__,                 \
		.line = __LINE__, .fn = S_##_##N_##__shim_fn,                \
		__VA_ARGS__ };                                               \
	CRITERION_SHIM_POP_                                                  \
	__attribute__((constructor)) static void S_##_##N_##__shim_reg(void) \
	{                                                                    \
		criterion_shim_register(&S_##_##N_##__shim_desc);            \
	}                                                                    \
	static void S_##_##N_##__shim_fn(void)

/** TestSuite(name, options...) - suite defaults, as Criterion's. */
#define TestSuite(S_, ...)                                                  \
	CRITERION_SHIM_PUSH_                                                 \
	static struct criterion_shim_test S_##__shim_suite = {               \
		.suite = #S_, __VA_ARGS__ };                                 \
	CRITERION_SHIM_POP_                                                  \
	__attribute__((constructor)) static void S_##__shim_sreg(void)       \
	{                                                                    \
		criterion_shim_register_suite(&S_##__shim_suite);             \
	}                                                                    \
	struct criterion_shim_swallow_semicolon_##S_

#define criterion_shim_check_(fatal, cond, expr, ...)                       \
	do {                                                                 \
		if (cond)                                                    \
			criterion_shim_assert(true, fatal, __FILE__, __LINE__, expr, ""); \
		else                                                         \
			criterion_shim_assert(false, fatal, __FILE__, __LINE__, expr, \
					      "" __VA_ARGS__);               \
	} while (0)

#define cr_assert(cond, ...) criterion_shim_check_(true, (cond), #cond, __VA_ARGS__)
#define cr_expect(cond, ...) criterion_shim_check_(false, (cond), #cond, __VA_ARGS__)
#define cr_fail(...) criterion_shim_check_(false, 0, "cr_fail()", __VA_ARGS__)
#define cr_fatal(...) criterion_shim_check_(true, 0, "cr_fatal()", __VA_ARGS__)
#define cr_assert_fail(...) cr_fatal(__VA_ARGS__)
#define cr_expect_fail(...) cr_fail(__VA_ARGS__)

#define criterion_shim_cmp_(fatal, a, op, b, ...) \
	criterion_shim_check_(fatal, ((a) op (b)), #a " " #op " " #b, __VA_ARGS__)
#define cr_assert_eq(a, b, ...)  criterion_shim_cmp_(true, a, ==, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) criterion_shim_cmp_(true, a, !=, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...)  criterion_shim_cmp_(true, a, <, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) criterion_shim_cmp_(true, a, <=, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...)  criterion_shim_cmp_(true, a, >, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) criterion_shim_cmp_(true, a, >=, b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...)  criterion_shim_cmp_(false, a, ==, b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) criterion_shim_cmp_(false, a, !=, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...)  criterion_shim_cmp_(false, a, <, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) criterion_shim_cmp_(false, a, <=, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...)  criterion_shim_cmp_(false, a, >, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) criterion_shim_cmp_(false, a, >=, b, __VA_ARGS__)
#define cr_assert_null(p, ...)     criterion_shim_check_(true, ((p) == NULL), #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) criterion_shim_check_(true, ((p) != NULL), #p " != NULL", __VA_ARGS__)
#define cr_expect_null(p, ...)     criterion_shim_check_(false, ((p) == NULL), #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) criterion_shim_check_(false, ((p) != NULL), #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...)  criterion_shim_check_(true, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) criterion_shim_check_(true, strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...)  criterion_shim_check_(false, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) criterion_shim_check_(false, strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)

#define cr_log_info(...)  criterion_shim_log("INFO", __VA_ARGS__)
#define cr_log_warn(...)  criterion_shim_log("WARN", __VA_ARGS__)
#define cr_log_error(...) criterion_shim_log("ERROR", __VA_ARGS__)

#endif
