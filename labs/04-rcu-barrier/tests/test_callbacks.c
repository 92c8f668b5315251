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

static int reader_fn(void *arg)
{
	(void)arg;
	rcu_read_lock();
	sim_point("lab4_reader");
	rcu_read_unlock();
	return 0;
}

/* Callbacks run on the CPU that queued them, in queue order, after a grace period. */
static void queuing_cpu_in_order(void *arg)
{
	static struct rec_cb cbs[4][PER_CPU_CBS];
	int ncpu = 4; /* CPU 4 holds the reader */

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	/* A reader on CPU 4 that began before every call_rcu() below. */
	sim_hold_point("lab4_reader");
	struct task_struct *reader = kthread_run_on_cpu(reader_fn, NULL, 4, "reader");

	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point("lab4_reader"), 1);
	for (int i = 0; i < PER_CPU_CBS; i++)
		for (int cpu = 0; cpu < ncpu; cpu++) {
			rec_cb_init(&cbs[cpu][i], cpu);
			queue_on_cpu(cpu, &cbs[cpu][i].rh, rec_cb_func);
		}
	sim_run_until_idle();
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int i = 0; i < PER_CPU_CBS; i++)
			cr_assert_eq(cbs[cpu][i].times, 0,
				     "a callback queued on CPU %d ran while a reader that began "
				     "before call_rcu() was still inside: each batch must wait for "
				     "synchronize_rcu() before it is invoked (TODO 2)", cpu);
	sim_release_point("lab4_reader");
	sim_run_until_idle();
	kthread_stop(reader);
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int i = 0; i < PER_CPU_CBS; i++) {
			struct rec_cb *c = &cbs[cpu][i];

			cr_assert_eq(c->times, 1, "callback %d queued on CPU %d was invoked %d "
				     "times (expected once): check call_rcu() (TODO 1) and that "
				     "CPU %d's kthread invokes its whole queue (TODO 2, 3)",
				     i, cpu, c->times, cpu);
			cr_assert_eq(c->ran_on, cpu, "callback %d queued on CPU %d ran on CPU %d: "
				     "each CPU's callbacks are invoked by that CPU's own kthread "
				     "(TODO 1, 3)", i, cpu, c->ran_on);
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
	struct sim_config cfg = sim_default_config();

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

SIM_TEST(callbacks, at_most_blimit_per_pass)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, blimit_per_pass, NULL);
}
