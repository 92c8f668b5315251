/**
 * @file cpuhotplug.h
 * @brief Hotplug states: code that runs when a CPU comes up or goes down.
 *
 * Rule kept here: a subsystem that keeps per-CPU state registers a state
 * with a startup and a teardown callback, and the hotplug core calls them
 * for every CPU that comes up (startup, before it is online) and goes down
 * (teardown, after it is offline), on another CPU, in process context, one
 * hotplug operation at a time. Only the "prepare" section of Linux's states
 * is simulated: those that run on the control CPU while the hotplugged CPU
 * is dead. Registrations last until the next boot.
 * @ingroup cpus
 */
#ifndef LINUX_CPUHOTPLUG_H
#define LINUX_CPUHOTPLUG_H

/** @addtogroup cpus
 * @{ */

/** Hotplug states, in the order a CPU passes them coming up (Linux's names). */
enum cpuhp_state {
	CPUHP_INVALID = -1,      /**< what a failed dynamic registration would return */
	CPUHP_OFFLINE = 0,       /**< the CPU is dead */
	CPUHP_RCUTREE_PREP,      /**< RCU's own state (Linux: rcutree_prepare_cpu(), rcutree_dead_cpu()) */
	CPUHP_BP_PREPARE_DYN,    /**< ask for any free "prepare" state */
	CPUHP_BP_PREPARE_DYN_END = CPUHP_BP_PREPARE_DYN + 8, /**< end of the dynamic ones */
	CPUHP_BRINGUP_CPU,       /**< the CPU starts running: the end of the simulated section */
	CPUHP_ONLINE,            /**< fully online */
};

/**
 * cpuhp_setup_state_nocalls() - register hotplug state @p state under
 * @p name: @p startup(cpu) runs before a CPU comes up, @p teardown(cpu)
 * after it went down (either may be NULL). "nocalls": nothing is called for
 * the CPUs already online. Process context.
 *
 * @return 0 for a fixed state; for ::CPUHP_BP_PREPARE_DYN, the state
 * allocated (pass it to cpuhp_remove_state_nocalls()). A BUG for a state
 * outside the prepare section, a fixed state already taken, or no dynamic
 * state left.
 *
 * Does not promise on which surviving CPU the callbacks run (the control
 * CPU of cpu_up()/cpu_down()), nor that a callback's error stops the
 * operation: a non-zero return is a warning, and the CPU goes down anyway.
 */
int cpuhp_setup_state_nocalls(enum cpuhp_state state, const char *name,
			      int (*startup)(unsigned int cpu),
			      int (*teardown)(unsigned int cpu));

/**
 * cpuhp_remove_state_nocalls() - unregister @p state; its callbacks are not
 * called. Process context: it waits for a hotplug operation in progress to
 * end, so a callback must not call it. Removing a state not registered is
 * a BUG.
 */
void cpuhp_remove_state_nocalls(enum cpuhp_state state);

/** @} */
#endif
