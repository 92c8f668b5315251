/*
 * srcumod_ctl.h - what lab 5's module test and srcumod share.
 *
 * Rule kept here: what a test needs after the module is gone lives outside
 * it (here, defined by test_module.c, reached through the executable's
 * exported symbols); the kernel's module_counts() says what it queued and
 * what was invoked.
 */
#ifndef SRCUMOD_CTL_H
#define SRCUMOD_CTL_H

#include <stdbool.h>
#include <linux/srcu.h>

struct srcumod_ctl {
	struct srcu_struct *ssp; /* the kernel's domain the module uses */
	int per_cpu;             /* callbacks module_init queues on each CPU */
	bool exit_barrier;       /* exit with srcu_barrier() (else synchronize_srcu() only) */
};

extern struct srcumod_ctl srcumod_ctl;

#endif
