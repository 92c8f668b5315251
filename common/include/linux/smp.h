/**
 * @file smp.h
 * @brief Cross-CPU function calls and per-CPU variables.
 *
 * Rule kept here: a cross-call runs its function on the target CPU in IRQ
 * context, like any interrupt there. With wait set, the caller does not go on
 * until every target has *finished* the function; how it waits is a switch
 * (sim_set_ipi_wait_sleeps()): spinning with its CPU held and preemption off,
 * as in the kernel, or sleeping, which lets its CPU pass a quiescent state.
 * @ingroup smp
 */
#ifndef LINUX_SMP_H
#define LINUX_SMP_H

#include <stdbool.h>
#include <linux/sched.h>

/** @addtogroup smp
 * @{ */

/** A function for a cross-CPU call; runs in IRQ context. */
typedef void (*smp_call_func_t)(void *info);

/**
 * Simulation only: the named point (see sim_point()) that every cross-call's caller passes
 * just before on_each_cpu() or smp_call_function_single() returns to it
 * (after the wait, preemption enabled again). A test that holds it stops
 * the caller right there, keeping its CPU, as if the caller had been
 * preempted (or delayed by an interrupt) the moment the call returned.
 */
#define SMP_CALL_RETURN_POINT "smp_call_return"

/**
 * Simulation only: the named point every cross-call's caller passes first,
 * before the call looks whether its target CPU is online (and returns
 * -ENXIO if not). A test that holds it stops the caller there, keeping its
 * CPU, and can take the target down meanwhile: the race between a caller's
 * own look at a CPU and its cross-call, forced. Unlike other named points
 * it is no scheduling point while nobody holds it.
 */
#define SMP_CALL_SEND_POINT "smp_call_send"

/**
 * on_each_cpu() - run @p func(@p info) on every online CPU, this one
 * included.
 * @param func function to run, in IRQ context, on each CPU.
 * @param info its argument.
 * @param wait nonzero: return only when every CPU has run @p func.
 *
 * Disables preemption while it sends, and runs the local call with
 * interrupts off. Must not be called with interrupts disabled or from IRQ
 * context (a BUG, as the kernel warns: two CPUs doing so deadlock). With
 * @p wait zero it promises nothing about when the other CPUs run @p func.
 * Offline CPUs (`linux/cpu.h`) are skipped: nothing runs there.
 */
void on_each_cpu(smp_call_func_t func, void *info, int wait);

/**
 * smp_call_function_single() - run @p func(@p info) on @p cpu.
 * @return 0, or -ENXIO if @p cpu is offline (as Linux's: the function is not
 * run). On the caller's own CPU the function runs at once with interrupts
 * off. Same rules as on_each_cpu().
 *
 * A CPU that goes offline after the call was sent runs it first
 * (cpu_down() takes a CPU's pending interrupts before it goes). Does not
 * promise that @p cpu is still online once the function has run there.
 */
int smp_call_function_single(int cpu, smp_call_func_t func, void *info, int wait);

/**
 * Declare (or define) a per-CPU variable: one instance per possible CPU.
 * @code
 * static DEFINE_PER_CPU(struct rcu_data, rcu_data);
 * struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
 * @endcode
 */
#define DEFINE_PER_CPU(type, name) __typeof__(type) name[NR_CPUS]
/** Declare a per-CPU variable defined elsewhere. */
#define DECLARE_PER_CPU(type, name) extern __typeof__(type) name[NR_CPUS]
/** The instance of per-CPU variable @p var that belongs to @p cpu (an lvalue). */
#define per_cpu(var, cpu) ((var)[(cpu)])
/** Pointer to @p cpu's instance; @p ptr is `&var`. */
#define per_cpu_ptr(ptr, cpu) (&(*(ptr))[(cpu)])
/**
 * Pointer to this CPU's instance; @p ptr is `&var`. Stable only while the
 * task cannot migrate or be interrupted by code that uses the same instance.
 */
#define this_cpu_ptr(ptr) per_cpu_ptr(ptr, smp_processor_id())

/** @} */
#endif
