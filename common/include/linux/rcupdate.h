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

/** Enter a read-side critical section (lab 1). Never blocks, costs nothing. */
void rcu_read_lock(void);
/** Leave a read-side critical section (lab 1). */
void rcu_read_unlock(void);
/** Wait until every read-side critical section that began before the call has ended (lab 1). */
void synchronize_rcu(void);
/** Invoke @p func(@p head) after a grace period, without blocking (lab 2, lab 4). */
void call_rcu(struct rcu_head *head, rcu_callback_t func);
/** Wait until every callback queued before the call has been invoked (labs 3, 4). */
void rcu_barrier(void);

/*
 * The callback machinery's life cycle: lab 2 (one global queue) and lab 4
 * (per-CPU queues) define these; tests call them after sim_boot() and
 * before sim_halt().
 */
/** Start the kthread(s) that invoke callbacks after grace periods. */
void rcu_callbacks_init(void);
/**
 * Stop them. Callbacks still queued are dropped without being invoked: call
 * rcu_barrier() (or let them run) first.
 */
void rcu_callbacks_exit(void);
/** Most callbacks invoked in one pass (default 10, as Linux's blimit). */
void rcu_set_blimit(int n);

/** @} */
#endif
