/**
 * @file rcupdate.h
 * @brief The RCU API the labs implement.
 *
 * The simulated kernel only declares these; lab 1 (rcu_read_lock(),
 * rcu_read_unlock(), synchronize_rcu()), lab 2 (call_rcu()), labs 3 and 4
 * (rcu_barrier()) and lab 6 (today's call_rcu(), call_rcu_hurry() and
 * rcu_barrier(), and the RCU core's side of kfree_rcu()) define them.
 * rcu_assign_pointer(), rcu_dereference() and the list primitives are lab
 * 1's rculist.h.
 * @ingroup rcuapi
 */
#ifndef LINUX_RCUPDATE_H
#define LINUX_RCUPDATE_H

#include <stddef.h>
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
 * call_rcu_hurry() - call_rcu() for a callback that must not wait to be
 * batched (lab 6). In lab 6, call_rcu() is *lazy*: its callback may wait,
 * up to a flush timer's long delay, to share a grace period with others
 * (Linux v6.2's CONFIG_RCU_LAZY, which saves power); call_rcu_hurry() asks
 * for a grace period at once, and takes the lazy callbacks queued before it
 * along. In the other labs only call_rcu() exists, and it never waits.
 *
 * Does not promise a faster grace period, only that none is put off for
 * this callback.
 */
void call_rcu_hurry(struct rcu_head *head, rcu_callback_t func);

/**
 * __is_kfree_rcu_offset() - true if a callback "function" is in fact a
 * kfree_rcu() offset: no function lies in the first page of the address
 * space, and no rcu_head lies 4096 bytes or more into the object kfree_rcu()
 * frees (Linux's test since v3.0, 2011).
 */
#define __is_kfree_rcu_offset(offset) ((offset) < 4096)

/**
 * kfree_rcu() - kfree(@p ptr) after a grace period, without a callback
 * function: what is queued (with call_rcu()) is the offset of the rcu_head
 * @p rhf inside *@p ptr, and the RCU core, seeing a "function" below 4096
 * (__is_kfree_rcu_offset()), subtracts it from the rcu_head's address and
 * kfree()s the object itself (lab 6). So nothing of the caller's code runs
 * when the object is freed: a module that frees with kfree_rcu() only may
 * be unloaded with those callbacks still queued (Documentation/RCU/
 * checklist.rst's item 17 asks for rcu_barrier() when the callback is a
 * function of the module; here there is none). This is Linux's classic
 * kfree_rcu() (v3.0, 2011);
 * today's batches the pointers in pages instead, to the same effect.
 *
 * Does not promise when the object is freed (lab 6: it is lazy, like
 * call_rcu()), nor anything for memory that kmalloc() did not return.
 */
#define kfree_rcu(ptr, rhf)                                                        \
	do {                                                                       \
		_Static_assert(__is_kfree_rcu_offset(offsetof(__typeof__(*(ptr)), rhf)), \
			       "kfree_rcu(): the rcu_head lies too far into the object"); \
		call_rcu(&(ptr)->rhf,                                              \
			 (rcu_callback_t)(uintptr_t)offsetof(__typeof__(*(ptr)), rhf)); \
	} while (0)
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
