/*
 * lab4_util.h - what lab 4's tests share: callbacks that block until
 * released, callbacks that record where and in what order they ran, and
 * kthreads that call a barrier and record what they saw when it returned.
 *
 * Rule kept here: a test never sleeps; it forces a schedule by holding
 * things (a callback that waits for its release, a CPU's interrupts, a named
 * point) and lets the rest run with sim_run_until_idle(). Kthreads and
 * callbacks only record; the test's own thread asserts.
 */
#ifndef LAB4_UTIL_H
#define LAB4_UTIL_H

#include <stdbool.h>
#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

/*
 * A callback that blocks until the test releases it. It sleeps (the callback
 * kthread runs it in process context), so its CPU stays free to pass
 * quiescent states: grace periods go on while it blocks. Real callbacks must
 * never sleep; this one stands for a callback that is simply slow.
 */
struct slow_cb {
	struct rcu_head rh;
	struct completion release;
	int started;  /* it began (set before it blocks) */
	int finished; /* it returned */
	int cpu;      /* the CPU it ran on */
};

void slow_cb_init(struct slow_cb *s);
void slow_cb_func(struct rcu_head *rh);
/* Let it return (from the test's thread or anywhere). */
void slow_cb_release(struct slow_cb *s);

/* A callback that records the CPU it ran on and a global invocation number. */
struct rec_cb {
	struct rcu_head rh;
	int queued_on; /* set by the test */
	int ran_on;    /* -1 until invoked */
	long seq;      /* 1, 2, ... in global invocation order; 0 until invoked */
	int times;     /* invocations (must end at exactly 1) */
};

void rec_cb_init(struct rec_cb *r, int cpu);
void rec_cb_func(struct rcu_head *rh);
/* Reset the global invocation counter (per boot). */
void rec_cb_reset(void);

/* From the test's thread: hold @cpu, call_rcu(@rh, @func) there, let it go. */
void queue_on_cpu(int cpu, struct rcu_head *rh, rcu_callback_t func);

/* A kthread that calls a barrier once and records what it saw on return. */
struct barrier_caller {
	void (*do_barrier)(void);                     /* rcu_barrier, or a test's own */
	void (*before)(struct barrier_caller *bc); /* optional, just before the barrier */
	void (*at_return)(struct barrier_caller *bc); /* optional, as soon as it returns */
	void *arg;
	int cpu;
	int returned;
	int early; /* set by at_return when something queued before it had not finished */
	struct task_struct *task;
};

/* Start @bc->barrier on @cpu in a kthread "barrier/N". */
void barrier_caller_start(struct barrier_caller *bc, int cpu);
/* Wait for the kthread to end (after its barrier returned). */
void barrier_caller_stop(struct barrier_caller *bc);

/* Lab 3's barrier: one callback on this CPU's queue, wait for it. Wrong here. */
void lab3_one_callback_barrier(void);

#endif
