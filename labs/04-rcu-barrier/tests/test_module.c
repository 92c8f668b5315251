/*
 * test_module.c - lab 3's module, unloaded with lab 4's per-CPU barrier:
 * its writer kthread, its timer (IRQ context) and its self-reposting
 * callbacks queue on several CPUs' queues; when rmmod() returns every one of
 * them must have run, and nothing may call into the module afterwards.
 * Also a parallel-mode churn: load and unload in a loop while other CPUs
 * queue and barrier, bounded by iteration counts.
 */
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <sim/test.h>
#include <sim/testlib.h>
#include "mymod_ctl.h"

struct mymod_ctl mymod_ctl;

/* What the kernel counted for mymod since boot (module_counts()). */
static int queued(void)
{
	return (int)module_counts("mymod").queued;
}

static int invoked(void)
{
	return (int)module_counts("mymod").invoked;
}

static void ctl_reset(bool writer, bool timer, int reposters)
{
	mymod_ctl = (struct mymod_ctl){ .writer = writer, .writer_cpu = 1, .timer = timer,
					.reposters = reposters };
}

struct unload {
	const char *path;
	int queued_at_unload, invoked_at_unload, ret;
	int done;
};

static int load_thread(void *arg)
{
	struct unload *u = arg;

	u->ret = insmod(u->path);
	return 0;
}

static int rmmod_thread(void *arg)
{
	struct unload *u = arg;

	u->ret = rmmod("mymod");
	u->queued_at_unload = queued();
	u->invoked_at_unload = invoked();
	WRITE_ONCE(u->done, 1);
	return 0;
}

static void unload_cleanly(void *arg)
{
	struct unload u = { .path = arg };

	ctl_reset(true, true, 3);
	rcu_callbacks_init();
	rcu_set_blimit(2);
	kthread_stop(kthread_run_on_cpu(load_thread, &u, 2, "insmod"));
	cr_assert_eq(u.ret, 0, "insmod(mymod) failed: %d", u.ret);
	/* No sim_run_until_idle() while the module runs: its self-reposting
	 * callbacks never let the kernel go idle (a grace period with every
	 * other CPU idle takes no time). Time moves with sim_advance_jiffies(). */
	for (int j = 0; j < 6; j++)
		sim_advance_jiffies(1);
	cr_assert_gt(queued(), 0, "mymod queued no callback: nothing tested");
	struct task_struct *k = kthread_run_on_cpu(rmmod_thread, &u, 3, "rmmod");

	kthread_stop(k);
	cr_assert_eq(u.ret, 0, "rmmod(\"mymod\") failed: %d", u.ret);
	cr_assert_eq(u.invoked_at_unload, u.queued_at_unload,
		     "when rmmod(\"mymod\") returned (its code unmapped), only %d of the %d "
		     "callbacks it had queued on the per-CPU queues had run: rcu_barrier() "
		     "must wait for a marker on every CPU (TODO 4)",
		     u.invoked_at_unload, u.queued_at_unload);
	/* Nothing may call into the unloaded module later (a BUG if it does). */
	for (int j = 0; j < 5; j++) {
		sim_advance_jiffies(1);
		sim_run_until_idle();
	}
	cr_assert_eq(invoked(), queued());
	rcu_callbacks_exit();
}

SIM_TEST(module, lab3_mymod_unloads_cleanly)
{
	sim_run_seeds(NULL, unload_cleanly, MODULE_PATH_mymod);
}

/* ---- parallel mode: churn ---- */

#define CHURN_LOADS 4
#define CHURN_CBS 150

struct queuer {
	atomic_t freed;
	int early;
};

static int queuer_fn(void *arg)
{
	struct queuer *q = arg;

	for (int i = 1; i <= CHURN_CBS; i++) {
		call_rcu(&freeme_alloc(&q->freed)->rh, freeme_func);
		if (i % 50 == 0) {
			rcu_barrier();
			if (atomic_read(&q->freed) != i)
				q->early++;
		}
		if (i % 7 == 0)
			schedule();
	}
	return 0;
}

struct churn {
	int loads, bad_ret, unclean;
};

static int churn_fn(void *arg)
{
	struct churn *c = arg;

	for (int i = 0; i < CHURN_LOADS; i++) {
		ctl_reset(i % 2 == 0, true, 2);
		if (insmod(MODULE_PATH_mymod) != 0) {
			c->bad_ret++;
			continue;
		}
		/* Parallel mode: no virtual time passes while tasks run; let the
		 * module's writer and reposting callbacks work a little. */
		for (int j = 0; j < 20; j++)
			schedule();
		if (rmmod("mymod") != 0)
			c->bad_ret++;
		if (invoked() != queued())
			c->unclean++;
		c->loads++;
	}
	return 0;
}

static void parallel_churn(void *arg)
{
	static struct queuer q[2];
	struct churn c = { 0 };
	struct task_struct *k[3];

	(void)arg;
	rcu_callbacks_init();
	for (int i = 0; i < 2; i++) {
		atomic_set(&q[i].freed, 0);
		q[i].early = 0;
		k[i] = kthread_run_on_cpu(queuer_fn, &q[i], i, "queuer/%u");
	}
	k[2] = kthread_run_on_cpu(churn_fn, &c, 3, "churn");
	for (int i = 0; i < 3; i++)
		kthread_stop(k[i]);
	cr_assert_eq(c.bad_ret, 0, "insmod()/rmmod() of mymod failed %d time(s)", c.bad_ret);
	cr_assert_eq(c.unclean, 0,
		     "%d of %d unloads of mymod returned before all its callbacks had run",
		     c.unclean, c.loads);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(q[i].early, 0, "CPU %d: rcu_barrier() returned %d time(s) before "
			     "the callbacks queued before it had run", i, q[i].early);
	/* Let the last callbacks run, so that nothing leaks. */
	migrate_to_cpu(2);
	rcu_barrier();
	migrate_to_cpu(-1);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(atomic_read(&q[i].freed), CHURN_CBS);
	rcu_callbacks_exit();
}

SIM_TEST(stress, parallel_module_churn, .timeout = 120)
{
	struct sim_config cfg = sim_default_config();

	cfg.mode = SIM_PARALLEL;
	sim_run_seeds(&cfg, parallel_churn, NULL);
}
