/*
 * practice_flavours.c - two broken RCUs the student may read and practise
 * on: rcutorture's own "busted" flavour (no grace period at all), and one
 * whose rcu_barrier() waits for nothing. The graded set holds more, unseen.
 *
 * Rule kept here: a broken flavour is the reference RCU with one thing
 * wrong, and its ops table names only that thing (torture_flavour() takes
 * the rest from the reference); it leaks nothing by itself (its cb_exit
 * lets every queued callback run), so that a torture that catches it passes
 * cleanly.
 */
#include <linux/rcupdate.h>
#include <sim/test.h>
#include "torture_ops.h"

/* rcutorture's rcu_busted_ops: updaters never wait, callbacks run at once. */
static void busted_sync(void)
{
}

static void busted_call(struct rcu_head *head, rcu_callback_t func)
{
	func(head);
}

static const struct broken_flavour busted_flavour = {
	.except = { .name = "busted", .sync = busted_sync, .call = busted_call },
	.bug = "synchronize_rcu() returns at once, call_rcu() invokes its callback at once",
};

/* A barrier that returns at once: callbacks queued before it may not have run. */
static void no_barrier(void)
{
}

static const struct broken_flavour no_barrier_flavour = {
	.except = { .name = "no_barrier", .cb_barrier = no_barrier },
	.bug = "rcu_barrier() returns at once",
};

TORTURE_CATCHES(practice, busted, "an RCU with no grace periods at all")
TORTURE_CATCHES(practice, no_barrier, "an rcu_barrier() that waits for nothing")
