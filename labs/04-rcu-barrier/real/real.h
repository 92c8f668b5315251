/* SPDX-License-Identifier: GPL-2.0 */
/*
 * real.h - lab 4's tree_rcu.c under names of its own in a real module (real
 * runs only; the build force-includes it after rculabs_real.h).
 *
 * Rule kept here: the student's file defines call_rcu() and rcu_barrier(),
 * which the kernel has too. The kernel's headers are read here first, under
 * their own names; from then on both are renamed, so the student's
 * definitions (and the given checks' calls) are the module's own. What the
 * lab's API adds to <linux/rcupdate.h> in the simulation is declared here.
 */
#ifndef LAB4_REAL_H
#define LAB4_REAL_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/wait.h>

#define call_rcu rculabs_call_rcu
#define rcu_barrier rculabs_rcu_barrier

void call_rcu(struct rcu_head *head, rcu_callback_t func);
void rcu_barrier(void);
void rcu_callbacks_init(void);
void rcu_callbacks_exit(void);
void rcu_set_blimit(int n);

#endif
