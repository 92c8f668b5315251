/* Modules: really loaded, really unmapped, stale callbacks caught by name. */
#include <signal.h>
#include <linux/module.h>
#include <linux/kthread.h>
#include <sim/test.h>

rcu_callback_t testmod_callback;
int testmod_calls;

SIM_TEST(module, load_call_unload_reload)
{
	struct rcu_head head;
	bool unloaded = true;

	sim_boot(NULL);
	testmod_calls = 0;
	cr_assert_eq(insmod(MODULE_PATH_testmod), 0);
	cr_assert(module_is_loaded("testmod"));
	cr_assert_str_eq(module_of_address((void *)testmod_callback, &unloaded), "testmod");
	cr_assert(!unloaded);
	head.func = testmod_callback;
	rcu_invoke_callback(&head);
	cr_assert_eq(testmod_calls, 1);
	cr_assert_eq(rmmod("testmod"), 0);
	cr_assert(!module_is_loaded("testmod"));
	cr_assert_str_eq(module_of_address((void *)head.func, &unloaded), "testmod");
	cr_assert(unloaded, "after rmmod() the old code range belongs to an unloaded module");
	cr_assert_eq(rmmod("testmod"), -2, "rmmod of a module that is not loaded: -ENOENT");
	cr_assert_eq(insmod(MODULE_PATH_testmod), 0, "a module can be loaded again");
	cr_assert_neq((void *)testmod_callback, (void *)head.func,
		      "a reloaded module never reuses the fenced range");
	head.func = testmod_callback;
	rcu_invoke_callback(&head);
	cr_assert_eq(testmod_calls, 2);
	cr_assert_eq(rmmod("testmod"), 0);
}

//! [stale-callback]
SIM_TEST(module, callback_into_unloaded_module_is_named, .signal = BUG_SIGNAL)
{
	struct rcu_head head;

	sim_boot(NULL);
	sim_expect_bug("callback into unloaded module testmod");
	insmod(MODULE_PATH_testmod);
	head.func = testmod_callback;   /* a callback still queued ... */
	rmmod("testmod");               /* ... when its code goes away */
	rcu_invoke_callback(&head);
}
//! [stale-callback]

SIM_TEST(module, with_check_off_the_call_faults, .signal = SIGSEGV)
{
	struct rcu_head head;

	sim_boot(NULL);
	sim_set_check_module_callbacks(false);
	insmod(MODULE_PATH_testmod);
	head.func = testmod_callback;
	rmmod("testmod");
	rcu_invoke_callback(&head);
}

SIM_TEST(module, missing_object_is_an_error)
{
	sim_boot(NULL);
	cr_assert_eq(insmod("/nonexistent/nomod.so"), -2);
}
