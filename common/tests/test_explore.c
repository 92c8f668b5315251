/*
 * test_explore.c - PCT, exhaustive search and the hung-task watchdog
 * (common/src/explore.c).
 *
 * Rule kept here: each strategy is shown to find a bug that needs a
 * preemption at one exact place, to replay what it found, and to find
 * nothing in the correct version; the watchdog is shown to name a task that
 * waits for good while the others keep running.
 */
#include <stdlib.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "kcsan_student.h"

static struct sim_config explore_config(void)
{
	struct sim_config cfg = sim_forced_config();

	cfg.races = false;      /* the lost update itself is what these look for */
	return cfg;
}

/* How each CPU increments: ks_racy_inc() (a plain c->n++) or ks_locked_inc(). */
typedef void (*inc_fn)(struct ks_counter *c);

struct incr {
	struct ks_counter *c;
	inc_fn inc;
};

static int incr_once(void *arg)
{
	struct incr *in = arg;

	in->inc(in->c);
	return 0;
}

/* Two CPUs increment once each: 1 when an update was lost. */
static int lost_updates;
static int runs;

static void two_increments(void *arg)
{
	struct ks_counter c = { .n = 0 };
	struct incr in = { &c, *(inc_fn *)arg };

	spin_lock_init(&c.lock);
	struct task_struct *a = kthread_run_on_cpu(incr_once, &in, 0, "inc0");
	struct task_struct *b = kthread_run_on_cpu(incr_once, &in, 1, "inc1");

	kthread_stop(a);
	kthread_stop(b);
	runs++;
	if (c.n != 2)
		lost_updates++;
}

SIM_TEST(explore, pct_finds_the_lost_update_and_replays_it)
{
	struct sim_config cfg = explore_config();
	inc_fn inc = ks_racy_inc;
	uint64_t found = 0;

	if (!sim_kcsan_enabled())
		return;
	cfg.sched = SIM_SCHED_PCT;
	cfg.pct_depth = 2;
	cfg.pct_steps = 40;
	for (uint64_t seed = 1; seed <= 40 && !found; seed++) {
		lost_updates = 0;
		cfg.seed = seed;
		sim_boot(&cfg);
		two_increments(&inc);
		cr_assert_eq(sim_halt(), 0);
		if (lost_updates)
			found = seed;
	}
	cr_assert(found, "PCT (depth 2) never preempted c->n++ between its load and store");
	lost_updates = 0;
	cfg.seed = found;
	sim_boot(&cfg);
	two_increments(&inc);
	cr_assert_eq(sim_halt(), 0);
	cr_assert_eq(lost_updates, 1, "seed %llu did not replay the lost update",
		     (unsigned long long)found);
}

SIM_TEST(explore, pct_never_breaks_the_locked_counter)
{
	struct sim_config cfg = explore_config();
	inc_fn inc = ks_locked_inc;

	if (!sim_kcsan_enabled())
		return;
	cfg.sched = SIM_SCHED_PCT;
	cfg.pct_depth = 3;
	cfg.pct_steps = 60;
	lost_updates = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		cfg.seed = seed;
		sim_boot(&cfg);
		two_increments(&inc);
		cr_assert_eq(sim_halt(), 0);
	}
	cr_assert_eq(lost_updates, 0);
}

/* Every interleaving of two_increments() with up to @preemptions; how many. */
static long explore_all(inc_fn inc, int preemptions)
{
	struct sim_config cfg = explore_config();

	unsetenv("WORKBOOK_SCHEDULE");  /* all of them, not one replayed */
	lost_updates = runs = 0;
	return sim_run_exhaustive(&cfg, two_increments, &inc, preemptions);
}

SIM_TEST(explore, exhaustive_visits_the_lost_update)
{
	if (!sim_kcsan_enabled())
		return;
	long n = explore_all(ks_racy_inc, 1);

	cr_assert_eq(n, runs);
	cr_assert_gt(n, 2, "one preemption allows more than two interleavings");
	cr_assert_gt(lost_updates, 0,
		     "%ld interleavings with one preemption, none lost an update", n);
}

SIM_TEST(explore, exhaustive_locked_counter_never_loses)
{
	if (!sim_kcsan_enabled())
		return;
	long n = explore_all(ks_locked_inc, 2);

	cr_assert_gt(n, 10);
	cr_assert_eq(lost_updates, 0, "%d of %ld interleavings lost an update under the lock",
		     lost_updates, n);
}

SIM_TEST(explore, exhaustive_schedule_replays_one_run)
{
	struct sim_config cfg = explore_config();
	inc_fn inc = ks_racy_inc;

	if (!sim_kcsan_enabled())
		return;
	setenv("WORKBOOK_SCHEDULE", "0:1", 1);
	runs = 0;
	cr_assert_eq(sim_run_exhaustive(&cfg, two_increments, &inc, 2), 1);
	unsetenv("WORKBOOK_SCHEDULE");
	cr_assert_eq(runs, 1);
}

/* ---- the hung-task watchdog ----------------------------------------------- */

static int waits_forever(void *arg)
{
	wait_for_completion(arg);
	return 0;
}

static int keeps_busy(void *arg)
{
	(void)arg;
	while (!kthread_should_stop())
		cond_resched();
	return 0;
}

SIM_TEST(watchdog, task_blocked_for_good_is_reported_by_name, .signal = BUG_SIGNAL)
{
	struct sim_config cfg = explore_config();
	static struct completion never;

	cfg.hung_steps = 20000;
	sim_boot(&cfg);
	init_completion(&never);
	sim_expect_bug("hung task: waiter");
	kthread_run_on_cpu(waits_forever, &never, 1, "waiter");
	kthread_run_on_cpu(keeps_busy, NULL, 2, "busy");
	sim_run_until_idle();   /* never idle: "busy" keeps running */
}

static int busy_until(void *arg)
{
	while (!READ_ONCE(*(int *)arg))
		cond_resched();
	return 0;
}

SIM_TEST(watchdog, parallel_msleep_returns_while_cpus_are_busy)
{
	struct sim_config cfg = sim_default_config();
	static int stop;

	cfg.mode = SIM_PARALLEL;
	stop = 0;
	sim_boot(&cfg);
	struct task_struct *k = kthread_run_on_cpu(busy_until, &stop, 1, "busy");

	migrate_to_cpu(0);
	msleep(50);             /* returns although CPU 1 never idles */
	migrate_to_cpu(-1);
	WRITE_ONCE(stop, 1);
	kthread_stop(k);
}
