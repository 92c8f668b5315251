/* SPDX-License-Identifier: GPL-2.0 */
/*
 * real.h - lab 2's call_rcu.c under names of its own in a real module (real
 * runs only; the build force-includes it after rculabs_real.h).
 *
 * Rule kept here: the student's file defines call_rcu() and struct
 * rcu_cblist, which the kernel has too. The kernel's headers are read here
 * first, under their own names; from then on call_rcu and rcu_cblist are
 * renamed, so the student's definitions (and the given checks' calls) are
 * the module's own, and the kernel's stay the kernel's. What the lab's API
 * adds to <linux/rcupdate.h> in the simulation is declared here.
 */
#ifndef LAB2_REAL_H
#define LAB2_REAL_H

#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcu_segcblist.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#define call_rcu rculabs_call_rcu
#define rcu_cblist rculabs_cblist

void call_rcu(struct rcu_head *head, rcu_callback_t func);
void rcu_callbacks_init(void);
void rcu_callbacks_exit(void);
void rcu_set_blimit(int n);

#endif
