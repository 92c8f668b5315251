/*
 * rcu.c - classic RCU for a non-preemptible kernel (lab 1).
 *
 * Rule kept here: a reader never blocks and leaves no trace but the debug
 * hook; a grace period is over when every CPU has passed a quiescent state
 * (a context switch, cond_resched(), or idle) since it began, because a
 * reader cannot be switched out in the middle of its critical section.
 */
#include <stdatomic.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <sim/trace.h>

void rcu_read_lock(void)
{
	/* TODO 1: nothing to do in a non-preemptible kernel but tell the debug checks. */
}

void rcu_read_unlock(void)
{
	/* TODO 2: the matching debug hook. */
}

void synchronize_rcu(void)
{
	/* TODO 3: snapshot every CPU's quiescent-state count (and whether it is
	 * idle), then sleep on cpu_qs_wq until each other CPU has been idle or
	 * has passed a quiescent state since the snapshot. */
}
