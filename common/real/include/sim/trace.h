/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim/trace.h on a real kernel: the simulation's timeline has no real
 * counterpart here, so a lab's trace calls do nothing (real runs only).
 */
#ifndef RCULABS_REAL_TRACE_H
#define RCULABS_REAL_TRACE_H

struct rcu_head;

static inline void trace_rcu_callback_queued(struct rcu_head *head)
{
}

static inline void trace_rcu_gp(int start, unsigned long gp_seq)
{
}

#endif
