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

/**
 * init_completion() - make @p x not done, with no waiters. Only on a
 * completion nobody waits on: a waiter would be forgotten, asleep for good.
 */
void init_completion(struct completion *x);
/**
 * reinit_completion() - make @p x not done again. Only while nobody waits
 * on it; the kernel does not check, neither does this.
 */
void reinit_completion(struct completion *x);
/**
 * wait_for_completion() - sleep until @p x is completed, consuming one
 * complete() (nothing after complete_all()). The caller gives up its CPU
 * while it sleeps, which is a quiescent state. Might sleep: a BUG in IRQ
 * context, with preemption or interrupts off, or inside rcu_read_lock().
 * It has no time-out: a complete() that never comes is not returned from
 * (the deterministic kernel reports the task as hung).
 */
#define wait_for_completion(x) sim_wait_for_completion((x), __FILE__, __LINE__)
/** Simulation only: the implementation behind wait_for_completion(); call that. */
void sim_wait_for_completion(struct completion *x, const char *file, int line);
/**
 * complete() - let one waiter through: the one that has waited longest or,
 * if none waits, the next wait_for_completion(). Any context; it never
 * sleeps. A release: what the caller stored before is seen by the task it
 * lets through. It does not promise that task runs before the caller goes on.
 */
void complete(struct completion *x);
/** complete_all() - let every waiter through, now and until reinit_completion(). Any context. */
void complete_all(struct completion *x);
/**
 * completion_done() - true if a wait on @p x would not sleep now. A
 * snapshot: another task may consume the completion before the caller acts
 * on the answer.
 */
bool completion_done(struct completion *x);
/**
 * try_wait_for_completion() - consume a completion of @p x if one is there,
 * without sleeping (any context). @return true if one was consumed.
 */
bool try_wait_for_completion(struct completion *x);

/** @} */
#endif
