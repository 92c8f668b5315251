/**
 * @file testlib.h
 * @brief What the labs' callback tests share: callbacks that block until
 * released or record where and in what order they ran, and kthreads that
 * call a barrier and record what they saw when it returned.
 *
 * Rule kept here: a test never sleeps; it forces a schedule by holding
 * things (a callback that waits for its release, a CPU's interrupts, a named
 * point) and lets the rest run with sim_run_until_idle(). The callbacks and
 * kthreads here only record; the test's own thread reads what they recorded
 * and asserts. Used by labs 4, 5 and 6; nothing here knows a lab's code
 * (the barrier and the queueing function are the test's to choose).
 * @ingroup control
 */
#ifndef SIM_TESTLIB_H
#define SIM_TESTLIB_H

#include <stdbool.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/types.h>

/** @addtogroup control
 * @{ */

/**
 * A callback that blocks until the test releases it. It sleeps (callback
 * kthreads run it in process context), so its CPU stays free to pass
 * quiescent states: grace periods go on while it blocks. Real callbacks
 * must never sleep; this one stands for one that is merely slow. Its CPU's
 * callback kthread is blocked meanwhile, so the callbacks queued behind it
 * wait too.
 */
struct slow_cb {
	struct rcu_head rh;         /**< queue this (call_rcu(&s->rh, slow_cb_func)) */
	struct completion release;  /**< slow_cb_release() completes it */
	int started;                /**< it began (set before it blocks) */
	int finished;               /**< it returned */
	int cpu;                    /**< the CPU it ran on; -1 until it runs */
};

/** slow_cb_init() - ready @p s to be queued: not started, not released. */
void slow_cb_init(struct slow_cb *s);
/** slow_cb_func() - the callback to queue with @p rh = &s->rh. May sleep. */
void slow_cb_func(struct rcu_head *rh);
/**
 * slow_cb_release() - let @p s return (from the test's thread or anywhere,
 * before or after it started). Does not wait for it to return.
 */
void slow_cb_release(struct slow_cb *s);

/** A callback that records the CPU it ran on, and a global invocation number. */
struct rec_cb {
	struct rcu_head rh; /**< queue this (call_rcu(&r->rh, rec_cb_func)) */
	int queued_on;      /**< set by rec_cb_init(): where the test queues it, or -1 */
	int ran_on;         /**< the CPU it ran on; -1 until invoked */
	long seq;           /**< 1, 2, ... in invocation order across all rec_cbs; 0 until invoked */
	int times;          /**< invocations (a correct RCU makes it exactly 1) */
};

/** rec_cb_init() - ready @p r, to be queued on @p cpu (-1: the test does not say). */
void rec_cb_init(struct rec_cb *r, int cpu);
/** rec_cb_func() - the callback to queue with @p rh = &r->rh. Never sleeps. */
void rec_cb_func(struct rcu_head *rh);
/**
 * rec_cb_reset() - restart the global invocation number at 1 (once per
 * boot). Does not touch the rec_cbs themselves: rec_cb_init() each.
 */
void rec_cb_reset(void);

/**
 * An object that counts its own freeing: after a grace period, freeme_func()
 * adds one to *freed and kfree()s it. For tests that check that a barrier
 * covered every callback its caller queued before it.
 */
struct freeme {
	struct rcu_head rh; /**< queue this (call_rcu(&f->rh, freeme_func)) */
	atomic_t *freed;    /**< counts the frees */
};

/**
 * freeme_alloc() - kmalloc() a freeme that will count into @p freed.
 * Process context. Does not queue it: call_rcu() (or any flavour) does.
 */
struct freeme *freeme_alloc(atomic_t *freed);
/** freeme_func() - the callback: count, then kfree() the freeme. */
void freeme_func(struct rcu_head *rh);

/**
 * start_an_earlier_kthread() - start a kthread with kthread_run() and stop
 * it, as a kernel has started many before a lab's code runs. kthread_run()
 * puts each kthread on the next CPU in turn, so without this a lab's
 * kthreads started unbound in CPU order land on CPUs 0, 1, ... by luck, as
 * if each were bound to its own: after it, each lands one CPU further on.
 * Does not promise which CPU the next kthread_run() picks, only that it is
 * not the one the first kthread of a fresh kernel gets.
 */
void start_an_earlier_kthread(void);

/**
 * reader_held_at() - start a kthread on @p cpu that enters an RCU read-side
 * critical section and waits inside, at the named point @p point (held from
 * now on, and kept: it keeps its CPU, so no grace period can end); let
 * everything else run. Needs lab 1's rcu_read_lock() (linked from its own
 * object file: a binary without lab 1 never pulls it in). @return the task.
 */
struct task_struct *reader_held_at(int cpu, const char *point);
/**
 * reader_let_go() - release @p point, let everything run, and stop
 * @p reader. Does not promise that the grace periods the reader held up have
 * ended by then: only that everything has run until nothing could.
 */
void reader_let_go(struct task_struct *reader, const char *point);

/**
 * A kthread ("barrier/N") that calls a barrier once and records what it saw
 * on return; the timeline shows the mark "barrier/N returned". Fill in
 * do_barrier (and the optional hooks and arg), then barrier_caller_start().
 */
struct barrier_caller {
	void (*do_barrier)(void);                      /**< rcu_barrier, or a test's own */
	void (*before)(struct barrier_caller *bc);    /**< optional, just before the barrier */
	void (*at_return)(struct barrier_caller *bc); /**< optional, as soon as it returns */
	void *arg;                 /**< for the hooks */
	int cpu;                   /**< set by barrier_caller_start() */
	int returned;              /**< the barrier returned (set after at_return) */
	int early;                 /**< for at_return to set: something it had to wait for had not finished */
	unsigned long called_at;   /**< jiffies when the barrier was called */
	unsigned long returned_at; /**< jiffies when it returned */
	struct task_struct *task;  /**< the kthread */
};

/**
 * barrier_caller_start() - start @p bc's kthread on @p cpu, named
 * "barrier/N". Does not promise when it calls the barrier: it is a kthread
 * like any other.
 */
void barrier_caller_start(struct barrier_caller *bc, int cpu);
/**
 * barrier_caller_stop() - wait for @p bc's kthread to end (kthread_stop()),
 * which means: for its barrier to return. While the test waits, virtual
 * time jumps to the next timer when nothing else can run (a barrier that
 * waits for a timer returns then: read called_at and returned_at).
 */
void barrier_caller_stop(struct barrier_caller *bc);
/**
 * barrier_caller_polls() - when @p bc's barrier has not returned because
 * it polls: spins with cpu_relax() (it keeps its CPU, whose marker callback
 * then never runs) or is asleep in msleep() (it polls a count, sleeping
 * between looks, and no jiffy passes while the test waits): a sentence that
 * says so and names the polling line, for the test's failure message; else
 * NULL. The sentence lives in a buffer of the calling thread, overwritten
 * by its next call.
 */
const char *barrier_caller_polls(const struct barrier_caller *bc);

/**
 * An interrupt against a task on one CPU: a kthread on irq_race::cpu queues
 * one callback with irq_race::queue while an interrupt that queues another
 * is raised before that CPU's k-th student access (sim_irq_at_access()).
 * Wherever it lands (inside the queueing function, inside the CPU's
 * callback kthread moving its queue), both callbacks must run once. Fill in
 * the first four fields, and the three that IRQ_RACE_EXPECT_ONCE() words its
 * failures with.
 */
struct irq_race {
	int cpu;                                             /**< the CPU swept */
	void (*queue)(struct rcu_head *rh, rcu_callback_t f); /**< call_rcu, call_rcu_hurry, ... */
	void (*start)(void);            /**< before each k: start the callbacks (rcu_callbacks_init) */
	void (*stop)(void);             /**< after each k: stop them (rcu_callbacks_exit) */
	const char *api;                /**< what @c queue is called in a message: "call_rcu()" */
	const char *lost_why;           /**< the lab's cause when the task's callback alone ran not once */
	const char *race_why;           /**< the lab's cause when the interrupt's race lost or doubled one */
	struct rec_cb by_task;          /**< the task's callback, this k */
	struct rec_cb by_irq;           /**< the interrupt's callback, this k */
	int irq_ran;                    /**< the interrupt came, this k */
};

/**
 * irq_race_sweep() - in a booted kernel, for k = 1, 2, ... up to @p max_k:
 * start, race the task and the interrupt at @p r->cpu's k-th access, let
 * everything run (sim_run_until_idle()), call @p check(@p r, k) in the
 * test's thread (it asserts, with the lab's own words), stop. Ends after
 * the first k at which the interrupt no longer came (the task's code had
 * fewer accesses). @return the number of k at which it came.
 *
 * Does not promise that every access is reached: only those of @p r->cpu,
 * and only while the callbacks have not all run. Deterministic mode only
 * (sim_irq_at_access()).
 */
long irq_race_sweep(struct irq_race *r, long max_k, void (*check)(struct irq_race *r, long k));

/**
 * IRQ_RACE_EXPECT_ONCE() - the check of irq_race_sweep() that every lab
 * with a per-CPU queue makes, in the lab's own check function (a macro, so
 * that a failure is reported at the lab's test, not here): with no
 * interrupt at access @p k, the task's callback ran once; with one, both
 * ran once. A failure says how often each ran, where the interrupt came,
 * and ends with irq_race::lost_why or irq_race::race_why. It does not
 * wait: whatever must still run (a grace period's kthreads) has run before.
 */
#define IRQ_RACE_EXPECT_ONCE(r, k)                                            \
	do {                                                                  \
		cr_assert((r)->irq_ran || (r)->by_task.times == 1,            \
			  "a callback queued with %s on CPU %d ran %d times once " \
			  "every task was idle, not once: %s", (r)->api,        \
			  (r)->cpu, (r)->by_task.times, (r)->lost_why);         \
		cr_assert(!(r)->irq_ran ||                                    \
			  ((r)->by_task.times == 1 && (r)->by_irq.times == 1),  \
			  "an interrupt on CPU %d before its student access %ld " \
			  "queued a callback with %s while that CPU was queueing " \
			  "one itself or its kthread was moving or taking its "  \
			  "callbacks: the task's callback ran %d time(s), the "  \
			  "interrupt's %d (once each expected): %s", (r)->cpu,  \
			  (k), (r)->api, (r)->by_task.times,                    \
			  (r)->by_irq.times, (r)->race_why);                    \
	} while (0)

/** @} */
#endif
