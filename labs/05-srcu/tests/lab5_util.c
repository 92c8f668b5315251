/* lab5_util.c - see lab5.h. */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <sim/sim.h>
#include <sim/test.h>
#include "lab5.h"

static int reader_fn(void *arg)
{
	struct reader *r = arg;
	int idx = srcu_read_lock(r->ssp);

	WRITE_ONCE(r->idx, idx);
	WRITE_ONCE(r->inside, 1);
	if (r->inner) {
		wait_for_completion(&r->go_inner);
		synchronize_srcu(r->inner);
		WRITE_ONCE(r->inner_returned, 1);
	}
	if (r->write_inside) {
		sim_store(&r->data, 1);
		WRITE_ONCE(r->stored, 1);
	}
	if (r->stand)
		sim_point(READER_INSIDE);
	else if (!r->no_sleep && !r->write_inside)
		wait_for_completion(&r->release); /* sleeping inside: legal in SRCU */
	srcu_read_unlock(r->ssp, idx);
	WRITE_ONCE(r->done, 1);
	return 0;
}

void reader_start(struct reader *r, struct srcu_struct *ssp, int cpu)
{
	r->ssp = ssp;
	r->inside = r->done = r->inner_returned = 0;
	r->idx = -1;
	init_completion(&r->release);
	init_completion(&r->go_inner);
	r->task = kthread_run_on_cpu(reader_fn, r, cpu, "reader/%u");
}

void reader_release(struct reader *r)
{
	complete(&r->release);
}

static int updater_fn(void *arg)
{
	struct updater *u = arg;

	if (u->barrier)
		srcu_barrier(u->ssp);
	else
		synchronize_srcu(u->ssp);
	WRITE_ONCE(u->returned, 1);
	return 0;
}

void updater_start(struct updater *u, struct srcu_struct *ssp, int cpu, bool barrier)
{
	u->ssp = ssp;
	u->barrier = barrier;
	u->returned = 0;
	u->task = kthread_run_on_cpu(updater_fn, u, cpu, "updater/%u");
}

void updater_reap(struct updater *u)
{
	if (u->task && READ_ONCE(u->returned))
		kthread_stop(u->task);
	u->task = NULL;
}

void call_srcu_on(int cpu, struct srcu_struct *ssp, struct rcu_head *rh, rcu_callback_t f)
{
	migrate_to_cpu(cpu);
	call_srcu(ssp, rh, f);
	migrate_to_cpu(-1);
}

void settle(int n)
{
	sim_run_until_idle();
	for (int i = 0; i < n; i++) {
		sim_advance_jiffies(1);
		sim_run_until_idle();
	}
}

void cleanup_after_readers(struct srcu_struct *ssp)
{
	for (int idx = 0; idx < 2; idx++) {
		unsigned long locks = 0, unlocks = 0;

		for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
			locks += READ_ONCE(ssp->sda[cpu].srcu_lock_count[idx]);
			unlocks += READ_ONCE(ssp->sda[cpu].srcu_unlock_count[idx]);
		}
		cr_assert_eq(locks, unlocks, "every reader this test started has left, yet the "
			     "domain's counts say one is inside: index %d has %lu "
			     "srcu_read_lock()s and %lu srcu_read_unlock()s, summed over the CPUs "
			     "(cleanup_srcu_struct() would BUG here). Does srcu_read_unlock() count "
			     "once, under the index its srcu_read_lock() returned (TODO 1)?",
			     idx, locks, unlocks);
	}
	cleanup_srcu_struct(ssp);
}
