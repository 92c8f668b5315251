/*
 * test_seq.c - the barrier sequence number: a caller that arrives while a
 * barrier is running needs one that starts after it (the running one may
 * have passed its CPU already), and callers that wait together for the
 * barrier mutex share the next one instead of each doing its own.
 */
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <sim/test.h>
#include "lab6_util.h"

static struct slow_cb blocker;  /* on CPU 1: keeps the first barrier running */
static struct rec_cb own;       /* the late caller's own callback, on CPU 2 */

static void queue_own(struct barrier_caller *bc)
{
	rec_cb_init(&own, bc->cpu);
	call_rcu_hurry(&own.rh, rec_cb_func);
}

static void note_own_ran(struct barrier_caller *bc)
{
	bc->early = READ_ONCE(own.times) != 1;
}

static void note_blocker_done(struct barrier_caller *bc)
{
	bc->early = !READ_ONCE(blocker.finished);
}

static void late_caller(void *arg)
{
	static struct barrier_caller first, late;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	start_slow_on(1, &blocker);
	first = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_blocker_done };
	barrier_caller_start(&first, 0);
	sim_run_until_idle();
	/* The first barrier is past CPU 2 and waits for CPU 1. */
	sim_hold_point(pass_point(2));
	late = (struct barrier_caller){ .do_barrier = rcu_barrier, .before = queue_own,
					.at_return = note_own_ran };
	barrier_caller_start(&late, 2);
	sim_run_until_idle();
	trace_mark("the first barrier may end");
	slow_cb_release(&blocker);
	sim_run_until_idle();
	cr_assert(READ_ONCE(first.returned) && !first.early, "the first rcu_barrier() did not "
		  "return once CPU 1's callback had run, or returned before (TODO 6, 7)");
	cr_assert(!READ_ONCE(late.returned),
		  "seed %llu: an rcu_barrier() called on CPU 2 while another was running returned "
		  "when that one ended, with the callback it had queued on CPU 2 just before still "
		  "waiting: the running barrier had passed CPU 2 before that callback was queued, "
		  "and the snapshot took its end for enough (TODO 5: rcu_seq_snap())",
		  (unsigned long long)sim_seed());
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	cr_assert(READ_ONCE(late.returned) && !late.early, "the second rcu_barrier() did not "
		  "return once its own callback on CPU 2 had run, or returned before (TODO 5-7)");
	barrier_caller_stop(&first);
	barrier_caller_stop(&late);
	lab6_end();
}

SIM_TEST(seq, caller_during_a_barrier_waits_for_the_next)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, late_caller, NULL);
}

/*
 * Barrier A runs (it waits for CPU 1's blocked callback); B and C are called
 * meanwhile and wait for the mutex. Each needs a barrier that starts after
 * it: one more, after A, serves both.
 */
static void shared_barrier(void *arg)
{
	static struct barrier_caller bc[3];
	unsigned long seq0, ran;

	(void)arg;
	rcu_callbacks_init();
	start_slow_on(1, &blocker);
	seq0 = rcu_barrier_sequence();
	for (int i = 0; i < 3; i++) {
		bc[i] = (struct barrier_caller){ .do_barrier = rcu_barrier };
		barrier_caller_start(&bc[i], i == 0 ? 0 : i + 1);
		sim_run_until_idle();
	}
	cr_assert(!READ_ONCE(bc[0].returned), "rcu_barrier() returned while CPU 1's callback, "
		  "queued before it, was still running (TODO 6, 7)");
	slow_cb_release(&blocker);
	sim_run_until_idle();
	for (int i = 0; i < 3; i++)
		cr_assert(READ_ONCE(bc[i].returned), "rcu_barrier() #%d of 3 never returned", i + 1);
	ran = (rcu_barrier_sequence() - seq0) / 2;
	cr_assert_eq(ran, 2ul,
		     "seed %llu: 3 callers, %lu barriers that did their work (rcu_barrier_sequence() "
		     "went from %lu to %lu): expected 2, the first caller's and one that the other "
		     "two, waiting for the mutex together, share: a barrier that started after "
		     "both of them had ended when the last took the mutex, and it did the work "
		     "again (TODO 5: rcu_seq_snap(), rcu_seq_done(), the start of rcu_barrier())",
		     (unsigned long long)sim_seed(), ran, seq0, rcu_barrier_sequence());
	for (int i = 0; i < 3; i++)
		barrier_caller_stop(&bc[i]);
	lab6_end();
}

SIM_TEST(seq, waiting_callers_share_one_barrier)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, shared_barrier, NULL);
}
