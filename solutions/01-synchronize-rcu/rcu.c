/*
 * rcu.c - classic RCU for a non-preemptible kernel (lab 1).
 *
 * Rule kept here: a reader never blocks and leaves no trace but the debug
 * hook; a grace period is over when every CPU has passed a quiescent state
 * (a context switch, cond_resched(), or idle) since it began, because a
 * reader cannot be switched out in the middle of its critical section.
 */
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <sim/trace.h>

/* BEGIN SOLUTION */
static unsigned long gp_seq;
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
 * Has every CPU passed a quiescent state since @snap was taken? The caller's
 * own CPU (@self) has: the caller holds it and is no reader, so no reader can
 * be inside there.
 */
static bool all_cpus_passed_qs(const unsigned long *snap, int self)
{
	int cpu;

	for_each_online_cpu(cpu)
		if (cpu != self && cpu_quiescent_count(cpu) == snap[cpu] && !idle_cpu(cpu))
			return false;
	return true;
}
/* END SOLUTION */

void synchronize_rcu(void)
{
	/* TODO 3: snapshot every CPU's quiescent-state count, then sleep on
	 * cpu_qs_wq until each CPU's count has moved or the CPU is idle. */
	/* BEGIN SOLUTION */
	unsigned long snap[NR_CPUS];
	unsigned long gp;
	int cpu, self = task_cpu(current);

	might_sleep();
	gp = ++gp_seq;
	trace_rcu_gp(1, gp);
	for_each_online_cpu(cpu)
		snap[cpu] = cpu_quiescent_count(cpu);
	wait_event(cpu_qs_wq, all_cpus_passed_qs(snap, self));
	trace_rcu_gp(0, gp);
	/* END SOLUTION */
}
