/*
 * naivemod.c - mymod as a naive author writes it (lab 3; given, do not edit).
 *
 * Rule kept here: this module is the workbook's, not yours. It does what
 * mymod.c does (a writer kthread, a timer and self-reposting callbacks, all
 * queueing callbacks whose function lives here), but its exit function ends
 * in whichever wrong way the test asks for (mymod_ctl.naive_exit): waiting
 * for nothing, for one or three grace periods, or calling rcu_barrier() too
 * early. The crash/ and wrong_exit/ tests load it to show each mistake
 * crashing; your own mymod.c must not.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/kthread.h>
#include <linux/timer.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include "mymod_ctl.h"

MODULE_NAME("naivemod");
MODULE_LICENSE("GPL");

struct naive_obj {
	struct rcu_head rcu;
};

static struct task_struct *writer_task;
static struct timer_list naive_timer;
static int fullstop;

static void naive_free(struct rcu_head *head)
{
	kfree(container_of(head, struct naive_obj, rcu));
}

/* One object handed to call_rcu() with @func, from any context. */
static void naive_queue(rcu_callback_t func)
{
	struct naive_obj *o = kmalloc(sizeof(*o), GFP_ATOMIC);

	call_rcu(&o->rcu, func);
}

static int naive_writer(void *unused)
{
	(void)unused;
	while (!kthread_should_stop()) {
		naive_queue(naive_free);
		schedule_timeout(1);
	}
	return 0;
}

static void naive_timer_fn(struct timer_list *t)
{
	naive_queue(naive_free);
	mod_timer(t, jiffies + 1);
}

static void naive_repost(struct rcu_head *head)
{
	if (READ_ONCE(fullstop)) {
		naive_free(head);
		return;
	}
	call_rcu(head, naive_repost);
}

static int naive_init(void)
{
	fullstop = 0;
	for (int i = 0; i < mymod_ctl.reposters; i++)
		naive_queue(naive_repost);
	timer_setup(&naive_timer, naive_timer_fn, 0);
	mymod_ctl_arm_timer(&naive_timer);
	writer_task = mymod_ctl_start_writer(naive_writer, "naive_writer");
	return 0;
}

static void stop_writer(void)
{
	if (writer_task)
		kthread_stop(writer_task);
}

static void naive_exit(void)
{
	switch (mymod_ctl.naive_exit) {
	case NAIVE_EXIT_NOTHING:
	case NAIVE_EXIT_ONE_SYNC:
	case NAIVE_EXIT_THREE_SYNCS:
		WRITE_ONCE(fullstop, 1);
		stop_writer();
		del_timer_sync(&naive_timer);
		if (mymod_ctl.naive_exit == NAIVE_EXIT_NOTHING)
			break;
		synchronize_rcu();
		if (mymod_ctl.naive_exit == NAIVE_EXIT_ONE_SYNC)
			break;
		synchronize_rcu();
		synchronize_rcu();
		break;
	case NAIVE_EXIT_BARRIER_BEFORE_TIMER:
		WRITE_ONCE(fullstop, 1);
		stop_writer();
		rcu_barrier();
		del_timer_sync(&naive_timer);
		break;
	case NAIVE_EXIT_BARRIER_BEFORE_KTHREAD:
		WRITE_ONCE(fullstop, 1);
		rcu_barrier();
		stop_writer();
		del_timer_sync(&naive_timer);
		break;
	case NAIVE_EXIT_NO_FULLSTOP:
		stop_writer();
		del_timer_sync(&naive_timer);
		rcu_barrier();
		break;
	case NAIVE_EXIT_CORRECT:
		WRITE_ONCE(fullstop, 1);
		stop_writer();
		del_timer_sync(&naive_timer);
		rcu_barrier();
		rcu_barrier();  /* a re-post from a callback running at fullstop (Quick Quiz 3.10) */
		break;
	}
}

module_init(naive_init);
module_exit(naive_exit);
