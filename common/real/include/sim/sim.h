/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim/sim.h on a real kernel: the little of the simulation's API a lab's own
 * file may call, with its real meaning (real runs only).
 *
 * Rule kept here: a student file that includes <sim/sim.h> builds unchanged
 * as a real module; a call that has no real meaning is not declared, so it
 * fails to build, by name, rather than quietly doing nothing.
 */
#ifndef RCULABS_REAL_SIM_H
#define RCULABS_REAL_SIM_H

#include <linux/bug.h>
#include <linux/printk.h>

/* The simulation's BUG() with a message (a starter's unwritten TODO). */
#define sim_bug(file, line, ...)                                          \
	do {                                                              \
		pr_emerg("RCULABS: %s:%d: ", file, line);                 \
		pr_cont(__VA_ARGS__);                                     \
		pr_cont("\n");                                            \
		BUG();                                                    \
	} while (0)

#endif
