// SPDX-License-Identifier: GPL-2.0
/*
 * srcumod_ctl.c - lab 5's test controls as module parameters (real runs only).
 *
 * Rule kept here: linked into srcumod.ko for a real kernel, it holds what
 * the simulation's test binary holds (tests/srcumod_ctl.h): the SRCU domain
 * srcumod queues on, owned outside the module (rculabs_flood.ko's, as the
 * simulation's test owns it), how many callbacks its init queues on each
 * CPU, and which exit it takes.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "srcumod_ctl.h"

extern struct srcu_struct rculabs_srcu;

struct srcumod_ctl srcumod_ctl = { .ssp = &rculabs_srcu, .per_cpu = 2 };

module_param_named(per_cpu, srcumod_ctl.per_cpu, int, 0444);
MODULE_PARM_DESC(per_cpu, "callbacks module_init queues on each CPU");
module_param_named(exit_barrier, srcumod_ctl.exit_barrier, bool, 0444);
MODULE_PARM_DESC(exit_barrier, "exit with srcu_barrier() (else synchronize_srcu() only)");
