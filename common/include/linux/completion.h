/**
 * @file completion.h
 * @brief Completions: "wait until this has happened".
 *
 * Rule kept here: complete() may be called from any context and never
 * sleeps; each complete() lets exactly one wait through, now or later, and
 * complete_all() lets every present and future wait through until
 * reinit_completion().
 * @ingroup sync
 */
#ifndef LINUX_COMPLETION_H
#define LINUX_COMPLETION_H

#include <linux/types.h>

/** @addtogroup sync
 * @{ */

/** A completion. Initialise with DECLARE_COMPLETION() or init_completion(). */
struct completion {
	unsigned int done;        /**< completions not yet consumed */
	struct list_head waiters; /**< tasks asleep in wait_for_completion() */
};

/** Completion "never done" value for complete_all(). */
#define COMPLETION_DONE_ALL (~0u / 2)

/** Define a completion that is not done. */
#define DECLARE_COMPLETION(c) struct completion c = { 0, { &(c).waiters, &(c).waiters } }

/** init_completion() - make @p x not done, with no waiters. */
void init_completion(struct completion *x);
/**
 * reinit_completion() - make @p x not done again. Only while nobody waits
 * on it; the kernel does not check, neither does this.
 */
void reinit_completion(struct completion *x);
/** Simulation only: the implementation behind wait_for_completion(); call that. */
void sim_wait_for_completion(struct completion *x, const char *file, int line);
/**
 * wait_for_completion() - sleep until @p x is completed, consuming one
 * complete(). Might sleep; a BUG in IRQ context.
 */
#define wait_for_completion(x) sim_wait_for_completion((x), __FILE__, __LINE__)
/** complete() - let one waiter (present or future) through. Any context. */
void complete(struct completion *x);
/** complete_all() - let every waiter through, now and until reinit. */
void complete_all(struct completion *x);
/** completion_done() - true if a wait would not sleep now. */
bool completion_done(struct completion *x);
/** try_wait_for_completion() - consume a completion if one is there. @return true if consumed. */
bool try_wait_for_completion(struct completion *x);

/** @} */
#endif
