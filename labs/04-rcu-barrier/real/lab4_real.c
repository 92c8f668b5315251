// SPDX-License-Identifier: GPL-2.0
/*
 * lab4_real.c - lab 4's checks in a real module (real runs only): the
 * student's tree_rcu.c, per-CPU callbacks and rcu_barrier() under names of
 * their own (real.h), on the kernel's synchronize_rcu(), kthreads and
 * cross-CPU calls.
 *
 * Rule kept here: each check prints one verdict line (rculabs_check.h) and
 * stops the run at the first failure. They check on real CPUs what the
 * simulation's tests check: a callback waits for a reader that began
 * before it was queued; rcu_barrier() with nothing queued returns; it
 * returns only after every callback queued before it, on every CPU, has
 * run, called on either CPU; two barriers at once, from both CPUs, both
 * return, each after what was queued before it. What a failed check leaves queued is
 * never freed (the guest powers off).
 */
#include <linux/slab.h>
#include <linux/smp.h>
#include "rculabs_check.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RCU Labs: the student's rcu_barrier() on a real kernel");

#define NR_EACH 1000  /* callbacks queued on each CPU before a barrier */
#define NR_FEW 10     /* ... on the other CPU, when one CPU is to finish first */
#define SLOW_US 100   /* what each spends: 100 ms a CPU, grace periods' worth */
#define WAIT_MS 10000 /* how long a barrier may take */

struct item {
	struct rcu_head rh;
	atomic_t runs;
};

static atomic_t invoked;

static void slow_cb(struct rcu_head *rh)
{
	udelay(SLOW_US);
	atomic_inc(&container_of(rh, struct item, rh)->runs);
	atomic_inc(&invoked);
}

static int busy_cpu = -1; /* the CPU with NR_EACH callbacks, or -1: both */

/* On the CPU this runs on (a cross-CPU call: IRQ context), NR_EACH
 * callbacks, or NR_FEW if another CPU is the busy one. */
static void queue_here(void *items)
{
	int cpu = raw_smp_processor_id();
	struct item *it = (struct item *)items + cpu * NR_EACH;
	int n = busy_cpu < 0 || cpu == busy_cpu ? NR_EACH : NR_FEW;

	for (int i = 0; i < n; i++)
		call_rcu(&it[i].rh, slow_cb);
}

/* Callbacks of @items not yet run. */
static int not_run(struct item *items, int n)
{
	int left = 0;

	for (int i = 0; i < n; i++)
		left += !atomic_read(&items[i].runs);
	return left;
}

struct barrier_call {
	int done;
};

static int barrier_fn(void *arg)
{
	struct barrier_call *b = arg;

	rcu_barrier();
	WRITE_ONCE(b->done, 1);
	return 0;
}

/* rcu_barrier() in a kthread on @cpu; whether it returned within WAIT_MS. */
static bool barrier_on(int cpu, struct barrier_call *b)
{
	if (IS_ERR(kthread_run_on_cpu(barrier_fn, b, cpu, "barrier/%u")))
		return false;
	return wait_until(READ_ONCE(b->done), WAIT_MS);
}

static bool check_empty(void)
{
	struct barrier_call b = { 0 };

	RUNNING("empty:");
	if (!barrier_on(0, &b))
		return FAIL("empty: rcu_barrier() with no callback queued did not return "
			    "(%d s): does it wait for a marker on every CPU, each counted "
			    "before it can run (TODO 4)?\n", WAIT_MS / 1000);
	return PASS("empty: rcu_barrier() with no callback queued returned\n");
}

/*
 * Slow callbacks on one CPU, a few on the other, the barrier called on
 * either: a barrier that forgets a CPU, or queues a marker on the wrong
 * one, returns while the busy CPU is still at work, in one of the four
 * (the simulation forces that order; a real machine needs the load).
 */
static bool check_waits(int caller, int busy)
{
	struct item *items = kcalloc(2 * NR_EACH, sizeof(*items), GFP_KERNEL);
	int queued = NR_EACH + NR_FEW, left;
	struct barrier_call b = { 0 };

	RUNNING("waits on CPU %d, busy CPU %d:", caller, busy);
	if (!items)
		return FAIL("waits on CPU %d, busy CPU %d: out of memory\n", caller, busy);
	busy_cpu = busy;
	on_each_cpu(queue_here, items, 1);
	if (!barrier_on(caller, &b))
		return FAIL("waits on CPU %d, busy CPU %d: rcu_barrier() did not return (%d s) "
			    "with %d callbacks queued on CPU %d and %d on CPU %d\n", caller,
			    busy, WAIT_MS / 1000, NR_EACH, busy, NR_FEW, !busy);
	left = not_run(items, 2 * NR_EACH) - (NR_EACH - NR_FEW);
	if (left)
		return FAIL("waits on CPU %d, busy CPU %d: rcu_barrier() returned while %d of "
			    "the %d callbacks queued before it had not run (%d on CPU %d, %d on "
			    "CPU %d): does each CPU's marker go in behind that CPU's callbacks "
			    "(call_rcu() on that CPU, TODO 1, from a cross-call that runs there), "
			    "and does the barrier wait until the last marker has run (TODO 4)?\n",
			    caller, busy, left, queued, NR_EACH, busy, NR_FEW, !busy);
	kfree(items);
	return PASS("waits on CPU %d, busy CPU %d: rcu_barrier() returned after all %d "
		    "callbacks queued before it had run\n", caller, busy, queued);
}

static bool check_concurrent(void)
{
	struct item *items = kcalloc(2 * NR_EACH, sizeof(*items), GFP_KERNEL);
	struct barrier_call b0 = { 0 }, b1 = { 0 };
	bool both;
	int left;

	RUNNING("concurrent:");
	if (!items)
		return FAIL("concurrent: out of memory\n");
	busy_cpu = -1;
	on_each_cpu(queue_here, items, 1);
	if (IS_ERR(kthread_run_on_cpu(barrier_fn, &b0, 0, "barrier/%u")))
		return FAIL("concurrent: no kthread\n");
	both = barrier_on(1, &b1) && wait_until(READ_ONCE(b0.done), WAIT_MS);
	if (!both)
		return FAIL("concurrent: of two rcu_barrier() calls at once, on CPU 0 and CPU 1, "
			    "%s did not return (%d s): one barrier at a time (TODO 4)?\n",
			    READ_ONCE(b0.done) ? "CPU 1's" : READ_ONCE(b1.done) ? "CPU 0's" :
			    "neither", WAIT_MS / 1000);
	left = not_run(items, 2 * NR_EACH);
	if (left)
		return FAIL("concurrent: two rcu_barrier() calls at once returned while %d of "
			    "the %d callbacks queued before them had not run\n", left,
			    2 * NR_EACH);
	kfree(items);
	return PASS("concurrent: two rcu_barrier() calls at once, on both CPUs, each "
		    "returned after the %d callbacks queued before them had run\n", 2 * NR_EACH);
}

static int __init lab4_real_init(void)
{
	rcu_callbacks_init();
	/* the first failure ends the run */
	if (rculabs_check_grace_period("does the CPU's kthread wait for synchronize_rcu() "
				       "between taking its queue and invoking it (TODO 2)?",
				       "is it queued on this CPU's list (TODO 1), and does this "
				       "CPU's kthread invoke it (TODO 2, 3)?") &&
	    check_empty() && check_waits(1, 0) && check_waits(0, 1) && check_waits(0, 0) &&
	    check_waits(1, 1))
		check_concurrent();
	return 0;
}

static void __exit lab4_real_exit(void)
{
	rcu_callbacks_exit();
}

module_init(lab4_real_init);
module_exit(lab4_real_exit);
