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
	r->path = MODULE_PATH_mymod;
	r->name = "mymod";
	sim_run_seeds(NULL, unload_mymod, r);
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
