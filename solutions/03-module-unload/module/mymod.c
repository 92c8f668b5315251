/*
 * mymod.c - a module that uses call_rcu(), and its exit function (lab 3).
 *
 * Rule kept here: when module_exit() returns, rmmod() unmaps the module's
 * code and data. So by then nothing may still be able to run it: no kthread,
 * no timer, and no RCU callback whose function lives here. The exit function
 * stops everything that posts callbacks (fullstop for the callbacks that
 * re-post themselves, kthread_stop(), del_timer_sync()), and only then waits
 * for the callbacks already queued with rcu_barrier(), as rcutorture does.
 *
 * The module keeps an RCU-protected list: its writer kthread replaces one
 * element per jiffy and frees the old one with call_rcu(); its timer queues
 * one callback per jiffy from IRQ context; module_init starts callbacks that
 * re-post themselves (the rcutorture pattern). What to start comes from the
 * test, through mymod_ctl (tests/mymod_ctl.h), which also counts callbacks
 * in memory that outlives the module.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/kthread.h>
#include <linux/timer.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include "rculist.h"
#include "mymod_ctl.h"

MODULE_NAME("mymod");
MODULE_LICENSE("GPL");

#define MYMOD_NR_ITEMS 4

struct mymod_item {
	struct list_head node;
	int key;
	struct rcu_head rcu;
};

struct mymod_repost {
	struct rcu_head rcu;
	int generation;
};

static LIST_HEAD(mymod_list);
static struct task_struct *writer_task;
static struct timer_list mymod_timer;
/* Set by the exit function: callbacks stop re-posting themselves. */
static int fullstop;

static void mymod_free_item(struct rcu_head *head)
{
	struct mymod_item *it = container_of(head, struct mymod_item, rcu);

	kfree(it);
}

/* The writer: replace the oldest element, free it after a grace period. */
static int mymod_writer(void *unused)
{
	int key = MYMOD_NR_ITEMS;

	(void)unused;
	while (!kthread_should_stop()) {
		struct mymod_item *old, *new = kmalloc(sizeof(*new), GFP_KERNEL);

		new->key = key++;
		old = list_first_entry(&mymod_list, struct mymod_item, node);
		list_add_tail_rcu(&new->node, &mymod_list);
		list_del_rcu(&old->node);
		call_rcu(&old->rcu, mymod_free_item);
		schedule_timeout(1);
	}
	return 0;
}

/* The timer: one callback per jiffy, from IRQ context, where call_rcu() is fine. */
static void mymod_timer_fn(struct timer_list *t)
{
	struct mymod_item *it = kmalloc(sizeof(*it), GFP_ATOMIC);

	it->key = -1;
	call_rcu(&it->rcu, mymod_free_item);
	mod_timer(t, jiffies + 1);
}

/* A callback that queues itself again, as rcutorture's do, until fullstop. */
static void mymod_repost_cb(struct rcu_head *head)
{
	struct mymod_repost *r = container_of(head, struct mymod_repost, rcu);

	/* TODO 2: re-post only while the module is not stopping (fullstop);
	 * otherwise this is the chain's last callback: free its object. */
	/* BEGIN SOLUTION */
	if (READ_ONCE(fullstop)) {
		kfree(r);
		return;
	}
	/* END SOLUTION */
	r->generation++;
	call_rcu(&r->rcu, mymod_repost_cb);
}

static int mymod_init(void)
{
	fullstop = 0;
	for (int i = 0; i < MYMOD_NR_ITEMS; i++) {
		struct mymod_item *it = kmalloc(sizeof(*it), GFP_KERNEL);

		it->key = i;
		list_add_tail_rcu(&it->node, &mymod_list);
	}
	for (int i = 0; i < mymod_ctl.reposters; i++) {
		struct mymod_repost *r = kzalloc(sizeof(*r), GFP_KERNEL);

		call_rcu(&r->rcu, mymod_repost_cb);
	}
	timer_setup(&mymod_timer, mymod_timer_fn, 0);
	mymod_ctl_arm_timer(&mymod_timer);
	writer_task = mymod_ctl_start_writer(mymod_writer, "mymod_writer");
	return 0;
}

static void mymod_exit(void)
{
	struct mymod_item *it, *tmp;

	/* TODO 3: make the module safe to unmap, in the article's order:
	 * 1. stop everything that posts callbacks: fullstop for the callbacks
	 *    that re-post themselves, the writer kthread, the timer;
	 * 2. then wait, with TODO 1's rcu_barrier(), until no callback of the
	 *    module is queued or running any more -- including a re-posting
	 *    callback that was running while you set fullstop.
	 * The starter's exit stops the kthread and the timer and waits for
	 * nothing: run the tests to see what happens. */
	/* BEGIN SOLUTION */
	WRITE_ONCE(fullstop, 1);
	if (writer_task)
		kthread_stop(writer_task);
	del_timer_sync(&mymod_timer);
	/* Every callback queued before now runs, and sees fullstop... */
	rcu_barrier();
	/* ...except the re-posts of one that was running when fullstop was
	 * set: it had read fullstop already, and may have queued behind the
	 * barrier's callback. That was its last re-post; wait for it. */
	rcu_barrier();
	/* END SOLUTION */
	/* STARTER: if (writer_task) */
	/* STARTER: 	kthread_stop(writer_task); */
	/* STARTER: del_timer_sync(&mymod_timer); */

	/* No reader and no writer is left: free the list directly. */
	list_for_each_entry_safe(it, tmp, &mymod_list, node) {
		list_del(&it->node);
		kfree(it);
	}
}

module_init(mymod_init);
module_exit(mymod_exit);
