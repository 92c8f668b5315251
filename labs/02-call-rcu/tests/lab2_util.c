/*
 * lab2_util.c - the helpers lab 2's test files share (lab2.h).
 *
 * Rule kept here: helpers only; no test lives here.
 */
#include <string.h>
#include <linux/compiler.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <sim/test.h>
#include <sim/testlib.h>
#include "rculist.h"
#include "lab2.h"

struct foo *gp;          /* the published pointer readers follow */
int nr_reclaimed;        /* foo_reclaim() calls */
int bad_container;       /* callbacks whose object had a wrong magic */
int reader_saw_poison;   /* a reader found its object freed under it */
int reader_value;
int reclaimed_on;        /* the CPU foo_reclaim() last ran on */

unsigned long long seed(void)
{
	return (unsigned long long)sim_seed();
}

/* Every scenario begins so: nothing published or counted yet, and the
 * lab's callback machinery started (rcu_callbacks_init()). */
void scenario_start(void)
{
	gp = NULL;
	nr_reclaimed = 0;
	bad_container = 0;
	reader_saw_poison = 0;
	reader_value = 0;
	reclaimed_on = -1;
	rcu_callbacks_init();
}

struct foo *foo_new(int value)
{
	struct foo *p = kzalloc(sizeof(*p), GFP_ATOMIC);

	p->magic = FOO_MAGIC;
	p->value = value;
	return p;
}

/* The article's p_callback(): find the object from its rcu_head and free it. */
void foo_reclaim(struct rcu_head *rp)
{
	struct foo *p = container_of(rp, struct foo, rcu);

	if (p->magic != FOO_MAGIC)
		bad_container++;
	nr_reclaimed++;
	reclaimed_on = smp_processor_id();
	kfree(p);
}

/* A reader: enters, picks up gp, stops at the named point @arg (the test
 * holds it there), then uses what it picked up and leaves. */
int reader_fn(void *arg)
{
	const char *point = arg;
	struct foo *p;

	rcu_read_lock();
	p = rcu_dereference(gp);
	sim_point(point);
	if (p) {
		if (kmem_is_poisoned(p, sizeof(*p)))
			reader_saw_poison = 1;
		else
			reader_value = p->value;
	}
	rcu_read_unlock();
	return 0;
}

/* Publish @p and start a reader on @cpu that picks it up and stays inside
 * its read-side critical section (held at "reader_inside") until let go. */
struct task_struct *reader_inside_on(int cpu, struct foo *p)
{
	struct task_struct *r;

	rcu_assign_pointer(gp, p);
	r = sim_kthread_run_held("reader_inside", reader_fn, "reader_inside", cpu, "reader");
	cr_assert_eq(sim_tasks_at_point("reader_inside"), 1,
		     "seed %llu: test setup: the reader on CPU %d should be inside its "
		     "read-side critical section", seed(), cpu);
	return r;
}

/*
 * Let the reader of reader_inside_on() go. It must not have found its
 * object freed; once it has left a grace period can end, and @what (the
 * callback queued for that object) must then have run exactly once, on the
 * object whose rcu_head call_rcu() was given.
 */
void reader_leaves(struct task_struct *r, const char *what)
{
	sim_release_point("reader_inside");
	sim_run_until_idle();
	cr_assert(!reader_saw_poison,
		  "seed %llu: the reader found its object freed under it", seed());
	kthread_stop(r);
	cr_assert_eq(nr_reclaimed, 1,
		     "seed %llu: the reader left and a grace period could end, but %s was "
		     "invoked %d times instead of once (is rcuo/0 started in "
		     "rcu_callbacks_init()? does call_rcu() wake it? does it invoke "
		     "rcu_done?)", seed(), what, nr_reclaimed);
	cr_assert_eq(bad_container, 0,
		     "seed %llu: %s was given a pointer that is not the rcu_head passed to "
		     "call_rcu(): container_of() found no object", seed(), what);
	cr_assert_eq(reclaimed_on, 0,
		     "seed %llu: %s ran on CPU %d: callbacks are invoked by rcuo/0, which "
		     "runs on RCU_CB_CPU (CPU 0), bound there with kthread_run_on_cpu() "
		     "(TODO 7); the tests keep CPUs 1-3 for readers, updaters and interrupts",
		     seed(), what, reclaimed_on);
}

/* The updater, on CPU 1: unpublish @p, then hand it to RCU. */
void unpublish_and_call_rcu(struct foo *p)
{
	migrate_to_cpu(1);
	WRITE_ONCE(gp, NULL);
	call_rcu(&p->rcu, foo_reclaim);
	migrate_to_cpu(-1);
	sim_run_until_idle();
}


int *invoked_order;      /* idx of each invocation, in order */
int nr_invoked;
int *times_invoked;      /* per idx */
int nr_duplicates;
int nr_bypassed;         /* invoked without rcu_invoke_callback() */

void item_cb(struct rcu_head *rp)
{
	struct item *it = container_of(rp, struct item, rcu);

	if (rcu_invoking_callback() != item_cb)
		nr_bypassed++;
	if (invoked_order)
		invoked_order[nr_invoked] = it->idx;
	if (times_invoked && times_invoked[it->idx]++)
		nr_duplicates++;
	nr_invoked++;
}

/*
 * Queue the callbacks of @items[0..@n) (item_cb), numbered in order, in
 * bursts of @burst from CPUs 1, 2, 3 in turn (moving between bursts lets
 * grace periods and passes happen); then let everything run.
 */
void queue_items_in_bursts(struct item *items, int n, int burst)
{
	for (int i = 0; i < n; i++) {
		if (i % burst == 0)
			migrate_to_cpu(1 + (i / burst) % 3);
		items[i].idx = i;
		call_rcu(&items[i].rcu, item_cb);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
}
