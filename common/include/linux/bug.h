/**
 * @file bug.h
 * @brief BUG(), BUG_ON() and WARN_ON(): the simulated kernel's oopses.
 *
 * Rule kept here: a BUG never lets the test carry on and never looks like a
 * pass. It prints the kernel-style report (file:line, task, CPU), the replay
 * seed and the timeline, then raises ::BUG_SIGNAL, which a test that expects
 * the bug names in `.signal`. It never calls exit().
 * @ingroup bug
 */
#ifndef LINUX_BUG_H
#define LINUX_BUG_H

#include <signal.h>
#include <stdbool.h>

/** @addtogroup bug
 * @{ */

/**
 * The signal a BUG raises. A test that provokes a bug on purpose declares
 * `.signal = BUG_SIGNAL`; a segmentation fault or an abort() does not match,
 * so a crash of another kind still fails the test.
 */
#define BUG_SIGNAL SIGTRAP

/**
 * sim_bug() - Simulation only: the implementation behind BUG(); report a
 * kernel bug and end the test. Use BUG() or the checks
 * that call it.
 * @param file source file of the check.
 * @param line its line.
 * @param fmt  printf-style headline, e.g. "sleeping function called from
 *             invalid context".
 */
__attribute__((noreturn, format(printf, 3, 4)))
void sim_bug(const char *file, int line, const char *fmt, ...);

/**
 * sim_warn() - Simulation only: the implementation behind WARN_ON(); print a
 * kernel-style warning with file:line, task and CPU, and
 * count it (sim_warn_count()). The test goes on.
 */
__attribute__((format(printf, 3, 4)))
void sim_warn(const char *file, int line, const char *fmt, ...);

/** BUG() - this cannot happen; if it does, report it and end the test. */
#define BUG() sim_bug(__FILE__, __LINE__, "kernel BUG")

/**
 * BUG_ON() - BUG() when @p cond holds. The condition is always evaluated, so
 * it may have side effects (as in the kernel, better not).
 */
#define BUG_ON(cond)                                                   \
	do {                                                           \
		if (__builtin_expect(!!(cond), 0))                     \
			sim_bug(__FILE__, __LINE__,                    \
				"kernel BUG: BUG_ON(%s)", #cond);      \
	} while (0)

/**
 * WARN_ON() - warn once per call when @p cond holds, and go on.
 * @return the truth value of @p cond, so it can guard a recovery path.
 */
#define WARN_ON(cond)                                                     \
	({                                                                \
		bool __w = !!(cond);                                      \
		if (__builtin_expect(__w, 0))                             \
			sim_warn(__FILE__, __LINE__, "WARN_ON(%s)", #cond); \
		__w;                                                      \
	})

/** @} */
#endif
