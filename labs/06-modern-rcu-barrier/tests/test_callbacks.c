/*
 * test_callbacks.c - the segmented per-CPU lists and rcuc/N: a hurried
 * callback runs after a grace period, on the CPU that queued it, in queue
 * order, at most blimit per pass; an interrupt that queues a callback at any
 * access of a CPU's list code loses none.
 */
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "lab6_util.h"

#define NQ 4   /* CPUs that queue; CPU 4 holds the reader */
#define PER 5

/* "callback %d queued on CPU %d" is fine when it ran once, there, after the one before it. */
static const char *misrun(const struct rec_cb *c, const struct rec_cb *before)
{
	if (c->times != 1)
		return "was not invoked exactly once: call_rcu_hurry() queues on this CPU's NEXT "
		       "(TODO 1, 2), rcuc/N gives NEXT a grace period and invokes DONE (TODO 3)";
	if (c->ran_on != c->queued_on)
		return "ran on another CPU: each CPU's callbacks are its own kthread's (TODO 3)";
	if (before && c->seq < before->seq)
		return "ran before one queued earlier on its CPU: the list is FIFO, appended "
		       "at NEXT's tail, taken from DONE's head (TODO 1)";
	return NULL;
}

static void in_order_after_gp(void *arg)
{
	static struct rec_cb cbs[PER][NQ];
	struct task_struct *reader;

	(void)arg;
	lab6_begin();
	reader = hold_reader(4);
	for (int i = 0; i < PER; i++)
		for (int cpu = 0; cpu < NQ; cpu++) {
			queue_rec_on(cpu, &cbs[i][cpu], false);
		}
	sim_run_until_idle();
	for (int i = 0; i < PER * NQ; i++)
		cr_assert_eq(cbs[i / NQ][i % NQ].times, 0,
			     "seed %llu: a callback queued on CPU %d ran while a reader that began "
			     "before call_rcu_hurry() was still inside: NEXT must wait for a whole "
			     "synchronize_rcu() before it is DONE (TODO 3)",
			     (unsigned long long)sim_seed(), i % NQ);
	release_reader(reader);
	for (int i = 0; i < PER * NQ; i++) {
		const struct rec_cb *c = &cbs[i / NQ][i % NQ];
		const char *why = misrun(c, i >= NQ ? &cbs[i / NQ - 1][i % NQ] : NULL);

		cr_assert(!why, "seed %llu: callback %d queued on CPU %d %s",
			  (unsigned long long)sim_seed(), i / NQ, i % NQ, why);
	}
	rcu_callbacks_exit();
}

SEEDS_TEST(callbacks, run_in_order_after_grace_period, in_order_after_gp, NQ + 1, FORCED)

/* blimit 4, nine ready callbacks on CPU 3: passes of 4, 4, 1. */
static void blimit_passes(void *arg)
{
	static struct rec_cb cbs[9];
	const int want[] = { 4, 8, 9 };

	(void)arg;
	lab6_begin();
	rcu_set_blimit(4);
	queue_ready_held(3, cbs, 9);
	cr_assert_eq(sim_tasks_at_point(pass_point(3)), 1,
		     "rcuc/3 did not stop at \"rcu_cb_pass/3\" with its callbacks ready: begin "
		     "each pass over DONE with rcu_cb_pass_begin() (TODO 3)");
	for (int pass = 0; pass < 3; pass++) {
		int ran = 0;

		sim_step_point(pass_point(3), 1);
		sim_run_until_idle();
		for (int i = 0; i < 9; i++)
			ran += cbs[i].times;
		cr_assert_eq(ran, want[pass], "after pass %d with blimit 4, %d of 9 callbacks had "
			     "run, not %d: at most blimit per pass, each pass begun with "
			     "rcu_cb_pass_begin() (TODO 3)", pass + 1, ran, want[pass]);
	}
	for (int i = 1; i < 9; i++)
		cr_assert_gt(cbs[i].seq, cbs[i - 1].seq, "CPU 3's ready callbacks ran out of order");
	lab6_end();
}

SEEDS_TEST(callbacks, at_most_blimit_per_pass, blimit_passes, 4, ANY_MODE)

static void both_ran_once(struct irq_race *r, long k)
{
	IRQ_RACE_EXPECT_ONCE(r, k);
}

/*
 * callbacks/irq_at_every_access_loses_none: a task on CPU 1 queues a hurried
 * callback; an interrupt that queues another is raised before CPU 1's k-th
 * student access, k = 1, 2, ... (irq_race_sweep(), sim/testlib.h): inside
 * call_rcu_hurry(), inside rcuc/1 moving or taking callbacks. Both run once.
 */
SIM_TEST(callbacks, irq_at_every_access_loses_none, .timeout = 120)
{
	struct sim_config cfg = sim_default_config();
	static struct irq_race r = {
		.cpu = 1, .queue = call_rcu_hurry, .start = rcu_callbacks_init,
		.stop = rcu_callbacks_exit, .api = "call_rcu_hurry()", .lost_why = "TODO 1-3",
		.race_why = "a change to CPU 1's list was made with interrupts on (TODO 2: the "
			    "enqueue; TODO 3: an advance, a dequeue or a ->len update)",
	};

	cfg.nr_cpus = 2;
	sim_boot(&cfg);
	irq_race_sweep(&r, 3000, both_ran_once);
	cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
}
