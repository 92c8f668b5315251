/**
 * @file sched.h
 * @brief Simulated CPUs and the tasks that run on them.
 *
 * Rule kept here: a task runs kernel code on a CPU only while it holds that
 * CPU, and a CPU is held by one task at a time. The kernel is
 * non-preemptible: a task keeps its CPU until it blocks, calls schedule() or
 * cond_resched(), or migrates. Every such hand-over is a context switch, and a
 * CPU that nobody holds is idle; both are quiescent states, which RCU observes
 * through cpu_quiescent_count() and idle_cpu().
 * @ingroup cpus
 */
#ifndef LINUX_SCHED_H
#define LINUX_SCHED_H

#include <stdbool.h>
#include <linux/atomic.h>
#include <linux/bug.h>

/** @addtogroup cpus
 * @{ */

/** The most simulated CPUs a kernel can boot with (sim_config::nr_cpus). */
#define NR_CPUS 64
/** Length of a task name, terminator included. */
#define TASK_COMM_LEN 16

struct task_struct;

/** The number of CPUs this boot has: CPUs are 0 .. nr_cpu_ids - 1. */
extern int nr_cpu_ids;

/**
 * cpu_online() - true while @p cpu is online: from boot, or its cpu_up(),
 * until its cpu_down() (`linux/cpu.h`). An offline CPU runs no task, takes
 * no interrupt, tick or cross-call, and is idle (a quiescent state). False
 * for a CPU beyond nr_cpu_ids. Lock-free, any context.
 *
 * Does not promise that the answer still holds when you act on it: a CPU
 * may go down or come up right after. Code that must not race with hotplug
 * takes a lock that the hotplug callbacks take too (as lab 6's barrier_lock).
 */
bool cpu_online(unsigned int cpu);
/** Walk every CPU of this boot, online or not: 0 .. nr_cpu_ids - 1. */
#define for_each_possible_cpu(cpu) for ((cpu) = 0; (cpu) < nr_cpu_ids; (cpu)++)
/**
 * Walk the CPUs that are online when the walk reaches them (cpu_online()).
 * Without CPU hotplug (every lab but lab 6) that is every CPU; a CPU that
 * goes down or comes up during the walk may or may not be visited.
 */
#define for_each_online_cpu(cpu) \
	for_each_possible_cpu(cpu) if (!cpu_online(cpu)) {} else

/**
 * current_task() - Simulation only: the task this thread is. `current` is its kernel name.
 * NULL on a thread the simulated kernel did not create or adopt.
 */
struct task_struct *current_task(void);
/** The task running this code. */
#define current current_task()

/** task_comm() - Simulation only: the name of @p t ("test", "rcuo/1", "swapper/0", ...). */
const char *task_comm(const struct task_struct *t);
/** task_pid() - Simulation only: the task's id: 0 for the test's own task, then in creation order. */
int task_pid(const struct task_struct *t);
/**
 * task_cpu() - the CPU @p t holds, or -1 if it holds none (a controller, or
 * a task asleep). Unlike smp_processor_id() it never BUGs.
 */
int task_cpu(const struct task_struct *t);

/**
 * smp_processor_id() - the CPU the current task holds (or that takes the
 * current interrupt). It is a BUG to ask when the task holds no CPU; the
 * answer is stable only while the task cannot migrate (it never does on its
 * own here, but it may call migrate_to_cpu()).
 */
#define smp_processor_id() sim_smp_processor_id(__FILE__, __LINE__)
/** Simulation only: the implementation behind smp_processor_id(); call that. */
int sim_smp_processor_id(const char *file, int line);

/**
 * schedule() - give up the CPU and take it back: a voluntary context switch,
 * and so a quiescent state for this CPU. Another task waiting for this CPU
 * runs first. Sleeping: a BUG in IRQ context, with preemption disabled or in
 * an RCU read-side critical section.
 */
void schedule(void);

/**
 * cond_resched() - a place where a long-running task may be switched out.
 * Reports a quiescent state for this CPU (as the kernel's cond_resched()
 * does for RCU), and switches only if another task waits for this CPU.
 * Same rules as schedule(). In parallel mode, when nothing waits for the CPU
 * and no grace period asked for its quiescent state (cpu_quiescent_count()),
 * it takes no lock and no atomic read-modify-write: it does not promise to
 * order anything then, nor to wake anyone.
 */
void cond_resched(void);

/**
 * cpu_relax() - the body of every busy-wait loop. A scheduling point, where
 * pending interrupts are taken and, in deterministic mode, another task may
 * run. A loop that spins without it is a livelock the kernel cannot see.
 * It is not a quiescent state.
 */
#define cpu_relax() sim_cpu_relax(__FILE__, __LINE__)
/** Simulation only: the implementation behind cpu_relax(); call that. */
void sim_cpu_relax(const char *file, int line);

/** preempt_disable() - no sleeping and no migration until preempt_enable(). */
void preempt_disable(void);
/** preempt_enable() - undo one preempt_disable(). */
void preempt_enable(void);
/** The current preemption-disable depth of this task. */
int preempt_count(void);

/**
 * might_sleep() - the check every sleeping primitive starts with: a BUG
 * ("sleeping function called from invalid context") in IRQ context, with
 * preemption or interrupts disabled, or inside rcu_read_lock().
 */
#define might_sleep() sim_might_sleep(__FILE__, __LINE__)
/** Simulation only: the implementation behind might_sleep(); call that. */
void sim_might_sleep(const char *file, int line);

/**
 * migrate_to_cpu() - Simulation only: move the current task to @p cpu: it gives up its CPU (a
 * context switch there) and waits until @p cpu is free. With @p cpu == -1 the
 * task holds no CPU afterwards (a test's controller often runs so). A task
 * moved to an offline CPU waits there, parked, until cpu_up(). May sleep.
 */
void migrate_to_cpu(int cpu);

/**
 * cpu_quiescent_count() - Simulation only: how many quiescent states @p cpu has passed:
 * context switches, cond_resched() calls, and each entry to idle.
 *
 * A grace period that begins when the count is N is over for this CPU once
 * the count differs from N or the CPU is idle. The count only grows; it says
 * nothing of *which* task switched.
 *
 * Does not promise to count every cond_resched(): in parallel mode one is
 * counted only if this CPU's count was read since its last counted one (as
 * Linux's rcu_all_qs() reports nothing unless a grace period asked). What it
 * does promise: after a read, the count moves at this CPU's next quiescent
 * state (deterministic mode counts every one).
 */
unsigned long cpu_quiescent_count(int cpu);

/** idle_cpu() - true when no task holds @p cpu (and no interrupt runs there). */
bool idle_cpu(int cpu);

struct wait_queue_head;
/**
 * cpu_qs_wq - Simulation only: woken when a CPU passes a quiescent state. A grace
 * period waits on it with wait_event() until every CPU's
 * cpu_quiescent_count() has moved (or the CPU is idle). Wake-ups say only
 * "something may have changed": re-check the counts. A task is not woken by
 * the quiescent state its own going to sleep causes: a grace period's waiter
 * must already count the CPU it ran on as quiescent (it holds that CPU, so no
 * reader can be inside there).
 *
 * Which quiescent states wake a waiter: in parallel mode, only those of the
 * CPUs whose cpu_quiescent_count() or idle_cpu() its condition read the last
 * time it was checked (every CPU, if it read none), as the kernel's
 * rcu_report_qs_rdp() reports only to a grace period that still waits for
 * that CPU. So a condition must read, each time, the count of every CPU
 * whose quiescent state it waits for; a condition that also waits for
 * something else must have that something wake the queue itself (wake_up()).
 * In deterministic mode, a waiter is not woken by a CPU that was idle when
 * it last checked. Not promised: one wake-up per quiescent state (several
 * may come as one), or none that changes nothing.
 */
extern struct wait_queue_head cpu_qs_wq;

/** @} */

/** @addtogroup sync
 * @{ */
/**
 * rcu_lock_acquire() - Simulation only: debug hook: entering an RCU read-side critical
 * section. rcu_read_lock() must call it, so that sleeping inside is reported
 * and the trace shows the section. Costs a per-task counter; no ordering.
 */
void rcu_lock_acquire(void);
/** rcu_lock_release() - Simulation only: debug hook: leaving a read-side critical section. */
void rcu_lock_release(void);
/** rcu_read_lock_depth() - Simulation only: the RCU read-side nesting depth of the current task. */
int rcu_read_lock_depth(void);
/** @} */
#endif
