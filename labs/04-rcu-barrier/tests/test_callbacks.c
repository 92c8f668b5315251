/*
 * test_callbacks.c - per-CPU callback queues: where, in what order, after
 * what, and how many per pass.
 */
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "lab4_util.h"

#define PER_CPU_CBS 5

/* Callbacks run on the CPU that queued them, in queue order, after a grace period. */
static void queuing_cpu_in_order(void *arg)
{
	static struct rec_cb cbs[4][PER_CPU_CBS];
	int ncpu = 4; /* CPU 4 holds the reader */

	(void)arg;
	rec_cb_reset();
	/* A kthread started earlier, as a kernel has many: an unbound callback
	 * kthread (kthread_run()) would not land on its own CPU by luck. */
	start_an_earlier_kthread();
	rcu_callbacks_init();
	/* A reader on CPU 4 that began before every call_rcu() below. */
	struct task_struct *reader = reader_held_at(4, "lab4_reader");

	cr_assert_eq(sim_tasks_at_point("lab4_reader"), 1);
	for (int i = 0; i < PER_CPU_CBS; i++)
		for (int cpu = 0; cpu < ncpu; cpu++) {
			rec_cb_init(&cbs[cpu][i], cpu);
			sim_call_rcu_on(cpu, &cbs[cpu][i].rh, rec_cb_func);
		}
	sim_run_until_idle();
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int i = 0; i < PER_CPU_CBS; i++)
			cr_assert_eq(cbs[cpu][i].times, 0,
				     "a callback queued on CPU %d ran while a reader that began "
				     "before call_rcu() was still inside: each batch must wait for "
				     "synchronize_rcu() before it is invoked (TODO 2)", cpu);
	reader_let_go(reader, "lab4_reader");
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int i = 0; i < PER_CPU_CBS; i++) {
			struct rec_cb *c = &cbs[cpu][i];

			cr_assert_eq(c->times, 1, "callback %d queued on CPU %d was invoked %d "
				     "times (expected once): check call_rcu() (TODO 1) and that "
				     "CPU %d's kthread invokes its whole queue (TODO 2, 3)",
				     i, cpu, c->times, cpu);
			cr_assert_eq(c->ran_on, cpu, "callback %d queued on CPU %d ran on CPU %d: "
				     "each CPU's callbacks are invoked by that CPU's own kthread, "
				     "bound to it (kthread_run_on_cpu(), TODO 3; not kthread_run(), "
				     "which starts it on whichever CPU is next) (TODO 1, 3)",
				     i, cpu, c->ran_on);
			if (i > 0)
				cr_assert_gt(c->seq, cbs[cpu][i - 1].seq,
					     "callbacks queued on CPU %d ran out of order (%d before "
					     "%d): a per-CPU queue is FIFO, tail insertion (TODO 1)",
					     cpu, i, i - 1);
		}
	rcu_callbacks_exit();
}

SIM_TEST(callbacks, run_on_queuing_cpu_in_order_after_gp)
{
	struct sim_config cfg = sim_forced_config();

	cfg.nr_cpus = 5;
	sim_run_seeds(&cfg, queuing_cpu_in_order, NULL);
}

/* At most blimit callbacks per pass, each pass announced at "rcu_cb_pass/N". */
static void blimit_per_pass(void *arg)
{
	static struct rec_cb cbs[10];
	int done;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	rcu_set_blimit(3);
	sim_hold_point("rcu_cb_pass/1");
	/* One visit to CPU 1: its kthread cannot run meanwhile, so it takes one batch of 10. */
	migrate_to_cpu(1);
	for (int i = 0; i < 10; i++) {
		rec_cb_init(&cbs[i], 1);
		call_rcu(&cbs[i].rh, rec_cb_func);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point("rcu_cb_pass/1"), 1,
		     "CPU 1's kthread did not stop at the point \"rcu_cb_pass/1\" before its "
		     "first pass: begin every pass with rcu_cb_pass_begin() (TODO 2)");
	for (int pass = 1; pass <= 4; pass++) {
		sim_step_point("rcu_cb_pass/1", 1);
		sim_run_until_idle();
		done = 0;
		for (int i = 0; i < 10; i++)
			done += cbs[i].times;
		cr_assert_eq(done, pass < 4 ? 3 * pass : 10,
			     "after %d pass(es) with blimit 3, %d of 10 callbacks had run "
			     "(expected %d): invoke at most blimit callbacks per pass, and begin "
			     "each pass with rcu_cb_pass_begin() (TODO 2)",
			     pass, done, pass < 4 ? 3 * pass : 10);
	}
	sim_release_point("rcu_cb_pass/1");
	sim_run_until_idle();
	cr_assert_geq(sim_point_passes("rcu_cb_pass"), 4,
		      "each pass must begin with rcu_cb_pass_begin(), which also passes the "
		      "common point \"rcu_cb_pass\" (TODO 2)");
	for (int i = 1; i < 10; i++)
		cr_assert_gt(cbs[i].seq, cbs[i - 1].seq, "CPU 1's callbacks ran out of order");
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(callbacks, at_most_blimit_per_pass, blimit_per_pass)

static void both_ran_once(struct irq_race *r, long k)
{
	IRQ_RACE_EXPECT_ONCE(r, k);
}

/*
 * callbacks/irq_at_every_access_loses_none: on each CPU in turn, a task
 * queues one callback; an interrupt that queues another is raised before
 * that CPU's k-th student access, for k = 1, 2, ... until it no longer
 * comes (irq_race_sweep(), sim/testlib.h). Wherever it lands (inside
 * call_rcu(), inside the kthread taking its queue), both run. One boot
 * serves a CPU's whole sweep (a boot per k is slow under Valgrind).
 */
SIM_TEST(callbacks, irq_at_every_access_loses_none, .timeout = 120)
{
	struct sim_config cfg = sim_default_config();
	static struct irq_race r = {
		.queue = call_rcu, .start = rcu_callbacks_init, .stop = rcu_callbacks_exit,
		.api = "call_rcu()",
		.lost_why = "call_rcu() queues on this CPU (TODO 1), whose kthread invokes it "
			    "(TODOs 2, 3)",
		.race_why = "that CPU's queue was updated with interrupts on (call_rcu(), TODO 1, "
			    "or the kthread's take of the queue, TODO 2)",
	};

	for (r.cpu = 0; r.cpu < cfg.nr_cpus; r.cpu++) {
		sim_boot(&cfg);
		irq_race_sweep(&r, 2000, both_ran_once);
		cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
	}
}

/*
 * callbacks/queued_during_grace_period_waits_for_next: CPU 1's kthread is
 * in the grace period of callback A (a reader on CPU 4 holds it up) when a
 * reader starts on CPU 5 and callback C is queued on CPU 1. C may run only
 * after a grace period that began after it was queued: one that waits for
 * the reader on CPU 5.
 */
static void queued_during_gp(void *arg)
{
	static struct rec_cb a, c;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	rec_cb_init(&a, 1);
	rec_cb_init(&c, 1);
	struct task_struct *r1 = reader_held_at(4, "old-reader");

	sim_call_rcu_on(1, &a.rh, rec_cb_func);
	sim_run_until_idle();
	cr_assert_eq(a.times, 0, "seed %llu: a callback ran while a reader that began before "
		     "call_rcu() was still inside (TODO 2: the grace period before invoking)",
		     (unsigned long long)sim_seed());
	struct task_struct *r2 = reader_held_at(5, "new-reader");

	sim_call_rcu_on(1, &c.rh, rec_cb_func);
	reader_let_go(r1, "old-reader");
	cr_assert_eq(a.times, 1, "seed %llu: the first callback did not run once its only "
		     "reader left (TODO 2)", (unsigned long long)sim_seed());
	cr_assert_eq(c.times, 0,
		     "seed %llu: a callback queued on CPU 1 while CPU 1's kthread was waiting "
		     "for an earlier batch's grace period ran when that grace period ended, "
		     "with a reader that began before its call_rcu() still inside (CPU 5): "
		     "it was in the batch of a grace period that began before it was queued "
		     "(TODO 2)",
		     (unsigned long long)sim_seed());
	reader_let_go(r2, "new-reader");
	cr_assert_eq(c.times, 1, "seed %llu: the second callback ran %d times once every "
		     "reader left, not once (TODO 2)", (unsigned long long)sim_seed(), c.times);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS_ON(callbacks, queued_during_grace_period_waits_for_next, queued_during_gp, 6)
