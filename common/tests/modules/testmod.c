/* A minimal module for the loader's own tests: one RCU callback in its code. */
#include <linux/module.h>
#include <linux/types.h>

MODULE_NAME("testmod");
MODULE_LICENSE("GPL");

extern rcu_callback_t testmod_callback;  /* defined by the test, outlives us */
extern int testmod_calls;

static void testmod_cb(struct rcu_head *head)
{
	(void)head;
	testmod_calls++;
}

static int testmod_init(void)
{
	testmod_callback = testmod_cb;
	return 0;
}

static void testmod_exit(void)
{
}

module_init(testmod_init);
module_exit(testmod_exit);
