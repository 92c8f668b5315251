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

/** Initialise @p m unlocked. */
void mutex_init(struct mutex *m);
/** Simulation only: the implementation behind mutex_lock(); call that. */
void sim_mutex_lock(struct mutex *m, const char *file, int line);
/**
 * mutex_lock() - take @p m, sleeping until it is free. Might sleep (see
 * might_sleep()); taking a mutex you hold is a BUG.
 */
#define mutex_lock(m) sim_mutex_lock((m), __FILE__, __LINE__)
/** mutex_unlock() - release @p m and hand it to the first waiter. */
void mutex_unlock(struct mutex *m);
/** mutex_trylock() - @return 1 if @p m was free and is now held. */
int mutex_trylock(struct mutex *m);
/** mutex_is_locked() - a snapshot: true while someone holds @p m. */
bool mutex_is_locked(struct mutex *m);

/** @} */
#endif
