/*
 * lab6_util.h - what lab 6's tests share beyond the workbook's test library
 * (sim/testlib.h): queueing from the test's thread, callbacks held ready
 * (DONE) by holding their CPU's callback passes, a kthread that takes a CPU
 * down, a callback that stamps the jiffy it ran at, and the end of a run.
 *
 * Rule kept here: a test never sleeps and never waits in real time; it holds
 * things (a callback pass, a cross-call's caller, a dying CPU at
 * CPUHP_DEAD_POINT) and lets the rest run with sim_run_until_idle(), and it
 * measures lazy delays in virtual jiffies. Kthreads and callbacks only
 * record; the test's own thread asserts.
 */
#ifndef LAB6_UTIL_H
#define LAB6_UTIL_H

#include <sim/testlib.h>
#include "lab6.h"

/* From the test's thread: call_rcu() (lazy) or call_rcu_hurry() on @cpu. */
void queue_lazy_on(int cpu, struct rcu_head *rh, rcu_callback_t func);
void queue_hurry_on(int cpu, struct rcu_head *rh, rcu_callback_t func);

/*
 * Hold @cpu's callback passes ("rcu_cb_pass/N"), queue @n rec_cbs there
 * (hurried, oldest first) and let their grace period end: they wait in DONE,
 * ready, until the test steps or releases the point. (A kthread that gets
 * no grace period keeps them in NEXT: the test sees that as never invoked.)
 */
void queue_ready_held(int cpu, struct rec_cb *cbs, int n);
/* The name of @cpu's pass point, "rcu_cb_pass/N" (the kernel keeps names by pointer). */
const char *pass_point(int cpu);

/* A slow_cb queued (hurried) on @cpu and started: it blocks there until released. */
void start_slow_on(int cpu, struct slow_cb *s);

/* Assert that a grace period started since trace_count(TR_GP_START) was @gps_before. */
void expect_gp_started(long gps_before, int cpu);

/* A callback that stamps when it ran, in jiffies. */
struct stamp_cb {
	struct rcu_head rh;
	int times;
	unsigned long at;
};
void stamp_cb_init(struct stamp_cb *c);
void stamp_cb_func(struct rcu_head *rh);

/* A kthread on CPU @on that calls cpu_down(@cpu) once and records the result. */
struct downer {
	unsigned int cpu;
	int ret;
	int done;
	struct task_struct *task;
};
void downer_start(struct downer *d, unsigned int cpu, int on);
/* Wait for it to end (after cpu_down() returned). */
void downer_stop(struct downer *d);

/* Bring every offline CPU back, release the held points, rcu_callbacks_exit(). */
void lab6_end(void);

#endif
