/*
 * crash/ and wrong_exit/: the bug the article is about, made real.
 *
 * naivemod (module/naivemod.c, the workbook's) queues callbacks whose
 * function lives in the module, then is unloaded by an exit function that
 * gets it wrong in the way the test asks. Each test expects the crash: the
 * simulated kernel reports the call into the unloaded module by name or,
 * with that check off, the process really faults. These tests pass when the
 * crash happens; they need your rcu_barrier() (the driver uses it).
 */
#include <signal.h>
#include <linux/module.h>
#include "lab3.h"

static void naive_unload(enum naive_exit how, bool check)
{
	struct sim_config cfg = sim_default_config();
	struct unload_run r = { .path = MODULE_PATH_naivemod, .name = "naivemod",
				.writer = true, .timer = true, .reposters = 2,
				.naive_exit = how, .blimit = 1, .backlog = 8 };

	cfg.check_module_callbacks = check;
	sim_boot(&cfg);
	if (check)
		sim_expect_bug("callback into unloaded module naivemod");
	lab3_unload_scenario(&r);
	/* Reached only if the stale callbacks did not crash: say why. */
	cr_assert_fail("naivemod's exit (variant %d) left %d of %d callbacks queued at rmmod(), "
		"yet nothing crashed", (int)how, r.queued_at_unload - r.invoked_at_unload,
		r.queued_at_unload);
}

SIM_TEST(crash, no_wait_named_bug, .signal = BUG_SIGNAL,
	 .description = "unload with callbacks queued: BUG: callback into unloaded module naivemod")
{
	naive_unload(NAIVE_EXIT_NOTHING, true);
}

SIM_TEST(crash, no_wait_segfault_without_check, .signal = SIGSEGV,
	 .description = "the same with the kernel's check off: a real SIGSEGV in unmapped code")
{
	naive_unload(NAIVE_EXIT_NOTHING, false);
}

SIM_TEST(wrong_exit, one_synchronize_rcu, .signal = BUG_SIGNAL,
	 .description = "synchronize_rcu() waits for a grace period, not for the callbacks")
{
	naive_unload(NAIVE_EXIT_ONE_SYNC, true);
}

SIM_TEST(wrong_exit, three_synchronize_rcu, .signal = BUG_SIGNAL,
	 .description = "three back-to-back synchronize_rcu() calls do not help when callbacks are deferred (blimit)")
{
	naive_unload(NAIVE_EXIT_THREE_SYNCS, true);
}

SIM_TEST(wrong_exit, barrier_before_del_timer_sync, .signal = BUG_SIGNAL,
	 .description = "the timer queues callbacks behind rcu_barrier()'s")
{
	naive_unload(NAIVE_EXIT_BARRIER_BEFORE_TIMER, true);
}

SIM_TEST(wrong_exit, barrier_before_kthread_stop, .signal = BUG_SIGNAL,
	 .description = "the writer kthread queues callbacks behind rcu_barrier()'s")
{
	naive_unload(NAIVE_EXIT_BARRIER_BEFORE_KTHREAD, true);
}

SIM_TEST(wrong_exit, no_fullstop, .signal = BUG_SIGNAL,
	 .description = "a self-reposting callback re-queues itself behind rcu_barrier()'s")
{
	naive_unload(NAIVE_EXIT_NO_FULLSTOP, true);
}
