/*
 * srcumod.c - the workbook's module for lab 5 (not the student's): it queues
 * call_srcu() callbacks whose function lives in the module on every CPU,
 * and its exit waits either for a grace period only (wrong: the callbacks
 * may still be queued) or for the callbacks themselves (srcu_barrier()).
 *
 * Rule kept here: the callbacks' memory is kmalloc()ed, not the module's
 * own, so that a late callback is caught as a call into unloaded code, by
 * name, and not as a read of unmapped data.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/srcu.h>
#include "srcumod_ctl.h"

MODULE_NAME("srcumod");
MODULE_LICENSE("GPL");

static void srcumod_free(struct rcu_head *rh)
{
	kfree(rh);
}

/* On each CPU (cross-call, IRQ context: call_srcu() is fine there). */
static void srcumod_post(void *unused)
{
	(void)unused;
	for (int i = 0; i < srcumod_ctl.per_cpu; i++) {
		struct rcu_head *rh = kmalloc(sizeof(*rh), GFP_ATOMIC);

		call_srcu(srcumod_ctl.ssp, rh, srcumod_free);
	}
}

static int srcumod_init(void)
{
	on_each_cpu(srcumod_post, NULL, 1);
	return 0;
}

static void srcumod_exit(void)
{
	if (srcumod_ctl.exit_barrier)
		srcu_barrier(srcumod_ctl.ssp);
	else
		synchronize_srcu(srcumod_ctl.ssp);
}

module_init(srcumod_init);
module_exit(srcumod_exit);
