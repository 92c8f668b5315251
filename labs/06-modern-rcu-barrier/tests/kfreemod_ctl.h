/*
 * kfreemod_ctl.h - what lab 6's module tests and kfreemod share.
 *
 * Rule kept here: what a test needs after the module is gone lives outside
 * it (defined by test_module.c, reached through the executable's exported
 * symbols).
 */
#ifndef KFREEMOD_CTL_H
#define KFREEMOD_CTL_H

#include <stdbool.h>

struct kfreemod_ctl {
	int per_cpu;       /* objects module_init frees after a grace period, on each CPU */
	bool own_callback; /* with call_rcu() and the module's own callback (else kfree_rcu()) */
};

extern struct kfreemod_ctl kfreemod_ctl;

#endif
