/*
 * Lab 2's lifetime tests: a callback that queues itself again, nothing
 * left allocated, nothing run after rcu_callbacks_exit().
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

/* ---- a callback that queues itself again ---------------------------------- */

struct reposter {
	struct rcu_head rcu;
	int runs;
};

static int repost_stop;

static void repost_cb(struct rcu_head *rp)
{
	struct reposter *r = container_of(rp, struct reposter, rcu);

	r->runs++;
	if (READ_ONCE(repost_stop))
		kfree(r);
	else
		call_rcu(&r->rcu, repost_cb);   /* again, after another grace period */
}

static void scenario_repost(void *arg)
{
	struct reposter *r = kzalloc(sizeof(*r), GFP_KERNEL);
	int runs = 0;
	long live;

	(void)arg;
	repost_stop = 0;
	rcu_callbacks_init();
	sim_hold_point("rcu_cb_pass");
	sim_call_rcu_on(1, &r->rcu, repost_cb);
	for (int i = 1; i <= 5; i++) {
		sim_run_until_idle();
		cr_assert_eq(sim_tasks_at_point("rcu_cb_pass"), 1,
			     "seed %llu: the self-reposting callback (run %d) should be "
			     "ready at the kthread's next pass", seed(), i);
		sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
		runs = r->runs;
		cr_assert_eq(runs, i,
			     "seed %llu: after %d passes the reposting callback ran %d "
			     "times: its call_rcu() from inside the callback did not get "
			     "it queued again (is the queue's lock still held while "
			     "callbacks run? TODO 5)",
			     seed(), i, runs);
	}
	/* Tell it to stop: its next run frees it instead of reposting. */
	WRITE_ONCE(repost_stop, 1);
	live = kmem_live_objects();
	sim_release_point("rcu_cb_pass");
	sim_run_until_idle();
	cr_assert_eq(kmem_live_objects(), live - 1,
		     "seed %llu: after being told to stop, the reposting callback did "
		     "not run once more and free itself", seed());
	long passes = sim_point_passes("rcu_cb_pass");

	sim_run_until_idle();
	cr_assert_eq(sim_point_passes("rcu_cb_pass"), passes,
		     "seed %llu: passes go on after the last callback ran", seed());
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(repost, self_reposting_stops_when_told, scenario_repost,
	       .description = "a callback that calls call_rcu() on itself runs once per "
			      "grace period and, told to stop, frees itself and leaves nothing")

/* ---- leaks --------------------------------------------------------------- */

static void free_any(struct rcu_head *rp)
{
	kfree(rp);      /* the rcu_head is the object's first member */
}

static void queue_from_irq(void *data)
{
	int n = (int)(long)data;

	for (int i = 0; i < n; i++)
		call_rcu(kmalloc(sizeof(struct rcu_head) + (size_t)i, GFP_ATOMIC), free_any);
}

static int queue_from_kthread(void *data)
{
	int n = (int)(long)data;

	for (int i = 0; i < n; i++) {
		call_rcu(kmalloc(sizeof(struct rcu_head) + 8 * (size_t)i, GFP_KERNEL),
			 free_any);
		if (i % 16 == 0)
			cond_resched();
	}
	return 0;
}

#define NR_POSTERS 2

SIM_TEST(leak, nothing_left_when_callbacks_ran,
	 .description = "callbacks queued from tasks and IRQs free "
			"everything (under Valgrind: no leak, no memory error)")
{
	struct task_struct *posters[NR_POSTERS];

	sim_boot(NULL);
	rcu_callbacks_init();
	/* Tasks on CPUs 2 and 3, interrupt handlers on CPUs 1 and 2, all at once. */
	for (int i = 0; i < NR_POSTERS; i++) {
		posters[i] = kthread_run_on_cpu(queue_from_kthread, (void *)300L, 2 + i,
						"poster/%u");
		raise_irq(1 + i, queue_from_irq, (void *)100L, "poster_irq");
	}
	sim_run_until_idle();
	cr_assert_eq(kmem_live_objects(), 0,
		     "%ld objects still allocated after every callback should have run "
		     "(callbacks lost or never invoked)", kmem_live_objects());
	for (int i = 0; i < NR_POSTERS; i++)
		kthread_stop(posters[i]);
	rcu_callbacks_exit();
}


/* ---- leak/nothing_runs_after_exit ---------------------------------------- */

static int ran_after_exit;

static void after_exit_cb(struct rcu_head *unused)
{
	(void)unused;
	ran_after_exit++;
}

SIM_TEST(leak, nothing_runs_after_exit,
	 .description = "after rcu_callbacks_exit() no kthread of the lab is left: a "
			"callback queued afterwards is never invoked")
{
	static struct rcu_head late;
	struct foo *p;

	sim_boot(NULL);
	scenario_start();
	ran_after_exit = 0;
	p = foo_new(1);
	sim_call_rcu_on(2, &p->rcu, foo_reclaim);
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 1, "the callback was invoked %d times, not once",
		     nr_reclaimed);
	rcu_callbacks_exit();
	sim_call_rcu_on(2, &late, after_exit_cb);
	sim_advance_jiffies(2);
	sim_run_until_idle();
	cr_assert_eq(ran_after_exit, 0,
		     "a callback queued after rcu_callbacks_exit() returned was invoked: the "
		     "callback kthread rcuo/0 was still running after the exit function "
		     "(TODO 8)");
}
