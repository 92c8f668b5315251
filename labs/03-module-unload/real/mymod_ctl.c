// SPDX-License-Identifier: GPL-2.0
/*
 * mymod_ctl.c - lab 3's test controls as module parameters (real runs only).
 *
 * Rule kept here: linked into every lab 3 module built for a real kernel, it
 * holds what the simulation's test binary holds: the parameters the module's
 * init reads (writer=1 writer_cpu=1 timer=1 reposters=N), declared in
 * tests/mymod_ctl.h, the header the simulation's tests use.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "mymod_ctl.h"

struct mymod_ctl mymod_ctl;

module_param_named(writer, mymod_ctl.writer, bool, 0444);
MODULE_PARM_DESC(writer, "start the writer kthread");
module_param_named(writer_cpu, mymod_ctl.writer_cpu, int, 0444);
MODULE_PARM_DESC(writer_cpu, "the CPU the writer runs on");
module_param_named(timer, mymod_ctl.timer, bool, 0444);
MODULE_PARM_DESC(timer, "arm the timer (one callback per jiffy)");
module_param_named(reposters, mymod_ctl.reposters, int, 0444);
MODULE_PARM_DESC(reposters, "self-reposting callbacks to start");
