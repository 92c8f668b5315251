/* unload/: your mymod.c loads, queues callbacks, and unloads with none left behind. */
#include <linux/module.h>
#include "lab3.h"

static void unload_mymod(void *arg)
{
	struct unload_run *r = arg;

	lab3_unload_scenario(r);
	lab3_assert_clean(r);
}

static void run_mymod(struct unload_run *r)
{
	struct sim_config cfg = sim_forced_config();

	r->path = MODULE_PATH_mymod;
	r->name = "mymod";
	sim_run_seeds(&cfg, unload_mymod, r);
}

SIM_TEST(unload, writer_callbacks,
	 .description = "the writer kthread's callbacks have all run when rmmod() returns")
{
	struct unload_run r = { .writer = true, .blimit = 1, .backlog = 6 };

	run_mymod(&r);
}

SIM_TEST(unload, timer_callbacks,
	 .description = "the timer's callbacks have all run when rmmod() returns")
{
	struct unload_run r = { .timer = true, .blimit = 1, .backlog = 6 };

	run_mymod(&r);
}

SIM_TEST(unload, timer_handler_running_at_exit,
	 .description = "rmmod() comes while the timer's handler is running on another CPU: "
			"nothing it queues or re-arms outlives the module")
{
	struct unload_run r = { .timer = true, .blimit = 1, .backlog = 4,
				.timer_running = true };

	run_mymod(&r);
}

/*
 * A re-posting callback of mymod is running when rmmod() comes: the pass
 * that runs it is stopped before its k-th access, for k = 1, 2, ... until
 * the pass ends, while the exit function runs. Wherever it stopped (before
 * it read fullstop, after, inside its call_rcu()), nothing may run after
 * the unmap. A boot per k, so that a failure's report and timeline show
 * that run alone.
 */
SIM_TEST(unload, reposting_callback_running_at_exit,
	 .description = "rmmod() comes while a re-posting callback of mymod is running, stopped "
			"at each of its accesses in turn: nothing it posts outlives the module")
{
	enum { MAX_ACCESSES = 200 };
	struct sim_config cfg = sim_forced_config();
	struct unload_run r;
	long k;

	for (k = 1; k < MAX_ACCESSES; k++) {
		r = (struct unload_run){ .path = MODULE_PATH_mymod, .name = "mymod", .reposters = 1,
					 .blimit = 1, .backlog = 4, .hold_cb_at = k };
		sim_boot(&cfg);
		lab3_unload_scenario(&r);
		lab3_assert_clean(&r);
		cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
		if (!r.cb_held)
			break;
	}
	/* Without the access-level instrumentation (the asan and tsan
	 * presets) no access is held: one plain unload, for the checker. */
	cr_assert(k > 2 || !sim_kcsan_enabled(), "the callback pass before rmmod() made %ld "
		  "student access(es): nothing was tested", k - 1);
	cr_assert(k < MAX_ACCESSES, "the callback pass before rmmod() was still making accesses "
		  "after %d stops: does mymod_repost_cb() (TODO 2) loop?", MAX_ACCESSES - 1);
}

SIM_TEST(unload, reposting_callbacks,
	 .description = "self-reposting callbacks stop (fullstop) and have all run at rmmod()")
{
	struct unload_run r = { .reposters = 3, .blimit = 1, .backlog = 6 };

	run_mymod(&r);
}

SIM_TEST(unload, all_sources,
	 .description = "writer, timer and reposting callbacks together, blimit 2")
{
	struct unload_run r = { .writer = true, .timer = true, .reposters = 2,
				.blimit = 2, .backlog = 8 };

	run_mymod(&r);
}

SIM_TEST(unload, reload_after_clean_unload,
	 .description = "mymod can be loaded again after a clean unload, and unloaded cleanly again")
{
	struct unload_run r = { .writer = true, .timer = true, .reposters = 1,
				.blimit = 2, .backlog = 5, .loads = 2 };

	run_mymod(&r);
	cr_assert_eq(module_counts("mymod").inits, 2, "mymod was loaded %ld time(s), not twice",
		     module_counts("mymod").inits);
}
