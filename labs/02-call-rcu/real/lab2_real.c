// SPDX-License-Identifier: GPL-2.0
/*
 * lab2_real.c - lab 2's checks in a real module (real runs only): the
 * student's call_rcu.c, under names of its own (real.h), on the kernel's
 * synchronize_rcu(), kthreads and interrupts.
 *
 * Rule kept here: each check prints one verdict line, "RCULABS: PASS ..." or
 * "RCULABS: FAIL ...", and waits for nothing without a bound. They check on
 * real CPUs what the simulation's tests check: a callback waits for a reader
 * that began before it was queued; every callback queued, by tasks and by
 * interrupts on both CPUs at once, runs exactly once; callbacks run in the
 * order they were queued. What a failed check leaves queued is never freed
 * (the guest powers off): a lost callback must not become a use after free.
 */
#include <linux/slab.h>
#include <linux/smp.h>
#include "rculabs_check.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RCU Labs: the student's call_rcu() on a real kernel");

#define NR_EACH 2000  /* callbacks each task, and each CPU's interrupts, queue */
#define WAIT_MS 10000 /* how long 8000 queued callbacks may take to run */

struct item {
	struct rcu_head rh;
	int seq;
	atomic_t runs;
};

static atomic_t invoked;

static void count_cb(struct rcu_head *rh)
{
	atomic_inc(&container_of(rh, struct item, rh)->runs);
	atomic_inc(&invoked);
}

/* ---- every callback, from tasks and interrupts, runs exactly once ---- */

static struct item *irq_items;
static atomic_t irq_next, queuers_left = ATOMIC_INIT(2);

/* On the other CPU, in an interrupt: call_rcu() there, maybe while that
 * CPU's task is inside call_rcu() itself. */
static void queue_in_irq(void *unused)
{
	call_rcu(&irq_items[atomic_inc_return(&irq_next) - 1].rh, count_cb);
}

static int queuer(void *arg)
{
	struct item *mine = arg;
	int cpu = raw_smp_processor_id();

	for (int i = 0; i < NR_EACH; i++) {
		call_rcu(&mine[i].rh, count_cb);
		smp_call_function_single(!cpu, queue_in_irq, NULL, 0);
		if (i % 64 == 0)
			cond_resched();
	}
	atomic_dec(&queuers_left);
	return 0;
}

static bool check_irqs(void)
{
	int n = 4 * NR_EACH, lost = 0, twice = 0;
	struct item *task_items = kcalloc(2 * NR_EACH, sizeof(*task_items), GFP_KERNEL);

	RUNNING("from interrupts:");
	irq_items = kcalloc(2 * NR_EACH, sizeof(*irq_items), GFP_KERNEL);
	if (!task_items || !irq_items)
		return FAIL("from interrupts: out of memory\n");
	atomic_set(&invoked, 0);
	for (int cpu = 0; cpu < 2; cpu++)
		kthread_run_on_cpu(queuer, task_items + cpu * NR_EACH, cpu, "queuer/%u");
	/* every call_rcu() made, by tasks and interrupts; then every callback run */
	wait_until(!atomic_read(&queuers_left) && atomic_read(&irq_next) == 2 * NR_EACH,
		   WAIT_MS);
	wait_until(atomic_read(&invoked) >= n, WAIT_MS);
	for (int i = 0; i < 2 * NR_EACH; i++) {
		int t = atomic_read(&task_items[i].runs), q = atomic_read(&irq_items[i].runs);

		lost += (t == 0) + (q == 0);
		twice += (t > 1) + (q > 1);
	}
	if (lost || twice)
		return FAIL("from interrupts: of %d callbacks queued by a task "
			    "and by interrupts on each CPU at once, %d never ran and %d ran "
			    "more than once: is every segment changed only under rcu_cb_lock, "
			    "taken with interrupts off (TODO 3: call_rcu(); TODO 4, 5: the "
			    "kthread's takes), and does each list operation leave its tail "
			    "right (TODO 1, 2)?\n", n, lost, twice);
	kfree(task_items);
	kfree(irq_items);
	return PASS("from interrupts: %d callbacks queued by tasks and "
		    "interrupts on both CPUs at once each ran once\n", n);
}

/* ---- callbacks run in the order queued ------------------------------ */

static int order_last = -1, order_bad;

static void order_cb(struct rcu_head *rh)
{
	int seq = container_of(rh, struct item, rh)->seq;

	order_bad += seq != order_last + 1;
	order_last = seq;
	atomic_inc(&invoked);
}

static bool check_order(void)
{
	struct item *items = kcalloc(NR_EACH, sizeof(*items), GFP_KERNEL);

	RUNNING("order:");
	if (!items)
		return FAIL("order: out of memory\n");
	atomic_set(&invoked, 0);
	for (int i = 0; i < NR_EACH; i++) {
		items[i].seq = i;
		call_rcu(&items[i].rh, order_cb);
		if (i % 100 == 0)
			msleep(1);  /* let grace periods end between them */
	}
	if (!wait_until(atomic_read(&invoked) >= NR_EACH, WAIT_MS))
		return FAIL("order: %d of %d callbacks ran\n",
			    atomic_read(&invoked), NR_EACH);
	if (order_bad)
		return FAIL("order: %d callbacks ran out of the order they were "
			    "queued in: is each segment appended at the tail of the next (TODO "
			    "1, 2)?\n", order_bad);
	kfree(items);
	return PASS("order: %d callbacks ran in the order queued\n", NR_EACH);
}

static int __init lab2_real_init(void)
{
	rcu_callbacks_init();
	/* in the order the lab builds them; the first failure ends the run */
	if (rculabs_check_grace_period("does the kthread wait for synchronize_rcu() between "
				       "taking a callback off rcu_next and invoking it (TODO 4, 6)?",
				       "is it queued, and does the kthread invoke it (TODO 3-7)?") &&
	    check_irqs())
		check_order();
	return 0;
}

static void __exit lab2_real_exit(void)
{
	rcu_callbacks_exit();
}

module_init(lab2_real_init);
module_exit(lab2_real_exit);
