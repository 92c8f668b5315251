/*
 * rcu_barrier.c - wait for every callback already queued (lab 3).
 *
 * Rule kept here: lab 2 keeps one global FIFO queue and never reorders it,
 * so a callback queued now sits behind every callback queued before; when
 * it runs, they all have run. rcu_barrier() queues one such callback and
 * sleeps until it runs. It waits for callbacks queued *before* the call, not
 * for those queued after it (a callback that re-posts itself lands behind the
 * barrier's), so it always returns. It sleeps: process context only. One
 * rcu_head and one completion serve every caller, so callers take turns.
 */
#include <linux/rcupdate.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/interrupt.h>
#include <linux/bug.h>


void rcu_barrier(void)
{
	/* TODO 1: process context only (BUG_ON(in_interrupt())); one caller at
	 * a time (a mutex); then queue one callback of your own with call_rcu()
	 * at the tail of the queue and sleep on a completion until it runs. */
	sim_bug(__FILE__, __LINE__, "rcu_barrier() is not written yet (TODO 1 in rcu_barrier.c)");
}
