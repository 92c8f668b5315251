// SPDX-License-Identifier: GPL-2.0
/*
 * torture_mod.c - the student's torture (torture.c) as a real module, run on
 * the kernel's own RCU or on a broken flavour of it (real runs only).
 *
 * Rule kept here: the verdict is stated the way the simulation's checks
 * state it (tests/torture_check.c): on "rcu" the torture must really run and
 * see nothing wrong; on a broken flavour it must report an error. The module
 * prints one line "RCULABS: PASS ..." or "RCULABS: FAIL ...", which the host
 * reads from the console; its init returns 0 either way, and its exit has
 * nothing left to do (the torture leaves nothing behind).
 *
 * The broken flavours are the kernel's RCU "except" one thing, as the lab's
 * catches/ tests state theirs; each gets up to TRIES runs to be caught (the
 * message says which run caught it), the kernel's RCU one run.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include "torture_ops.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RCU Labs: the student's torture on the kernel's RCU");

static char *flavour = "rcu";
module_param(flavour, charp, 0444);
MODULE_PARM_DESC(flavour, "rcu, or a broken flavour: sync_at_once, barrier_at_once, "
		 "read_unprotected, call_at_once");

/*
 * A reader lingers: 20 us, and one section in 256 for 20 ms, longer than a
 * grace period here (rcutorture's rcu_read_delay() does the same), so that
 * a grace period that does not wait for readers ends inside one.
 */
static void real_read_delay(void)
{
	static atomic_t reads;

	if (atomic_inc_return(&reads) % 256 == 0)
		mdelay(20);
	else
		udelay(20);
}

static void nothing(void)
{
}

static void call_at_once(struct rcu_head *head, rcu_callback_t func)
{
	func(head);
}

/* Linux's own RCU; it needs no starting or stopping. */
static const struct rcu_torture_ops real_ops = RCU_TORTURE_OPS(real_read_delay, nothing, nothing);

/* Each broken flavour: its name, what it breaks (for the message), its ops. */
static struct {
	const char *name;
	const char *bug;
	int updates;        /* enough for the bug to meet a reader */
	struct rcu_torture_ops ops;
} flavours[] = {
	{ "rcu", NULL, 100 },
	/* Without grace periods a writer is done in a blink: make it long. */
	{ "sync_at_once", "synchronize_rcu() returns at once, before any reader is done",
	  100000 },
	{ "barrier_at_once", "rcu_barrier() returns at once, before the callbacks ran", 100 },
	{ "read_unprotected", "rcu_read_lock() protects nothing (a grace period may end "
	  "inside a reader)", 100 },
	{ "call_at_once", "call_rcu() invokes its callback at once, before any grace period",
	  300 },
};

static void make_flavours(void)
{
	for (int i = 0; i < ARRAY_SIZE(flavours); i++) {
		flavours[i].ops = real_ops;
		flavours[i].ops.name = flavours[i].name;
	}
	flavours[1].ops.sync = nothing;
	flavours[2].ops.cb_barrier = nothing;
	flavours[3].ops.readlock = nothing;
	flavours[3].ops.readunlock = nothing;
	flavours[4].ops.call = call_at_once;
}

/* As in tests/torture_check.c: the torture reports; this sums. */
long torture_errors(const struct torture_result *res)
{
	return res->age_errors + res->free_errors + res->barrier_errors;
}

static void say(const char *verdict, const struct rcu_torture_ops *ops,
		const struct torture_result *r, const char *what)
{
	pr_info("RCULABS: %s torture on %s: %s (ran %d, reads %ld, ages %ld/%ld/%ld/%ld/%ld, "
		"updates %ld, grace periods %ld, callbacks %ld, barrier rounds %ld; errors: "
		"age %ld, freed %ld, barrier %ld; %s)\n", verdict, ops->name, what, r->ran,
		r->reads, r->pipe[0], r->pipe[1], r->pipe[2], r->pipe[3], r->pipe[4],
		r->updates, r->grace_periods, r->callbacks, r->barrier_rounds, r->age_errors,
		r->free_errors, r->barrier_errors, r->success ? "SUCCESS" : "FAILURE");
}

/* A broken flavour gets this many runs to be caught: real CPUs race as they like. */
#define TRIES 3

static int __init torture_mod_init(void)
{
	struct torture_params p = { .n_fakewriters = 1, .use_call = true,
				    .n_barrier_rounds = 16 };
	struct torture_result *r;
	int i, run = 1;

	make_flavours();
	for (i = 0; i < ARRAY_SIZE(flavours); i++)
		if (!strcmp(flavour, flavours[i].name))
			break;
	if (i == ARRAY_SIZE(flavours)) {
		pr_info("RCULABS: FAIL torture on %s: no such flavour\n", flavour);
		return 0;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	p.n_updates = flavours[i].updates;
	rcu_torture_run(&flavours[i].ops, &p, r);
	while (flavours[i].bug && !torture_errors(r) && run++ < TRIES) {
		memset(r, 0, sizeof(*r));
		rcu_torture_run(&flavours[i].ops, &p, r);
	}
	if (!flavours[i].bug && (!r->ran || !r->reads || !r->updates || torture_errors(r) ||
				 !r->success))
		say("FAIL", &flavours[i].ops, r, "a false alarm, or a torture that did not run: "
		    "the kernel's RCU is not broken");
	else if (!flavours[i].bug)
		say("PASS", &flavours[i].ops, r, "no false alarm");
	else if (!torture_errors(r) || r->success)
		say("FAIL", &flavours[i].ops, r, flavours[i].bug);
	else if (run > 1)
		say("PASS", &flavours[i].ops, r, run == 2 ? "caught in the second run" :
		    "caught in the third run");
	else
		say("PASS", &flavours[i].ops, r, "caught");
	kfree(r);
	return 0;
}

static void __exit torture_mod_exit(void)
{
}

module_init(torture_mod_init);
module_exit(torture_mod_exit);
