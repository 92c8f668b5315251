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

#include <stdbool.h>
#include <linux/compiler.h>
#include <sim/test.h>
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

/*
 * queue_into_wait() - call_rcu_hurry() of @r (rec_cb_init()ed here) on @cpu,
 * and assert that rcuc/@cpu started a grace period for it: with a reader
 * held, the callback then waits in WAIT.
 */
void queue_into_wait(int cpu, struct rec_cb *r);

/* slow_cb_release() of @s, then let everything run. */
void release_slow(struct slow_cb *s);

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
	struct task_struct *task;
};
void downer_start(struct downer *d, unsigned int cpu, int on);
/* Wait for it to end (after cpu_down() returned). */
void downer_stop(struct downer *d);

/* The start of a run: rec_cb_reset(), rcu_callbacks_init(). */
void lab6_begin(void);
/* Bring every offline CPU back, release the held points, rcu_callbacks_exit(). */
void lab6_end(void);

/* rec_cb_init() @r for @cpu and queue it there, lazy (call_rcu()) or hurried. */
void queue_rec_on(int cpu, struct rec_cb *r, bool lazy);

/* run_seeds_on()'s modes: WORKBOOK_MODE's (deterministic by default) ... */
#define ANY_MODE (-1)
/* ... or sim_forced_config()'s: a schedule forced by holding a reader inside. */
#define FORCED (-2)
/*
 * run_seeds_on() - sim_run_seeds() of @fn on @ncpus CPUs, in @mode
 * (ANY_MODE, FORCED, SIM_PARALLEL).
 */
void run_seeds_on(sim_scenario_fn fn, int ncpus, int mode);
/* A test that is run_seeds_on(@fn, @ncpus, @mode); Criterion options may follow. */
#define SEEDS_TEST(suite, name, fn, ncpus, mode, ...) \
	SIM_TEST(suite, name, ##__VA_ARGS__) { run_seeds_on(fn, ncpus, mode); }

/* A reader on @cpu, held inside its read-side section ("lab6_reader"): grace periods wait. */
struct task_struct *hold_reader(int cpu);
/* Let it leave, let everything run, and stop it. */
void release_reader(struct task_struct *reader);

/* rcu_barrier() in a barrier_caller on @cpu, with @at_return; runs until idle. */
void start_barrier(struct barrier_caller *bc, int cpu, void (*at_return)(struct barrier_caller *bc));
/*
 * expect_waiting() - assert that @bc's barrier has not returned; else fail
 * with "seed N: rcu_barrier() returned while " and @why (a format string
 * literal), with its arguments.
 */
#define expect_waiting(bc, why, ...)                                              \
	cr_assert(!READ_ONCE((bc)->returned), "seed %llu: rcu_barrier() returned while " why, \
		  (unsigned long long)sim_seed(), ##__VA_ARGS__)
/*
 * expect_returned() - after the test let go of @what: assert that @bc's
 * barrier returned, and that its at_return saw everything done; stop it.
 */
void expect_returned(struct barrier_caller *bc, const char *what);
/* expect_returned(), then lab6_end(): the end of most tests. */
void finish(struct barrier_caller *bc, const char *what);

#endif
