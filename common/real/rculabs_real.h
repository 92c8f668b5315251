/*
 * rculabs_real.h - what a lab's module needs to build as a real Linux module.
 *
 * Rule kept here: the file a student writes is the file the real kernel runs.
 * Whatever only the simulated kernel has gets its real meaning here, or in the
 * lab's real/ folder, never in the student's file. The build force-includes
 * this header (-include) before the student's first line.
 *
 * What is bridged:
 *  - MODULE_NAME("x"): the simulation names a module in its source; Kbuild
 *    names it after its object (x.ko), so the macro expands to nothing;
 *  - "rculist.h": the student's own list primitives of lab 1 are the
 *    simulation's; a real module uses the kernel's <linux/rculist.h>
 *    (include/rculist.h here), so a real run judges the module, not lab 1;
 *  - <stdbool.h> in the tests' headers the student's file includes
 *    (include/stdbool.h): the kernel has bool, and no C library;
 *  - what a test sets in the simulation (lab 3's struct mymod_ctl) is a
 *    module parameter, defined in the lab's real/ folder;
 *  - migrate_to_cpu(), the simulation's way to move the current task to a
 *    CPU, is set_cpus_allowed_ptr() to that CPU alone;
 *  - a callback kthread's hooks: rcu_invoke_callback() calls the callback
 *    (the simulation also checks whose code it is), rcu_cb_pass_begin(),
 *    where the simulation's tests hold a pass, is nothing;
 *  - <sim/sim.h> and <sim/trace.h> (include/sim/): sim_bug() is BUG() with
 *    its message, the timeline's trace calls do nothing.
 */
#ifndef RCULABS_REAL_H
#define RCULABS_REAL_H

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/cpumask.h>

#define MODULE_NAME(name)

static inline void migrate_to_cpu(int cpu)
{
	set_cpus_allowed_ptr(current, cpumask_of(cpu));
}

static inline void rcu_invoke_callback(struct rcu_head *head)
{
	head->func(head);
}

static inline void rcu_cb_pass_begin(void)
{
}

#endif
