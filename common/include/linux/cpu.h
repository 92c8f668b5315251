/**
 * @file cpu.h
 * @brief CPU hotplug: taking a CPU offline and bringing it back online.
 *
 * Rule kept here: a CPU goes offline only once it is idle with no interrupt
 * pending, and from then on nothing runs there (no task, interrupt, tick or
 * cross-call) until cpu_up(). Whatever the CPU still owns (its timers, and
 * through the hotplug states of `linux/cpuhotplug.h`, RCU's callbacks) is
 * handed to a surviving CPU afterwards, in process context, by the CPU that
 * ran cpu_down(), with no other hotplug operation in parallel. The CPU's
 * kthreads are parked, not stopped: they run again after cpu_up().
 *
 * Linux's public names are add_cpu() and remove_cpu() (since v5.10, 2020);
 * cpu_up() and cpu_down() are the kernel's own (kernel/cpu.c), the names the
 * hotplug documentation and RCU's history use, and the names here.
 * @ingroup cpus
 */
#ifndef LINUX_CPU_H
#define LINUX_CPU_H

#include <linux/sched.h>

/** @addtogroup cpus
 * @{ */

/**
 * Simulation only: the named point (see sim_point()) that cpu_down() passes after the CPU is
 * offline and before the teardown callbacks of the hotplug states run (in
 * Linux, between the CPU's death and takedown_cpu()'s
 * rcutree_migrate_callbacks()). cpu_down()'s task holds no CPU there, so a
 * test may hold it as long as it likes: the CPU is offline, and whatever it
 * owned (RCU's callbacks) is still its own.
 */
#define CPUHP_DEAD_POINT "cpuhp_dead"

/**
 * cpu_down() - take @p cpu offline. Process context only: it sleeps.
 *
 * In order: no task may take @p cpu any more (tasks bound to it wait there,
 * parked, as Linux parks per-CPU kthreads); the task holding it runs on
 * until it blocks, and its pending interrupts (cross-calls included) are
 * taken; then it is offline (cpu_online() false); its armed timers move to
 * the control CPU; cpu_down() passes ::CPUHP_DEAD_POINT; the teardown
 * callbacks of the hotplug states run, last registered state first, on the
 * control CPU. The control CPU is the caller's own, or, for a caller that
 * holds no CPU (the test) or holds @p cpu, the lowest-numbered other online
 * CPU; a caller that was bound to @p cpu stays on the control CPU afterwards.
 *
 * @return 0; -EINVAL if @p cpu is already offline; -EBUSY if it is the last
 * online CPU. A BUG for a CPU beyond nr_cpu_ids, or while @p cpu's
 * interrupts are held (sim_hold_irqs()): they could never be taken.
 *
 * Does not promise: when the CPU's holder gives it up (a task that never
 * blocks keeps it, and cpu_down() waits); anything about a task blocked
 * somewhere other than on its CPU (a callback sleeping inside a kthread
 * of @p cpu stays where it is, and wakes only after cpu_up()); that the
 * CPU's kthreads can be stopped while it is offline (kthread_stop() of one
 * is a BUG: bring the CPU back first).
 */
int cpu_down(unsigned int cpu);

/**
 * cpu_up() - bring @p cpu back online. Process context only: it sleeps.
 * The startup callbacks of the hotplug states run first, in registration
 * order, on a surviving CPU; then @p cpu is online, and the tasks parked
 * there run again.
 *
 * @return 0; -EINVAL if @p cpu is already online. A BUG for a CPU beyond
 * nr_cpu_ids.
 *
 * Does not promise that a grace period in progress waits for the new CPU
 * (it was idle, so quiescent, when the grace period began).
 */
int cpu_up(unsigned int cpu);

/**
 * num_online_cpus() - how many CPUs are online now (see cpu_online()).
 * Does not promise that the number still holds when you use it: hotplug may
 * run meanwhile.
 */
unsigned int num_online_cpus(void);

/** @} */
#endif
