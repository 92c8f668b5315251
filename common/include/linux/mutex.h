/**
 * @file mutex.h
 * @brief Sleeping mutual-exclusion locks.
 *
 * Rule kept here: a task that cannot get the mutex sleeps (gives up its CPU);
 * mutexes are for process context only and are released by their owner.
 * Waiters get the mutex in the order they asked.
 * @ingroup sync
 */
#ifndef LINUX_MUTEX_H
#define LINUX_MUTEX_H

#include <linux/types.h>

/** @addtogroup sync
 * @{ */

struct task_struct;

/** A mutex. Initialise with DEFINE_MUTEX() or mutex_init(). */
struct mutex {
	struct task_struct *owner; /**< holder, or NULL */
	struct list_head waiters;  /**< tasks asleep on it, FIFO */
	const char *name;          /**< for reports */
};

/** Define an unlocked mutex. */
#define DEFINE_MUTEX(m) struct mutex m = { NULL, { &(m).waiters, &(m).waiters }, #m }

/**
 * mutex_init() - make @p m unlocked, with no waiters. Not on a mutex that
 * someone holds or waits for: they would be forgotten.
 */
void mutex_init(struct mutex *m);
/**
 * mutex_trylock() - take @p m only if it is free, without sleeping.
 * @return 1 if it was free and is now held, 0 otherwise. The kernel allows
 * it in process context only; this does not check.
 */
int mutex_trylock(struct mutex *m);
/** Simulation only: the implementation behind mutex_lock(); call that. */
void sim_mutex_lock(struct mutex *m, const char *file, int line);
/**
 * mutex_lock() - take @p m, sleeping (giving up the CPU) until it is free;
 * waiters get it in the order they asked. Might sleep: a BUG in IRQ
 * context, with preemption or interrupts off, or inside rcu_read_lock().
 * Taking a mutex the caller already holds is a BUG (in the kernel, a
 * deadlock). It does not check lock order: two tasks taking two mutexes
 * in opposite orders are reported only once every task is blocked
 * ("deadlock"), or as hung while others run, not where the order broke.
 */
#define mutex_lock(m) sim_mutex_lock((m), __FILE__, __LINE__)
/**
 * mutex_unlock() - release @p m; the first waiter, if any, now owns it and
 * is woken (it runs later, not before this returns). A release: what the
 * caller stored inside is seen by the next owner. Only the owner may
 * unlock; anyone else is a BUG.
 */
void mutex_unlock(struct mutex *m);
/**
 * mutex_is_locked() - true while someone holds @p m. A snapshot: by the
 * time the caller acts on it, the answer may be stale.
 */
bool mutex_is_locked(struct mutex *m);

/** @} */
#endif
