/*
 * rcu_barrier.c - wait for every callback already queued (lab 3).
 *
 * Rule kept here: rcu_barrier() returns only once every callback queued
 * before it was called has been invoked, and it waits for none queued after
 * that, so a callback that re-posts itself for ever cannot keep it from
 * returning. How it can know, on lab 2's one queue, is what the handout's
 * "rcu_barrier() on one FIFO queue" asks.
 */
/* BEGIN SOLUTION */
/*
 * How: lab 2 keeps one global FIFO queue and never reorders it, so a
 * callback queued now sits behind every callback queued before; when it
 * runs, they all have run. rcu_barrier() queues one such callback and
 * sleeps until it runs (a re-posting callback lands behind it). It sleeps:
 * process context only. One rcu_head and one completion serve every caller,
 * so callers take turns.
 */
/* END SOLUTION */
#include <linux/rcupdate.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/interrupt.h>
#include <linux/bug.h>

/* BEGIN SOLUTION */
static DEFINE_MUTEX(rcu_barrier_mutex);
static struct completion rcu_barrier_completion;
static struct rcu_head rcu_barrier_head;

/* Runs after every callback queued before it: wake the barrier's caller. */
static void rcu_barrier_callback(struct rcu_head *unused)
{
	(void)unused;
	complete(&rcu_barrier_completion);
}
/* END SOLUTION */

void rcu_barrier(void)
{
	/* TODO 1: process context only (BUG_ON(in_interrupt())); one caller at
	 * a time (a mutex); then queue one callback of your own with call_rcu()
	 * at the tail of the queue and sleep on a completion until it runs. */
	/* BEGIN SOLUTION */
	BUG_ON(in_interrupt());
	mutex_lock(&rcu_barrier_mutex);
	init_completion(&rcu_barrier_completion);
	call_rcu(&rcu_barrier_head, rcu_barrier_callback);
	wait_for_completion(&rcu_barrier_completion);
	mutex_unlock(&rcu_barrier_mutex);
	/* END SOLUTION */
	/* STARTER: sim_bug(__FILE__, __LINE__, "rcu_barrier() is not written yet (TODO 1)"); */
}
