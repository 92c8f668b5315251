/*
 * Lab 2's order tests: callbacks run in the order queued, each exactly once,
 * whatever a fresh rcu_head held.
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

#define FIFO_N 200
/* A callback queued and never invoked went missing in a list operation. */
#define LOST_BETWEEN_LISTS "callbacks lost between call_rcu() and their invocation: " \
	"does every list operation leave its list's tail at its last callback (TODO 1: " \
	"the enqueue; TODO 2: a splice onto a list that is not empty)?"

static void scenario_fifo(void *arg)
{
	struct item *items = kmalloc(FIFO_N * sizeof(*items), GFP_KERNEL);

	(void)arg;
	invoked_order = kmalloc((FIFO_N + 1) * sizeof(int), GFP_KERNEL);
	times_invoked = NULL;
	nr_invoked = 0;
	nr_bypassed = 0;
	rcu_callbacks_init();
	queue_items_in_bursts(items, FIFO_N, 20);
	cr_assert_eq(nr_invoked, FIFO_N, "seed %llu: %d of %d callbacks invoked: %s",
		     seed(), nr_invoked, FIFO_N, nr_invoked < FIFO_N ? LOST_BETWEEN_LISTS :
		     "some ran twice: does a splice leave @from empty (TODO 2)?");
	cr_assert_eq(nr_bypassed, 0, "seed %llu: %d of %d callbacks were called as "
		     "head->func(head), not through rcu_invoke_callback(), which traces each "
		     "invocation and, from lab 3 on, catches a callback into an unloaded module "
		     "(TODO 5)", seed(), nr_bypassed, FIFO_N);
	for (int i = 0; i < FIFO_N; i++)
		cr_assert_eq(invoked_order[i], i,
			     "seed %llu: invocation %d was callback %d: callbacks must be "
			     "invoked in the order call_rcu() queued them (FIFO); rcu_barrier() "
			     "in lab 3 relies on it", seed(), i, invoked_order[i]);
	rcu_callbacks_exit();
	kfree(invoked_order);
	invoked_order = NULL;
	kfree(items);
}

SIM_TEST_SEEDS(order, fifo, scenario_fifo,
	       .description = "callbacks are invoked in the order call_rcu() queued them")

#define MANY 100000

SIM_TEST(order, exactly_once_100000, .timeout = 240,
	 .description = "10^5 callbacks, each invoked exactly once")
{
	struct sim_config cfg = sim_default_config();
	struct item *items;

	cfg.max_steps = 100000000;
	cfg.trace = false;
	/* a count over 10^5 callbacks: interleaving each access is the job of the
	 * other tests; here it would cost seconds of the edit loop */
	cfg.kcsan = false;
	sim_boot(&cfg);
	items = kmalloc(MANY * sizeof(*items), GFP_KERNEL);
	times_invoked = kzalloc(MANY * sizeof(int), GFP_KERNEL);
	invoked_order = NULL;
	nr_invoked = nr_duplicates = 0;
	rcu_callbacks_init();
	queue_items_in_bursts(items, MANY, 5000);
	cr_assert_eq(nr_duplicates, 0, "%d callbacks were invoked more than once",
		     nr_duplicates);
	for (int i = 0; i < MANY; i++)
		cr_assert_eq(times_invoked[i], 1,
			     "callback %d of %d was invoked %d times, not exactly once%s%s",
			     i, MANY, times_invoked[i], times_invoked[i] ? "" : ": ",
			     times_invoked[i] ? "" : LOST_BETWEEN_LISTS);
	cr_assert_eq(nr_invoked, MANY);
	rcu_callbacks_exit();
	kfree(times_invoked);
	times_invoked = NULL;
	kfree(items);
}

/* A task that keeps its CPU, held at "hog", until released. */

/* ---- order/fresh_rcu_heads_hold_garbage ---------------------------------- */

SIM_TEST(order, fresh_rcu_heads_hold_garbage,
	 .description = "call_rcu() on an rcu_head whose ->next holds garbage (fresh from "
			"kmalloc(), or left from an earlier use) queues it correctly")
{
	struct foo *p[3];

	sim_boot(NULL);
	scenario_start();
	migrate_to_cpu(2);
	for (int i = 0; i < 3; i++) {
		p[i] = foo_new(i);
		/* what kmalloc() may hand back: a stale pointer */
		p[i]->rcu.next = (struct rcu_head *)LIST_POISON1;
		call_rcu(&p[i]->rcu, foo_reclaim);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 3,
		     "three callbacks on rcu_heads whose ->next held garbage: %d invoked, not "
		     "3: the last one queued kept its stale ->next, which the queue then "
		     "followed (TODO 1, cblist_enqueue())", nr_reclaimed);
	rcu_callbacks_exit();
}
