/**
 * @file srcu.h
 * @brief Sleepable RCU (SRCU): the API lab 5 implements, and its data.
 *
 * Rule kept here: an SRCU domain (one struct srcu_struct) counts its own
 * readers, per CPU and per index, and a grace period of one domain waits
 * only for that domain's readers. The simulated kernel only declares the
 * functions; lab 5 (srcu.c) defines them. The structures are spelled out
 * here, as Linux's include/linux/srcutree.h spells out its own, so that the
 * tests can look at the counters a reader left behind.
 * @ingroup rcuapi
 */
#ifndef LINUX_SRCU_H
#define LINUX_SRCU_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

/** @addtogroup rcuapi
 * @{ */

/**
 * One CPU's share of an SRCU domain: its reader counters for both indices
 * and its callback queue. Only code running on that CPU changes the
 * counters (with interrupts off); the queue and its pending count change
 * only under ->lock (Tree SRCU's srcu_data has the same). Any CPU may read
 * the counters; the queue, under ->lock.
 */
struct srcu_data {
	unsigned long srcu_lock_count[2];   /**< srcu_read_lock()s made on this CPU, per index */
	unsigned long srcu_unlock_count[2]; /**< srcu_read_unlock()s made on this CPU, per index */
	spinlock_t lock;              /**< guards head, tail and pending; taken with interrupts off */
	struct rcu_head *head;        /**< queued callbacks, oldest first */
	struct rcu_head **tail;       /**< &last->next, or &head when empty */
	long pending;                 /**< callbacks queued here and not yet invoked */
	struct wait_queue_head wq;    /**< the callback kthread sleeps here while idle */
	struct task_struct *kthread;  /**< "srcu/N": invokes this CPU's callbacks */
	struct rcu_head barrier_head; /**< srcu_barrier()'s marker for this CPU */
	struct srcu_struct *ssp;      /**< the domain this belongs to */
};

/**
 * An SRCU domain. Initialise with init_srcu_struct(), end with
 * cleanup_srcu_struct(). Its readers and grace periods are its own: a reader
 * of one domain never delays another domain's synchronize_srcu().
 */
struct srcu_struct {
	unsigned long srcu_idx;          /**< grace-period counter; its low bit is the index new readers take */
	struct mutex srcu_gp_mutex;      /**< one grace period of this domain at a time */
	struct mutex srcu_barrier_mutex; /**< one srcu_barrier() of this domain at a time */
	struct completion srcu_barrier_completion; /**< the last marker completes it */
	atomic_t srcu_barrier_cpu_count; /**< markers not yet invoked (plus the barrier's own count) */
	const char *name;                /**< for messages */
	struct srcu_data sda[NR_CPUS];   /**< per-CPU data; CPUs 0 .. nr_cpu_ids - 1 used */
};

/**
 * init_srcu_struct() - make @p ssp an empty domain (no readers, index 0, no
 * callbacks) and start its callback kthreads, one per CPU ("srcu/N"). Call
 * after sim_boot(), from process context. May sleep.
 *
 * Does not promise when the kthreads first run. @return 0.
 */
int init_srcu_struct(struct srcu_struct *ssp);

/**
 * cleanup_srcu_struct() - end the domain: stop its kthreads. A BUG if a
 * reader is still inside or a callback is still queued or running (Linux
 * warns and leaks the structure instead; here it is fatal, so the mistake
 * cannot pass unseen).
 *
 * Does not promise to wait for anything: call srcu_barrier() first, and
 * make sure no reader is left.
 */
void cleanup_srcu_struct(struct srcu_struct *ssp);

/**
 * srcu_read_lock() - enter a read-side critical section of @p ssp and
 * return the index to hand to srcu_read_unlock(). The section may sleep
 * (msleep(), wait_for_completion(), even synchronize_srcu() of another
 * domain); it may end on another CPU. Safe from IRQ context.
 *
 * Does not promise: anything about other domains; exclusion of updaters;
 * that the index is the same for two calls. Calling synchronize_srcu() of
 * the same domain inside deadlocks.
 */
int srcu_read_lock(struct srcu_struct *ssp);

/**
 * srcu_read_unlock() - leave the section that srcu_read_lock() returned
 * @p idx for. Never sleeps.
 *
 * Does not promise to end a grace period or wake an updater at once: it
 * only lets the updater's next count see the reader gone.
 */
void srcu_read_unlock(struct srcu_struct *ssp, int idx);

/**
 * synchronize_srcu() - wait until every read-side critical section of
 * @p ssp that began before the call has ended. May sleep; process context
 * only.
 *
 * Does not promise: to wait for readers of another domain, or for readers
 * that begin after it starts; to wait for call_srcu() callbacks (that is
 * srcu_barrier()); to return soon after the last reader leaves (it polls).
 */
void synchronize_srcu(struct srcu_struct *ssp);

/**
 * call_srcu() - invoke @p func(@p head) after a grace period of @p ssp,
 * without blocking; safe from IRQ context. The callback is queued on the
 * calling CPU and invoked by that CPU's "srcu/N" kthread, in the order
 * queued there.
 *
 * Does not promise an order between callbacks queued on different CPUs,
 * nor that @p func runs before rmmod() or cleanup_srcu_struct() (wait with
 * srcu_barrier()). @p head belongs to SRCU until @p func runs.
 */
void call_srcu(struct srcu_struct *ssp, struct rcu_head *head, rcu_callback_t func);

/**
 * srcu_barrier() - wait until every callback queued on @p ssp with
 * call_srcu() before the call has been invoked. May sleep; process context
 * only.
 *
 * Does not promise: to wait for callbacks queued after it starts, nor for
 * another domain's callbacks (nor for call_rcu()'s: that is rcu_barrier()).
 */
void srcu_barrier(struct srcu_struct *ssp);

/** @} */
#endif
