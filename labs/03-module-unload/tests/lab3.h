/*
 * lab3.h - the lab 3 tests' shared driver.
 *
 * Rule kept here: every module test unloads through the same forced
 * schedule, so that a wrong exit is caught on every seed: callback passes
 * are held at lab 2's "rcu_cb_pass" point and let through one at a time
 * (each pass invokes at most blimit callbacks), while virtual time advances
 * one jiffy between passes (a writer kthread or a timer that is still alive
 * queues more). rmmod() runs in a kthread of its own so that the test can
 * keep driving while the module's exit function waits.
 */
#ifndef LAB3_H
#define LAB3_H

#include <stdbool.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "mymod_ctl.h"

/* CPUs the scenario's tasks run on. */
#define LAB3_CB_CPU 0     /* lab 2's callback kthread, rcuo/0 */
#define LAB3_WRITER_CPU 1
#define LAB3_TIMER_CPU 2
#define LAB3_HELPER_CPU 3

/** One load-run-unload scenario. */
struct unload_run {
	const char *path;   /* the module's shared object */
	const char *name;   /* its MODULE_NAME */
	bool writer, timer; /* posting sources */
	int reposters;
	enum naive_exit naive_exit;
	int blimit;         /* callbacks per pass */
	int backlog;        /* jiffies the module runs before rmmod() */
	int loads;          /* load-unload cycles (reload test: 2) */
	bool timer_running; /* rmmod() comes while the timer's handler runs on its CPU */
	long hold_cb_at;    /* k > 0: rmmod() comes while a callback pass is stopped
			     * before its k-th student access on LAB3_CB_CPU */
	/* results */
	bool cb_held;       /* that pass did reach its k-th access */
	int queued_at_unload, invoked_at_unload; /* right after rmmod() returned */
	int steps;          /* callback passes it took to unload and drain */
	bool done;
};

/** A test counter, read without a scheduling point. */
static inline int ctl_read(atomic_t *a)
{
	return atomic_load(&a->counter);
}

/**
 * test_rcu_barrier() - the test's own task calls rcu_barrier() from a CPU:
 * call_rcu() takes an IRQ-safe lock, which needs one (the test's task holds
 * none between steps).
 */
static inline void test_rcu_barrier(void)
{
	migrate_to_cpu(LAB3_HELPER_CPU);
	rcu_barrier();
	migrate_to_cpu(-1);
}

/** Reset mymod_ctl and boot-time state for one run. */
void lab3_ctl_reset(const struct unload_run *r);

/**
 * lab3_unload_scenario() - boot must be done. Starts lab 2's callback
 * machinery, loads the module, lets it run r->backlog jiffies, unloads it
 * under the forced schedule, drains every callback with rcu_barrier() and
 * stops the machinery. Asserts that rmmod() and the drain finished.
 */
void lab3_unload_scenario(struct unload_run *r);

/** Assert that every callback ran before its module was unmapped. */
void lab3_assert_clean(const struct unload_run *r);

#endif
