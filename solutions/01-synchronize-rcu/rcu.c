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

/* BEGIN SOLUTION */
static atomic_long gp_seq; /* concurrent callers each take a number */
/* END SOLUTION */

void rcu_read_lock(void)
{
	/* TODO 1: nothing to do in a non-preemptible kernel but tell the debug checks. */
	/* BEGIN SOLUTION */
	rcu_lock_acquire();
	/* END SOLUTION */
}

void rcu_read_unlock(void)
{
	/* TODO 2: the matching debug hook. */
	/* BEGIN SOLUTION */
	rcu_lock_release();
	/* END SOLUTION */
}

/* BEGIN SOLUTION */
/*
 * Has every CPU passed a quiescent state since @snap was taken? A CPU whose
 * count has moved has; so has one that was idle when the grace period began
 * (snap_idle) or is idle now, since an idle CPU runs no reader. The caller's
 * own CPU (@self) has: the caller holds it and is no reader.
 */
static bool all_cpus_passed_qs(const unsigned long *snap, const bool *snap_idle, int self)
{
	int cpu;

	for_each_online_cpu(cpu) {
		if (cpu == self || snap_idle[cpu])
			continue;
		if (cpu_quiescent_count(cpu) == snap[cpu] && !idle_cpu(cpu))
			return false;
	}
	return true;
}
/* END SOLUTION */

void synchronize_rcu(void)
{
	/* TODO 3: snapshot every CPU's quiescent-state count (and whether it is
	 * idle), then sleep on cpu_qs_wq until each other CPU has been idle or
	 * has passed a quiescent state since the snapshot. */
	/* BEGIN SOLUTION */
	unsigned long snap[NR_CPUS];
	bool snap_idle[NR_CPUS];
	unsigned long gp;
	int self, cpu;

	might_sleep();
	gp = (unsigned long)atomic_fetch_add(&gp_seq, 1) + 1;
	trace_rcu_gp(1, gp);
	self = task_cpu(current);
	/* Every possible CPU: one that comes online later finds itself idle here. */
	for_each_possible_cpu(cpu) {
		snap[cpu] = cpu_quiescent_count(cpu);
		snap_idle[cpu] = idle_cpu(cpu);
	}
	wait_event(cpu_qs_wq, all_cpus_passed_qs(snap, snap_idle, self));
	trace_rcu_gp(0, gp);
	/* END SOLUTION */
}
