/*
 * Lab 2's grace-period tests: a callback waits for every reader older than
 * it, and for a grace period that starts after it was queued.
 *
 * Rule kept here (every lab 2 test file): every schedule that matters is
 * forced (held points, held CPUs, a task that keeps its CPU), so each failure
 * shows on every seed; the seed sweep only adds interleavings on top. CPU 0
 * belongs to rcuo/0: tests put readers, updaters and interrupts on CPUs 1-3.
 * Nothing is timed: callback passes are counted at the named point
 * "rcu_cb_pass".
 */
#include <string.h>
#include <linux/compiler.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <sim/test.h>
#include <sim/testlib.h>
#include "rculist.h"
#include "lab2.h"

/* ---- grace periods ------------------------------------------------------ */

static void scenario_waits_for_reader(void *arg)
{
	struct task_struct *r;
	struct foo *p;

	(void)arg;
	/* A kthread started earlier, as a kernel has many: an unbound rcuo/0
	 * (kthread_run()) would not land on CPU 0 by luck. */
	start_an_earlier_kthread();
	scenario_start();
	p = foo_new(42);
	r = reader_inside_on(2, p);
	unpublish_and_call_rcu(p);
	cr_assert_eq(nr_reclaimed, 0,
		     "seed %llu: the callback ran while a reader that began before "
		     "call_rcu() was still inside rcu_read_lock(): a callback may run "
		     "only after a full grace period (look at where call_rcu() puts it "
		     "and what the kthread waits for before invoking it)", seed());

	reader_leaves(r, "the callback");
	cr_assert_eq(reader_value, 42, "seed %llu: the reader read %d, not 42", seed(),
		     reader_value);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(grace, callback_waits_for_older_reader, scenario_waits_for_reader,
	       .description = "call_rcu(): not invoked while an older reader is inside; "
			      "invoked once after it leaves; container_of() finds the object")

/* Reader B: passes a quiescent state (cond_resched()) only once released
 * from "b_start", then reads as reader_fn(@arg) does: it stays at @arg. */
static int reader_b_fn(void *arg)
{
	sim_point("b_start");
	cond_resched();
	return reader_fn(arg);
}

static void scenario_gp_after_queueing(void *arg)
{
	struct task_struct *ra, *rb;
	struct foo *a, *b;

	(void)arg;
	scenario_start();
	sim_hold_point("a_inside");
	sim_hold_point("b_start");
	sim_hold_point("b_inside");
	/* Reader A on CPU 2 is inside; B holds CPU 3, not yet inside. */
	ra = kthread_run_on_cpu(reader_fn, "a_inside", 2, "reader_a");
	rb = kthread_run_on_cpu(reader_b_fn, "b_inside", 3, "reader_b");
	sim_run_until_idle();

	/* Callback A: its grace period (GP 1) starts and waits for reader A. */
	a = foo_new(1);
	sim_call_rcu_on(1, &a->rcu, foo_reclaim);
	sim_run_until_idle();

	/* CPU 3 passes a quiescent state, so GP 1 no longer waits for it; then
	 * reader B begins, after GP 1 began, and picks up b. */
	b = foo_new(2);
	rcu_assign_pointer(gp, b);
	sim_release_point("b_start");
	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point("b_inside"), 1,
		     "seed %llu: test setup: reader B should be inside", seed());

	/* Callback B is queued while GP 1 is in progress. */
	unpublish_and_call_rcu(b);

	/* Reader A leaves: GP 1 ends. Only A's callback may run. */
	sim_release_point("a_inside");
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 1,
		     "seed %llu: after the grace period that callback A waited for, "
		     "%d callbacks were invoked instead of 1 (A only): %s", seed(),
		     nr_reclaimed,
		     nr_reclaimed > 1
			     ? "callback B, queued while that grace period was in "
			       "progress, ran with it, while reader B (which began after "
			       "that grace period started, but before call_rcu(B)) was "
			       "still inside. A callback queued during a grace period "
			       "joined it (look at the segment call_rcu() queues on, "
			       "TODO 3, and when it moves, TODO 4; or at where "
			       "rcu_next's tail points once it has been spliced, "
			       "TODO 2: a tail left behind links the next callback "
			       "into the list it was spliced to)"
			     : "callback A was not invoked");
	cr_assert(!reader_saw_poison,
		  "seed %llu: reader B found its object freed under it", seed());

	sim_release_point("b_inside");
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 2,
		     "seed %llu: callback B was not invoked after reader B left",
		     seed());
	kthread_stop(ra);
	kthread_stop(rb);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(grace, waits_for_a_grace_period_that_starts_after_queueing,
	       scenario_gp_after_queueing,
	       .description = "a callback queued while a grace period is in progress "
			      "waits for the next grace period")
