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
	lab6_begin();
	start_slow_on(1, &blocker);
	start_barrier(&first, 0, note_blocker_done);
	/* The first barrier is past CPU 2 and waits for CPU 1. */
	sim_hold_point(pass_point(2));
	late = (struct barrier_caller){ .do_barrier = rcu_barrier, .before = queue_own,
					.at_return = note_own_ran };
	barrier_caller_start(&late, 2);
	sim_run_until_idle();
	trace_mark("the first barrier may end");
	slow_cb_release(&blocker);
	sim_run_until_idle();
	expect_returned(&first, "CPU 1's callback had run");
	expect_waiting(&late, "the callback its caller had queued on CPU 2 just before was "
		       "still waiting; it was called while another barrier ran, and returned "
		       "when that one ended, but that one had passed CPU 2 before the callback "
		       "was queued: the snapshot took its end for enough (TODO 5: rcu_seq_snap())");
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	expect_returned(&late, "its own callback on CPU 2 had run");
	lab6_end();
}

SEEDS_TEST(seq, caller_during_a_barrier_waits_for_the_next, late_caller, 4, ANY_MODE)

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
	for (int i = 0; i < 3; i++)
		start_barrier(&bc[i], i == 0 ? 0 : i + 1, NULL);
	expect_waiting(&bc[0], "CPU 1's callback, queued before it, was still running (TODO 6, 7)");
	slow_cb_release(&blocker);
	sim_run_until_idle();
	for (int i = 0; i < 3; i++)
		cr_assert(READ_ONCE(bc[i].returned), "seed %llu: rcu_barrier() #%d of 3 never "
			  "returned once CPU 1's callback had run (TODO 5: the sequence's end; "
			  "TODO 7: the wait)", (unsigned long long)sim_seed(), i + 1);
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

SEEDS_TEST(seq, waiting_callers_share_one_barrier, shared_barrier, 4, ANY_MODE)
