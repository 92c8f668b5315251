/**
 * @file wait.h
 * @brief Wait queues: sleep until a condition holds.
 *
 * Rule kept here: no lost wake-ups. wait_event() re-checks its condition
 * after registering, and a wake_up() between the check and the sleep makes
 * the sleep return at once. That window is the named point
 * "wait_event:sleep", so a test can hold a waiter right inside it. Wake-ups may be spurious: the condition is the
 * truth, the wake-up only a hint.
 * @ingroup sync
 */
#ifndef LINUX_WAIT_H
#define LINUX_WAIT_H

#include <linux/types.h>

/** @addtogroup sync
 * @{ */

/** A wait queue head. Initialise with DECLARE_WAIT_QUEUE_HEAD() or init_waitqueue_head(). */
struct wait_queue_head {
	unsigned long seq;        /**< bumped by every wake_up() */
	struct list_head waiters; /**< tasks asleep on it */
};
/** Kernel spelling of the type. */
typedef struct wait_queue_head wait_queue_head_t;

/** Define an empty wait queue. */
#define DECLARE_WAIT_QUEUE_HEAD(w) struct wait_queue_head w = { 0, { &(w).waiters, &(w).waiters } }

/** init_waitqueue_head() - make @p wq empty. */
void init_waitqueue_head(struct wait_queue_head *wq);
/** wake_up() - wake every task asleep on @p wq to re-check. Any context. */
void wake_up(struct wait_queue_head *wq);
/**
 * Simulation only: behind wait_event(), the queue's wake-up count; a
 * scheduling point at the caller's @p file:@p line (where a task that loops
 * in wait_event() is said to be).
 */
unsigned long sim_wait_prepare(struct wait_queue_head *wq, const char *file, int line);
/** Simulation only: behind wait_event(), sleep on @p wq unless a wake_up() came after @p seq was taken. */
void sim_wait_sleep(struct wait_queue_head *wq, unsigned long seq,
		    const char *file, int line);

/**
 * wait_event() - sleep until @p cond is true. Might sleep. A kthread that
 * must be stoppable writes `wait_event(wq, cond || kthread_should_stop())`.
 */
#define wait_event(wq, cond)                                              \
	do {                                                              \
		for (;;) {                                                \
			unsigned long __seq =                             \
				sim_wait_prepare(&(wq), __FILE__, __LINE__); \
			if (cond)                                         \
				break;                                    \
			sim_wait_sleep(&(wq), __seq, __FILE__, __LINE__); \
		}                                                         \
	} while (0)

/** @} */
#endif
