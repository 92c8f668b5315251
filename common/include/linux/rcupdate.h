/**
 * @file rcupdate.h
 * @brief The RCU API the labs implement.
 *
 * The simulated kernel only declares these; lab 1 (rcu_read_lock(),
 * rcu_read_unlock(), synchronize_rcu()), lab 2 (call_rcu()) and labs 3 and
 * 4 (rcu_barrier()) define them. rcu_assign_pointer(), rcu_dereference()
 * and the list primitives are lab 1's rculist.h.
 * @ingroup rcuapi
 */
#ifndef LINUX_RCUPDATE_H
#define LINUX_RCUPDATE_H

#include <linux/types.h>

/** @addtogroup rcuapi
 * @{ */

/**
 * rcu_read_lock() - enter a read-side critical section (lab 1). Never
 * blocks, costs nothing; sections nest.
 *
 * Does not promise: any ordering against other CPUs' accesses (that is
 * rcu_dereference()'s job), exclusion of updaters (they run concurrently),
 * or that the objects read stay unchanged, only that they are not freed
 * while the section lasts. Sleeping inside is a BUG.
 */
void rcu_read_lock(void);
/**
 * rcu_read_unlock() - leave a read-side critical section (lab 1).
 *
 * Does not promise to end a grace period, wake an updater or run a callback
 * at once: it only lets a later check see that this CPU left. Pointers read
 * inside must not be used after it.
 */
void rcu_read_unlock(void);
/**
 * synchronize_rcu() - wait until every read-side critical section that began
 * before the call has ended (lab 1). May sleep.
 *
 * Does not promise: to wait for readers that begin after it starts; to wait
 * for callbacks queued with call_rcu() (that is rcu_barrier()); to return
 * soon after the last reader leaves (a grace period may last longer); or to
 * be callable from IRQ context or inside a read-side section (a BUG).
 */
void synchronize_rcu(void);
/**
 * call_rcu() - invoke @p func(@p head) after a grace period, without
 * blocking (lab 2, lab 4). Safe from IRQ context.
 *
 * Does not promise: on which CPU or in which task @p func runs, nor when
 * (only "after a grace period that began after this call"); that callbacks
 * queued by different CPUs run in the order queued; that @p func runs before
 * rmmod() or sim_halt() (wait with rcu_barrier()). @p head belongs to RCU
 * until @p func runs: do not touch it, nor queue it twice.
 */
void call_rcu(struct rcu_head *head, rcu_callback_t func);
/**
 * rcu_barrier() - wait until every callback queued before the call has been
 * invoked (labs 3, 4). May sleep.
 *
 * Does not promise: to wait for callbacks queued after it starts (even by
 * callbacks it waits for), nor to stop new ones being queued; to wait for a
 * grace period by itself (with nothing queued it may return at once); or
 * that anything the callbacks started (kthreads, timers) has finished.
 */
void rcu_barrier(void);

/*
 * The callback machinery's life cycle: lab 2 (one global queue) and lab 4
 * (per-CPU queues) define these; tests call them after sim_boot() and
 * before sim_halt().
 */
/**
 * rcu_callbacks_init() - start the kthread(s) that invoke callbacks after
 * grace periods. Does not promise when they first run.
 */
void rcu_callbacks_init(void);
/**
 * rcu_callbacks_exit() - stop them. Callbacks still queued are dropped
 * without being invoked: call rcu_barrier() (or let them run) first. Does
 * not promise to wait for anything but the kthreads' return.
 */
void rcu_callbacks_exit(void);
/**
 * rcu_set_blimit() - most callbacks invoked in one pass (default 10, as
 * Linux's blimit). Does not promise how long a pass takes, nor how often
 * the kthread passes.
 */
void rcu_set_blimit(int n);

/** @} */
#endif
