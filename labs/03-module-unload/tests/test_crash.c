/*
 * crash/ and wrong_exit/: the bug the article is about, made real.
 *
 * naivemod (tests/naivemod.c, the workbook's) queues callbacks whose
 * function lives in the module, then is unloaded by an exit function that
 * gets it wrong in the way the test asks. Each test expects the crash: the
 * simulated kernel reports the call into the unloaded module by name or,
 * with that check off, the process really faults. These tests pass when the
 * crash happens; they need your rcu_barrier() (the driver uses it).
 */
#include <signal.h>
#include <linux/module.h>
#include "lab3.h"

/* Which of naivemod's callback sources run: each wrong exit is shown with
 * only the source its mistake lets through (or all of them). */
enum { WRITER = 1, TIMER = 2, REPOSTERS = 4, ALL = 7 };

/* naivemod, loaded with @sources running, unloaded by the exit @how. */
static struct unload_run naive_run(enum naive_exit how, int sources)
{
	return (struct unload_run){ .path = MODULE_PATH_naivemod, .name = "naivemod",
				    .writer = sources & WRITER, .timer = sources & TIMER,
				    .reposters = sources & REPOSTERS ? 2 : 0,
				    .naive_exit = how, .blimit = 1, .backlog = 8 };
}

static void naive_unload(enum naive_exit how, bool check, int sources)
{
	struct sim_config cfg = sim_default_config();
	struct unload_run r = naive_run(how, sources);

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

/*
 * One wrong exit, one test: naivemod with @sources running, unloaded by the
 * exit @how, must end with @sig (BUG_SIGNAL: the kernel's named BUG; SIGSEGV:
 * the same crash with the kernel's check off, a real fault).
 */
#define NAIVE_EXIT_TEST(suite, name, how, sources, sig, why)                   \
	SIM_TEST(suite, name, .signal = sig, .description = why)              \
	{ naive_unload(how, sig == BUG_SIGNAL, sources); }

NAIVE_EXIT_TEST(crash, no_wait_named_bug, NAIVE_EXIT_NOTHING, ALL, BUG_SIGNAL,
	"unload with callbacks queued: BUG: callback into unloaded module naivemod")
NAIVE_EXIT_TEST(crash, no_wait_segfault_without_check, NAIVE_EXIT_NOTHING, ALL, SIGSEGV,
	"the same with the kernel's check off: a real SIGSEGV in unmapped code")
NAIVE_EXIT_TEST(wrong_exit, one_synchronize_rcu, NAIVE_EXIT_ONE_SYNC, ALL, BUG_SIGNAL,
	"synchronize_rcu() waits for a grace period, not for the callbacks")
NAIVE_EXIT_TEST(wrong_exit, three_synchronize_rcu, NAIVE_EXIT_THREE_SYNCS, ALL, BUG_SIGNAL,
	"three back-to-back synchronize_rcu() calls do not help when callbacks are deferred (blimit)")
NAIVE_EXIT_TEST(wrong_exit, barrier_before_del_timer_sync, NAIVE_EXIT_BARRIER_BEFORE_TIMER, TIMER,
	BUG_SIGNAL, "the timer queues callbacks behind rcu_barrier()'s")
NAIVE_EXIT_TEST(wrong_exit, barrier_before_kthread_stop, NAIVE_EXIT_BARRIER_BEFORE_KTHREAD, WRITER,
	BUG_SIGNAL, "the writer kthread queues callbacks behind rcu_barrier()'s")
NAIVE_EXIT_TEST(wrong_exit, no_fullstop, NAIVE_EXIT_NO_FULLSTOP, REPOSTERS, BUG_SIGNAL,
	"a self-reposting callback re-queues itself behind rcu_barrier()'s")

/* The control: the same module and schedule with the article's exit is clean,
 * so the crashes above come from the exits, not from the test. */
SIM_TEST(wrong_exit, control_correct_exit_is_clean,
	 .description = "naivemod with the article's exit order: no crash, every callback ran first")
{
	struct unload_run r = naive_run(NAIVE_EXIT_CORRECT, ALL);

	sim_boot(NULL);
	lab3_unload_scenario(&r);
	lab3_assert_clean(&r);
}
