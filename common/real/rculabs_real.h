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
 *  - a lab's test-control header (lab 3's mymod_ctl.h): the lab's real/ folder
 *    gives a version whose parameters are module parameters.
 */
#ifndef RCULABS_REAL_H
#define RCULABS_REAL_H

#include <linux/module.h>

#define MODULE_NAME(name)

#endif
