/* lab3_driver.c - the forced unload schedule every module test shares (see lab3.h). */
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <sim/sim.h>
#include <sim/trace.h>
#include "lab3.h"

/* The module's parameters: in the test binary, so they outlive it. */
struct mymod_ctl mymod_ctl;

/* Callback passes the driver lets through before it gives up on an unload. */
#define LAB3_MAX_STEPS 2000

void lab3_ctl_reset(const struct unload_run *r)
{
	mymod_ctl.writer = r->writer;
	mymod_ctl.writer_cpu = LAB3_WRITER_CPU;
	mymod_ctl.timer = r->timer;
	mymod_ctl.reposters = r->reposters;
	mymod_ctl.naive_exit = r->naive_exit;
}

/* The rmmod() kthread: unload, note what was still queued, then drain. */
static int rmmod_thread(void *arg)
{
	struct unload_run *r = arg;
	int err = rmmod(r->name);

	/* No scheduling point between rmmod()'s return and these reads. */
	struct module_counts c = module_counts(r->name);

	r->queued_at_unload = (int)c.queued;
	r->invoked_at_unload = (int)c.invoked;
	rcu_barrier();
	WRITE_ONCE(r->done, true);
	return err;
}

static void load(struct unload_run *r)
{
	/* Load from CPU LAB3_TIMER_CPU, so that the module's timer fires there. */
	migrate_to_cpu(LAB3_TIMER_CPU);
	int err = insmod(r->path);

	migrate_to_cpu(-1);
	cr_assert_eq(err, 0, "insmod(%s) returned %d: did module_init fail?", r->name, err);
	cr_assert(module_is_loaded(r->name), "insmod() returned 0 but %s is not loaded", r->name);
	/*
	 * The module runs: its sources queue one callback per jiffy each, and a
	 * callback pass (at most blimit callbacks) is let through every other
	 * jiffy, so callbacks are always waiting when rmmod() comes.
	 */
	for (int j = 0; j < r->backlog; j++) {
		sim_advance_jiffies(1);
		sim_run_until_idle();
		if (j % 2)
			sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
	}
}

static void unload(struct unload_run *r)
{
	r->done = false;
	r->steps = 0;
	if (r->timer_running) {
		/* The next tick's handler stops at its first access, inside the
		 * module, and stays there while the exit function runs. */
		sim_hold_access(LAB3_TIMER_CPU, 1);
		sim_advance_jiffies(1);
		sim_run_until_idle();
	}
	if (r->hold_cb_at) {
		/* One more callback pass, stopped before its k-th access:
		 * inside a callback of the module, or in the call_rcu() it
		 * makes, for some k. */
		sim_hold_access(LAB3_CB_CPU, r->hold_cb_at);
		sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
		r->cb_held = sim_tasks_at_point(SIM_ACCESS_POINT) > 0;
		if (r->cb_held)
			trace_mark("rmmod() while rcuo/0 is held");
	}
	struct task_struct *k = kthread_run_on_cpu(rmmod_thread, r, LAB3_HELPER_CPU, "rmmod");

	sim_run_until_idle();
	if (r->timer_running || r->hold_cb_at)
		sim_release_point(SIM_ACCESS_POINT);
	while (!READ_ONCE(r->done) && r->steps < LAB3_MAX_STEPS) {
		sim_advance_jiffies(1);
		sim_run_until_idle();
		sim_step_point("rcu_cb_pass", 1);
		r->steps++;
		sim_run_until_idle();
	}
	cr_assert(READ_ONCE(r->done),
		  "rmmod(\"%s\") and the rcu_barrier() after it had not returned after %d "
		  "callback passes (is the exit function, or rcu_barrier(), waiting for "
		  "something that never happens?)", r->name, LAB3_MAX_STEPS);
	cr_assert_eq(kthread_stop(k), 0, "rmmod(\"%s\") failed", r->name);
}

void lab3_unload_scenario(struct unload_run *r)
{
	int loads = r->loads > 0 ? r->loads : 1;

	lab3_ctl_reset(r);
	rcu_callbacks_init();
	rcu_set_blimit(r->blimit > 0 ? r->blimit : 1);
	/* Start from an empty queue: this already needs your rcu_barrier(). */
	test_rcu_barrier();
	sim_hold_point("rcu_cb_pass");
	for (int i = 0; i < loads; i++) {
		load(r);
		unload(r);
		if (i + 1 < loads)
			lab3_assert_clean(r);
	}
	sim_release_point("rcu_cb_pass");
	rcu_callbacks_exit();
}

void lab3_assert_clean(const struct unload_run *r)
{
	struct module_counts c = module_counts(r->name);
	int queued = (int)c.queued, invoked = (int)c.invoked;

	cr_assert_eq(c.exits, c.inits, "%s: module_exit() ran %ld time(s) for %ld load(s)",
		     r->name, c.exits, c.inits);
	cr_assert_gt(r->queued_at_unload, 0, "%s queued no callback at all: nothing was tested",
		     r->name);
	cr_assert_eq(r->invoked_at_unload, r->queued_at_unload,
		     "seed %llu: when rmmod(\"%s\") returned (its code unmapped), only %d of the "
		     "%d callbacks it had queued had run: something still queued callbacks "
		     "after the exit function's wait, or nothing waited for the queued ones "
		     "(mymod: mymod_exit(), TODO 3, and mymod_repost_cb(), TODO 2)",
		     (unsigned long long)sim_seed(), r->name, r->invoked_at_unload,
		     r->queued_at_unload);
	cr_assert_eq(invoked, queued, "seed %llu: %s queued %d callbacks in all, %d ran",
		     (unsigned long long)sim_seed(), r->name, queued, invoked);
}
