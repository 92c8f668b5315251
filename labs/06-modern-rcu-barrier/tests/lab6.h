/*
 * lab6.h - what lab 6's tree.c and its tests share: the lazy callbacks'
 * limits, and the given functions the tests read.
 *
 * Rule kept here: the tests learn what tree.c did only through the RCU API
 * (linux/rcupdate.h), the kernel's trace, and the functions below, which
 * tree.c gives (not the student's to write).
 */
#ifndef LAB6_H
#define LAB6_H

#include <linux/timer.h>

/*
 * How long a lazy callback may wait for a grace period to be asked for it:
 * Linux's LAZY_FLUSH_JIFFIES (kernel/rcu/tree_nocb.h, v6.2), 10 seconds.
 */
#define LAZY_FLUSH_JIFFIES (10 * HZ)

/*
 * How many lazy callbacks a CPU may hold before they are flushed at once.
 * Linux flushes its lazy ("bypass") list at qhimark, 10000 callbacks; the
 * lab flushes at 16, so that a test reaches it.
 */
#define LAZY_FLUSH_CBS 16

/*
 * rcu_barrier_sequence() - rcu_state.barrier_sequence: each barrier that
 * does its work adds 1 when it starts and 1 when it ends, so that
 * sequence / 2 barriers have ended; odd while one is running. (Given.)
 */
unsigned long rcu_barrier_sequence(void);

#endif
