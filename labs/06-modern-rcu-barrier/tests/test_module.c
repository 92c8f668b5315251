/*
 * test_module.c - kfree_rcu() needs no module code when the object is
 * freed: a module that frees with kfree_rcu() only may be unloaded with its
 * frees still queued, and every object is freed later, by the RCU core.
 * The same module freeing with a callback of its own crashes the kernel.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <sim/test.h>
#include "kfreemod_ctl.h"
#include "lab6_util.h"

struct kfreemod_ctl kfreemod_ctl;

struct modop {
	bool unload;
	int ret;
};

static int modop_fn(void *arg)
{
	struct modop *m = arg;

	m->ret = m->unload ? rmmod("kfreemod") : insmod(MODULE_PATH_kfreemod);
	return 0;
}

/* insmod() or rmmod() in a kthread on CPU 3. */
static void modop(bool unload)
{
	struct modop m = { .unload = unload, .ret = 1 };

	kthread_stop(kthread_run_on_cpu(modop_fn, &m, 3, "modop"));
	cr_assert_eq(m.ret, 0, "%s returned %d", unload ? "rmmod()" : "insmod()", m.ret);
	trace_mark(unload ? "kfreemod unloaded" : "kfreemod loaded");
}

static void kfree_rcu_only(void *arg)
{
	long before, queued;

	(void)arg;
	rcu_callbacks_init();
	before = kmem_live_objects();
	kfreemod_ctl = (struct kfreemod_ctl){ .per_cpu = 3, .own_callback = false };
	modop(false);
	queued = kmem_live_objects() - before;
	modop(true);
	/* Nothing asks for the frees: their lazy timer fires, time jumping to it. */
	msleep(LAZY_FLUSH_JIFFIES + 10);
	cr_assert_eq(kmem_live_objects(), before,
		     "seed %llu: kfreemod freed %ld objects with kfree_rcu() and was unloaded; "
		     "after their flush timer, %ld of them were still allocated: a kfree_rcu() "
		     "callback's \"function\" is the offset of its rcu_head in the object, and the "
		     "RCU core frees the object itself (TODO 4; TODOs 1-3 for any callback to run)",
		     (unsigned long long)sim_seed(), queued, kmem_live_objects() - before);
	lab6_end();
}

SEEDS_TEST(module, kfree_rcu_module_unloads_without_barrier, kfree_rcu_only, 4, ANY_MODE)

SIM_TEST(module, callback_module_unloaded_without_barrier_crashes, .signal = BUG_SIGNAL)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	rcu_callbacks_init();
	kfreemod_ctl = (struct kfreemod_ctl){ .per_cpu = 2, .own_callback = true };
	/* No callback pass may begin before rmmod() has returned. */
	sim_hold_point("rcu_cb_pass");
	modop(false);
	modop(true);
	sim_expect_bug("callback into unloaded module kfreemod");
	sim_release_point("rcu_cb_pass");
	msleep(LAZY_FLUSH_JIFFIES + 10);
	sim_run_until_idle();
	cr_assert_fail("kfreemod queued %ld callbacks of its own with call_rcu(), exited without "
		       "rcu_barrier() and was unloaded, yet none called into it afterwards: do "
		       "call_rcu()'s callbacks run at all, lazy ones once their timer fires? "
		       "(TODO 1-3)", module_counts("kfreemod").queued);
}
