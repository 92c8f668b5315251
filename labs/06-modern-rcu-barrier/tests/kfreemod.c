/*
 * kfreemod.c - the workbook's module for lab 6 (not the student's): on
 * every CPU it allocates objects and frees each after a grace period,
 * either with kfree_rcu() (nothing of the module runs when the object is
 * freed) or with call_rcu() and a callback of its own. Its exit calls no
 * rcu_barrier(): that is what the tests are about.
 *
 * Rule kept here: the objects are kmalloc()ed with their rcu_head not at
 * their start, so that freeing the rcu_head's address instead of the
 * object's is caught (kfree() of a pointer kmalloc() did not return).
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include "kfreemod_ctl.h"

MODULE_NAME("kfreemod");
MODULE_LICENSE("GPL");

struct kfreemod_obj {
	long payload[3];
	struct rcu_head rh;
};

static void kfreemod_free(struct rcu_head *rh)
{
	kfree(container_of(rh, struct kfreemod_obj, rh));
}

/* On each CPU (cross-call, IRQ context: call_rcu() and kfree_rcu() are fine there). */
static void kfreemod_post(void *unused)
{
	(void)unused;
	for (int i = 0; i < kfreemod_ctl.per_cpu; i++) {
		struct kfreemod_obj *o = kmalloc(sizeof(*o), GFP_ATOMIC);

		o->payload[0] = i;
		if (kfreemod_ctl.own_callback)
			call_rcu(&o->rh, kfreemod_free);
		else
			kfree_rcu(o, rh);
	}
}

static int kfreemod_init(void)
{
	on_each_cpu(kfreemod_post, NULL, 1);
	return 0;
}

static void kfreemod_exit(void)
{
	/* No rcu_barrier(): kfree_rcu() needs none; call_rcu() would. */
}

module_init(kfreemod_init);
module_exit(kfreemod_exit);
