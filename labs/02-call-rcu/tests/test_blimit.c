/*
 * Lab 2's blimit tests: at most rcu_blimit callbacks per pass, and callbacks
 * queued during a backlog each run once.
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

static int hog_fn(void *arg)
{
	(void)arg;
	sim_point("hog");
	return 0;
}

#define BLIMIT_N 10000

SIM_TEST(blimit, one_pass_invokes_blimit, .timeout = 120,
	 .description = "with blimit 10 and 10^4 ready callbacks, one pass invokes 10 "
			"and the rest wait for later passes")
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *hogs[3];
	struct item *items;
	long passes;

	cfg.max_steps = 20000000;
	sim_boot(&cfg);
	items = kmalloc(BLIMIT_N * sizeof(*items), GFP_KERNEL);
	invoked_order = NULL;
	times_invoked = NULL;
	nr_invoked = 0;
	rcu_callbacks_init();
	rcu_set_blimit(10);
	sim_hold_point("rcu_cb_pass");

	/* Every other CPU is busy, so all 10^4 callbacks are queued before the
	 * kthread can take any: they all become ready after one grace period. */
	sim_hold_point("hog");
	hogs[0] = kthread_run_on_cpu(hog_fn, NULL, 0, "hog/0");
	hogs[1] = kthread_run_on_cpu(hog_fn, NULL, 2, "hog/2");
	hogs[2] = kthread_run_on_cpu(hog_fn, NULL, 3, "hog/3");
	sim_run_until_idle();
	migrate_to_cpu(1);
	for (int i = 0; i < BLIMIT_N; i++) {
		items[i].idx = i;
		call_rcu(&items[i].rcu, item_cb);
	}
	sim_release_point("hog");
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point("rcu_cb_pass"), 1,
		     "the kthread should wait at the point \"rcu_cb_pass\" before its "
		     "first pass (rcu_cb_pass_begin() starts every pass)");
	cr_assert_eq(nr_invoked, 0, "%d callbacks were invoked before any pass",
		     nr_invoked);

	passes = sim_point_passes("rcu_cb_pass");
	sim_step_point("rcu_cb_pass", 1);
	sim_run_until_idle();
	cr_assert_eq(sim_point_passes("rcu_cb_pass"), passes + 1);
	cr_assert_eq(nr_invoked, 10,
		     "one pass invoked %d callbacks; with blimit 10 it must invoke "
		     "exactly 10 and leave the other %d ready callbacks for later passes",
		     nr_invoked, BLIMIT_N - 10);
	cr_assert_eq(sim_tasks_at_point("rcu_cb_pass"), 1,
		     "after a pass with callbacks left over, the kthread must start "
		     "another pass");

	/* Lab 3's point: grace periods go on while passes lag behind them, so
	 * back-to-back synchronize_rcu() calls do not mean "callbacks done". */
	for (int i = 0; i < 3; i++)
		synchronize_rcu();
	cr_assert_eq(nr_invoked, 10,
		     "three synchronize_rcu() calls with the next pass held: %d "
		     "callbacks invoked, expected still 10 (passes must not be tied to "
		     "grace periods; start each pass with rcu_cb_pass_begin())",
		     nr_invoked);

	sim_step_point("rcu_cb_pass", 1);
	sim_run_until_idle();
	cr_assert_eq(nr_invoked, 20, "the second pass invoked %d callbacks, not 10",
		     nr_invoked - 10);

	rcu_set_blimit(100);
	sim_step_point("rcu_cb_pass", 1);
	sim_run_until_idle();
	cr_assert_eq(nr_invoked, 120,
		     "after rcu_set_blimit(100), a pass invoked %d callbacks, not 100",
		     nr_invoked - 20);

	sim_release_point("rcu_cb_pass");
	sim_run_until_idle();
	cr_assert_eq(nr_invoked, BLIMIT_N, "%d of %d callbacks invoked", nr_invoked,
		     BLIMIT_N);
	cr_assert_geq(sim_point_passes("rcu_cb_pass"), passes + 3 + (BLIMIT_N - 120) / 100,
		      "%ld passes for %d callbacks at most 100 per pass",
		      sim_point_passes("rcu_cb_pass") - passes, BLIMIT_N);
	for (int i = 0; i < 3; i++)
		kthread_stop(hogs[i]);
	rcu_callbacks_exit();
	kfree(items);
}

/*
 * Callbacks queued while the kthread still works through a backlog: blimit
 * 1, passes held, and one more callback queued after every pass. Whatever
 * the kthread does between two passes (a design that goes back round its
 * loop after each pass splices an empty rcu_next, and may wait for a grace
 * period with nothing in rcu_wait), each callback runs exactly once.
 */
#define BACKLOG_N 4
#define BACKLOG_LATE 8
#define BACKLOG_ALL (BACKLOG_N + BACKLOG_LATE)

static void scenario_backlog(void *arg)
{
	static struct item items[BACKLOG_ALL];
	static int times[BACKLOG_ALL];
	int n;

	(void)arg;
	memset(times, 0, sizeof(times));
	invoked_order = NULL;
	times_invoked = times;
	nr_invoked = nr_duplicates = 0;
	rcu_callbacks_init();
	rcu_set_blimit(1);
	sim_hold_point("rcu_cb_pass");
	/* From rcuo/0's own CPU 0, which a task keeps until it sleeps: the whole
	 * backlog is queued before the kthread takes any of it, on every seed. */
	migrate_to_cpu(0);
	for (n = 0; n < BACKLOG_N; n++) {
		items[n].idx = n;
		call_rcu(&items[n].rcu, item_cb);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	for (int k = 0; n < BACKLOG_ALL; k++, n++) {
		sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
		trace_mark("one more callback while the backlog is invoked");
		migrate_to_cpu(1 + k % 3);
		items[n].idx = n;
		call_rcu(&items[n].rcu, item_cb);
		migrate_to_cpu(-1);
		sim_run_until_idle();
	}
	sim_release_point("rcu_cb_pass");
	sim_run_until_idle();
	for (int i = 0; i < BACKLOG_ALL; i++)
		cr_assert_eq(times[i], 1,
			     "seed %llu: callback %d of %d was invoked %d times, not once: %s, "
			     "with blimit 1 and one pass let through at a time. A callback lost "
			     "between the lists: when the list spliced is empty, does "
			     "cblist_splice() leave the other exactly as it was, its tail "
			     "included, and when it is not, does @to's tail end at the last "
			     "callback spliced (TODO 2)? Does the kthread wait for a grace period with "
			     "nothing in rcu_wait (TODO 4)?", seed(), i, BACKLOG_ALL, times[i],
			     i < BACKLOG_N ? "queued before the kthread began its backlog" :
			     "queued after a pass, while ready callbacks were still left");
	rcu_set_blimit(10);
	rcu_callbacks_exit();
	times_invoked = NULL;
}

SIM_TEST_SEEDS(blimit, callbacks_queued_during_a_backlog_run_once, scenario_backlog,
	       .description = "blimit 1, passes one at a time, a callback queued after each "
			      "pass: each runs exactly once")
