// SPDX-License-Identifier: GPL-2.0
/*
 * rculabs_flood.c - slow RCU callbacks queued on one CPU (the real runs' load).
 *
 * Rule kept here: this module makes a race likely without touching the code
 * under test. Loaded on CPU n, it queues nr callbacks there, each spending us
 * microseconds: every callback queued on CPU n after it (the module under
 * test's last ones) is invoked only once these have run, well after one grace
 * period. The flood's own exit waits for them (rcu_barrier()), as a module
 * must; the runs power off without unloading it anyway.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/delay.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RCU Labs: slow callbacks queued on the loading CPU");

static int nr = 5000;
module_param(nr, int, 0444);
MODULE_PARM_DESC(nr, "how many callbacks to queue");
static int us = 20;
module_param(us, int, 0444);
MODULE_PARM_DESC(us, "how long each callback spends, in microseconds");

static void flood_cb(struct rcu_head *head)
{
	udelay(us);
	kfree(head);
}

static int __init flood_init(void)
{
	for (int i = 0; i < nr; i++) {
		struct rcu_head *head = kmalloc(sizeof(*head), GFP_KERNEL);

		if (!head)
			return -ENOMEM;
		call_rcu(head, flood_cb);
	}
	return 0;
}

static void __exit flood_exit(void)
{
	rcu_barrier();
}

module_init(flood_init);
module_exit(flood_exit);
