/*
 * lab2.h - what lab 2's test files share: an RCU-protected object (struct
 * foo) with its reader and updater, and numbered callbacks (struct item),
 * both defined in lab2_util.c.
 *
 * Rule kept here: a scenario starts from scenario_start() (struct foo) or
 * resets the item counters itself, so no test sees another's counts.
 */
#ifndef LAB2_TESTS_H
#define LAB2_TESTS_H

#include <linux/rcupdate.h>
#include <linux/sched.h>

#define FOO_MAGIC 0x5eed1234

/* An RCU-protected object. The rcu_head is not its first member, so a
 * callback must subtract its offset (container_of()) to find the object. */
struct foo {
	int magic;
	int value;
	struct rcu_head rcu;
	int id;
};

extern struct foo *gp;          /* the published pointer readers follow */
extern int nr_reclaimed;        /* foo_reclaim() calls */
extern int bad_container;       /* callbacks whose object had a wrong magic */
extern int reader_saw_poison;   /* a reader found its object freed under it */
extern int reader_value;
extern int reclaimed_on;        /* the CPU foo_reclaim() last ran on */

/* The seed of this run, for messages. */
unsigned long long seed(void);

/* Every scenario begins so: nothing published or counted yet, and the
 * lab's callback machinery started (rcu_callbacks_init()). */
void scenario_start(void);

struct foo *foo_new(int value);

/* The article's p_callback(): find the object from its rcu_head and free it. */
void foo_reclaim(struct rcu_head *rp);

/* A reader: enters, picks up gp, stops at the named point @arg (the test
 * holds it there), then uses what it picked up and leaves. */
int reader_fn(void *arg);

/* Publish @p and start a reader on @cpu that picks it up and stays inside
 * its read-side critical section (held at "reader_inside") until let go. */
struct task_struct *reader_inside_on(int cpu, struct foo *p);

/*
 * Let the reader of reader_inside_on() go. It must not have found its
 * object freed; once it has left a grace period can end, and @what (the
 * callback queued for that object) must then have run exactly once, on the
 * object whose rcu_head call_rcu() was given.
 */
void reader_leaves(struct task_struct *r, const char *what);

/* The updater, on CPU 1: unpublish @p, then hand it to RCU. */
void unpublish_and_call_rcu(struct foo *p);

/* A numbered callback; item_cb() records each invocation. */
struct item {
	struct rcu_head rcu;
	int idx;
};

extern int *invoked_order;      /* idx of each invocation, in order, or NULL */
extern int nr_invoked;
extern int *times_invoked;      /* per idx, or NULL */
extern int nr_duplicates;
extern int nr_bypassed;         /* invoked without rcu_invoke_callback() */

void item_cb(struct rcu_head *rp);

/*
 * Queue the callbacks of @items[0..@n) (item_cb), numbered in order, in
 * bursts of @burst from CPUs 1, 2, 3 in turn (moving between bursts lets
 * grace periods and passes happen); then let everything run.
 */
void queue_items_in_bursts(struct item *items, int n, int burst);

#endif
