/*
 * test_module.c - the module-unload story with SRCU: a module that queues
 * call_srcu() callbacks and exits with synchronize_srcu() only is unloaded
 * while its callbacks wait, and the first one to run calls into unloaded
 * code; with srcu_barrier() in its exit every callback has run first.
 */
#include <signal.h>
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "lab5.h"
#include "srcumod_ctl.h"

struct srcumod_ctl srcumod_ctl;
static struct srcu_struct ss;

struct modop {
	bool unload;
	int ret, done;
};

static int modop_fn(void *arg)
{
	struct modop *m = arg;

	m->ret = m->unload ? rmmod("srcumod") : insmod(MODULE_PATH_srcumod);
	WRITE_ONCE(m->done, 1);
	return 0;
}

/* insmod() or rmmod() in a kthread on CPU 3; wait for it, time moving. */
static void modop(bool unload)
{
	static struct modop m;

	m = (struct modop){ .unload = unload };
	kthread_stop(kthread_run_on_cpu(modop_fn, &m, 3, "modop"));
	cr_assert(m.done && m.ret == 0, "%s returned %d", unload ? "rmmod()" : "insmod()", m.ret);
}

SIM_TEST(module, unload_after_synchronize_srcu_only_crashes, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	init_srcu_struct(&ss);
	srcumod_ctl = (struct srcumod_ctl){ .ssp = &ss, .per_cpu = 2, .exit_barrier = false };
	/* No callback pass may begin before rmmod() has returned. */
	sim_hold_point("rcu_cb_pass");
	modop(false);
	modop(true);
	sim_expect_bug("callback into unloaded module srcumod");
	sim_release_point("rcu_cb_pass");
	settle(5);
	cr_assert_fail("srcumod exited with synchronize_srcu() only and was unloaded with %ld "
		"callbacks queued (%ld invoked), yet none called into it afterwards: did "
		"call_srcu() queue them, and does each CPU's kthread invoke its queue, each "
		"pass begun with rcu_cb_pass_begin()? (TODO 4)",
		module_counts("srcumod").queued, module_counts("srcumod").invoked);
}

SIM_TEST(module, unload_after_srcu_barrier_is_clean)
{
	struct module_counts c;

	sim_boot(NULL);
	init_srcu_struct(&ss);
	srcumod_ctl = (struct srcumod_ctl){ .ssp = &ss, .per_cpu = 2, .exit_barrier = true };
	modop(false);
	modop(true);
	c = module_counts("srcumod");
	cr_assert(c.queued == 2L * nr_cpu_ids && c.invoked == c.queued,
		  "when rmmod() returned, srcumod had queued %ld callbacks (expected %d) and "
		  "%ld had been invoked: srcu_barrier() in its exit must wait for every "
		  "one of them, on every CPU (TODO 4, 5)", c.queued, 2 * nr_cpu_ids, c.invoked);
	settle(2);
	cleanup_after_readers(&ss);
}
