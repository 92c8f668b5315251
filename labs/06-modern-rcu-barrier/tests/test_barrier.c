/*
 * test_barrier.c - today's rcu_barrier(): it waits for every callback
 * queued on any CPU before it; it skips (no cross-call) the CPUs that have
 * none; each marker goes behind its CPU's last callback, in that
 * callback's segment; and its count survives a marker that runs before it
 * is counted.
 */
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/smp.h>
#include <sim/test.h>
#include "lab6_util.h"

#define NCPU 4

static struct slow_cb slow[NCPU];
static struct rec_cb behind[NCPU][2];

static void note_all_finished(struct barrier_caller *bc)
{
	for (int cpu = 0; cpu < NCPU; cpu++)
		bc->early |= !READ_ONCE(slow[cpu].finished) ||
			     READ_ONCE(behind[cpu][0].times) != 1 ||
			     READ_ONCE(behind[cpu][1].times) != 1;
}

/* A blocked callback with two more behind it on every CPU; released one CPU at a time. */
static void every_cpu(void *arg)
{
	static struct barrier_caller bc;
	static const int order[NCPU] = { 2, 0, 3, 1 };

	(void)arg;
	lab6_begin();
	for (int cpu = 0; cpu < NCPU; cpu++) {
		start_slow_on(cpu, &slow[cpu]);
		for (int i = 0; i < 2; i++) {
			queue_rec_on(cpu, &behind[cpu][i], false);
		}
	}
	start_barrier(&bc, 0, note_all_finished);
	for (int k = 0; k < NCPU; k++) {
		expect_waiting(&bc, "CPU %d's callbacks, queued before it, had not run: every CPU "
			       "with callbacks needs a marker behind its last one, and the barrier "
			       "waits until every marker has run (TODO 6, 7)", order[k]);
		release_slow(&slow[order[k]]);
	}
	finish(&bc, "every callback queued before it on every CPU had run");
}

SEEDS_TEST(barrier, waits_for_every_callback_on_every_cpu, every_cpu, NCPU, ANY_MODE)

/* ---- skip: no cross-call to a CPU without callbacks ------------------------ */

static struct rec_cb ready[3];

static void note_ready_run(struct barrier_caller *bc)
{
	for (int i = 0; i < 3; i++)
		bc->early |= READ_ONCE(ready[i].times) != 1;
}

/* Events of @type recorded since the count was @before. */
static long since(enum trace_type type, long before)
{
	return trace_count(type) - before;
}

static void only_cpus_with_callbacks(void *arg)
{
	static struct barrier_caller idle, busy;
	long ipis = trace_count(TR_IPI_SEND), gps = trace_count(TR_GP_START);

	(void)arg;
	lab6_begin();
	start_barrier(&idle, 0, NULL);
	cr_assert(READ_ONCE(idle.returned), "seed %llu: rcu_barrier() on a system with no "
		  "callbacks at all did not return at once: with no marker linked, nothing is left "
		  "to wait for (TODO 7)", (unsigned long long)sim_seed());
	cr_assert(!since(TR_IPI_SEND, ipis) && !since(TR_GP_START, gps),
		  "rcu_barrier() with no callbacks queued anywhere sent %ld cross-call(s) and "
		  "waited for %ld grace period(s): a CPU whose list is empty (->len 0) has "
		  "nothing a marker could wait behind (TODO 7)",
		  since(TR_IPI_SEND, ipis), since(TR_GP_START, gps));
	barrier_caller_stop(&idle);

	queue_ready_held(2, ready, 3);
	ipis = trace_count(TR_IPI_SEND);
	start_barrier(&busy, 1, note_ready_run);
	expect_waiting(&busy, "the 3 callbacks queued on CPU 2 before it were still waiting "
		       "there: CPU 2 needs a marker (TODO 6, 7)");
	cr_assert_eq(since(TR_IPI_SEND, ipis), 1, "rcu_barrier() on CPU 1, with callbacks on "
		     "CPU 2 only, sent %ld cross-calls: exactly one, to CPU 2 (TODO 7)",
		     since(TR_IPI_SEND, ipis));
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	finish(&busy, "CPU 2's callbacks had run");
}

SEEDS_TEST(skip, only_cpus_with_callbacks_get_a_cross_call, only_cpus_with_callbacks, NCPU, ANY_MODE)

/* A callback being invoked still counts; lazy ones count too. */
static struct slow_cb running;
static struct rec_cb idle_lazy[2];

static void note_running_done(struct barrier_caller *bc)
{
	bc->early = !READ_ONCE(running.finished) || READ_ONCE(idle_lazy[0].times) != 1 ||
		    READ_ONCE(idle_lazy[1].times) != 1;
}

static void not_yet_done(void *arg)
{
	static struct barrier_caller bc;

	(void)arg;
	lab6_begin();
	start_slow_on(3, &running);
	for (int i = 0; i < 2; i++) {
		queue_rec_on(1, &idle_lazy[i], true);
	}
	start_barrier(&bc, 0, note_running_done);
	expect_waiting(&bc, "a callback queued on CPU 3 before it was still running (taken off "
		       "CPU 3's list, being invoked): CPU 3 was skipped. Only a CPU whose ->len is "
		       "0 may be skipped, and ->len counts a callback until it has been invoked "
		       "(TODO 3: when ->len drops; TODO 7: the skip)");
	release_slow(&running);
	cr_assert(READ_ONCE(idle_lazy[0].times) == 1 && READ_ONCE(idle_lazy[1].times) == 1,
		  "seed %llu: CPU 1's two lazy callbacks, queued before the barrier, ran %d and %d "
		  "time(s) by the time CPU 3's callback had finished: the marker behind them must "
		  "hurry them, and rcuc/1 be woken to see it (TODO 6)", (unsigned long long)sim_seed(),
		  READ_ONCE(idle_lazy[0].times), READ_ONCE(idle_lazy[1].times));
	cr_assert(idle_lazy[1].seq > idle_lazy[0].seq && idle_lazy[0].ran_on == 1,
		  "CPU 1's lazy callbacks ran out of order or elsewhere (TODO 1-3)");
	finish(&bc, "CPU 3's running callback and CPU 1's lazy ones had run");
}

SEEDS_TEST(skip, cpu_with_callbacks_not_yet_done_is_not_skipped, not_yet_done, NCPU, ANY_MODE)

/*
 * A call_rcu() that has returned is not skipped: the store-buffering race
 * that Linux's comment on rcu_segcblist_add_len() calls CASE 1. CPU 2
 * queues, then looks at a flag; the barrier's caller sets the flag, then
 * calls rcu_barrier(), which reads CPU 2's ->len with none of CPU 2's
 * locks. If CPU 2 saw the flag still unset, its call_rcu() came first and
 * the barrier must wait for its callback. CPU 2 is held right after its
 * look, with whatever call_rcu() left in its store buffer still there: a
 * store there drains only at a barrier (late_store_delay), so the test
 * sees what call_rcu() itself ordered, on every seed.
 */
static struct rec_cb looked;
static int going, saw_going = -1;

static int queue_then_look(void *arg)
{
	(void)arg;
	call_rcu(&looked.rh, rec_cb_func);
	WRITE_ONCE(saw_going, READ_ONCE(going));
	sim_point("lab6_looked");
	return 0;
}

static void set_going(struct barrier_caller *bc)
{
	(void)bc;
	WRITE_ONCE(going, 1);
}

static void note_looked_ran(struct barrier_caller *bc)
{
	bc->early = READ_ONCE(looked.times) != 1;
}

static void returned_call_rcu(void *arg)
{
	static struct barrier_caller bc;
	struct task_struct *queuer;
	long ipis;

	(void)arg;
	lab6_begin();
	going = 0;
	saw_going = -1;
	rec_cb_init(&looked, 2);
	queuer = sim_kthread_run_held("lab6_looked", queue_then_look, NULL, 2, "queuer/%u");
	cr_assert_eq(sim_tasks_at_point("lab6_looked"), 1, "call_rcu() on CPU 2 did not "
		     "return (TODO 2)");
	cr_assert_eq(saw_going, 0, "CPU 2 looked after the barrier's caller set its flag");
	ipis = trace_count(TR_IPI_SEND);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .before = set_going,
				      .at_return = note_looked_ran };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned) || since(TR_IPI_SEND, ipis),
		  "seed %llu: rcu_barrier() on CPU 0 returned while the callback queued by "
		  "call_rcu() on CPU 2 had not run, and it sent CPU 2 no cross-call: it "
		  "read CPU 2's ->len as 0. That call_rcu() had returned before the "
		  "barrier began (CPU 2 then saw the barrier's caller's flag still unset), but "
		  "its increment of ->len was still in CPU 2's store buffer: the barrier reads "
		  "->len without CPU 2's locks, so the increment must be visible to every CPU "
		  "before call_rcu() returns, a full barrier after it (TODO 1)",
		  (unsigned long long)sim_seed());
	expect_waiting(&bc, "the callback that call_rcu() on CPU 2 had queued before "
		       "the barrier began had not run (TODO 1, 7)");
	sim_release_point("lab6_looked");
	kthread_stop(queuer);
	sim_run_until_idle();
	finish(&bc, "the callback queued on CPU 2 before it had run");
}

/* Every seed: call_rcu()'s stores wait in CPU 2's buffer until a barrier drains them. */
SIM_TEST(skip, cpu_whose_call_rcu_returned_is_not_skipped)
{
	struct sim_config cfg = sim_forced_config();

	cfg.nr_cpus = NCPU;
	cfg.late_store_delay = 1000;
	sim_run_seeds(&cfg, returned_call_rcu, NULL);
}

/* ---- entrain: where the marker goes ---------------------------------------- */

static struct rec_cb waiting, next_one;

static void note_both_ran(struct barrier_caller *bc)
{
	bc->early = READ_ONCE(waiting.times) != 1 || READ_ONCE(next_one.times) != 1;
}

/* CPU 2: one callback in WAIT (its grace period held up by a reader), one in NEXT. */
static void behind_waiting(void *arg)
{
	static struct barrier_caller bc;
	struct task_struct *reader;

	(void)arg;
	lab6_begin();
	reader = hold_reader(4);
	queue_into_wait(2, &waiting);
	queue_rec_on(2, &next_one, false);
	start_barrier(&bc, 0, note_both_ran);
	expect_waiting(&bc, "a reader held up the grace period of CPU 2's callbacks queued "
		       "before it (TODO 6)");
	release_reader(reader);
	finish(&bc, "CPU 2's callbacks, one waiting for a grace period (WAIT) and one after "
	       "it (NEXT), had both run: the marker runs behind the list's last callback, in "
	       "that callback's segment, NEXT here (TODO 6: rcu_segcblist_entrain())");
}

SEEDS_TEST(entrain, marker_behind_callbacks_still_waiting, behind_waiting, 5, FORCED)

/* CPU 2's callbacks are all ready (DONE): its marker needs no grace period. */
static void behind_ready(void *arg)
{
	static struct barrier_caller bc;
	long gps;

	(void)arg;
	lab6_begin();
	queue_ready_held(2, ready, 3);
	gps = trace_count(TR_GP_START);
	start_barrier(&bc, 0, note_ready_run);
	expect_waiting(&bc, "CPU 2's ready callbacks, queued before it, were held (TODO 6, 7)");
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	expect_returned(&bc, "CPU 2's ready callbacks had run");
	cr_assert_eq(since(TR_GP_START, gps), 0,
		     "a grace period started for rcu_barrier()'s marker, although every callback "
		     "before it on CPU 2 was ready (DONE): the marker waited for a grace period, "
		     "not only for the callbacks before it (TODO 6: the segment "
		     "rcu_segcblist_entrain() links it in)");
	lab6_end();
}

SEEDS_TEST(entrain, marker_behind_ready_callbacks_needs_no_grace_period, behind_ready, NCPU, ANY_MODE)

/*
 * CPU 2's callbacks are all ready (DONE) and held, so its marker goes into
 * DONE; then CPU 2 queues one more callback, into NEXT. The segments after
 * DONE were empty, so their tails ended at the last ready callback's ->next:
 * unless the entrain moved them to the marker's, that callback is linked
 * over the marker, which never runs.
 */
static struct rec_cb after_marker;

static void queued_after_marker(void *arg)
{
	static struct barrier_caller bc;

	(void)arg;
	lab6_begin();
	queue_ready_held(2, ready, 3);
	start_barrier(&bc, 0, note_ready_run);
	expect_waiting(&bc, "CPU 2's ready callbacks, queued before it, were held (TODO 6, 7)");
	trace_mark("CPU 2 queues a callback behind the marker");
	sim_likely_cause("CPU 2 queued a callback after rcu_barrier() linked its marker into DONE, "
			 "behind ready callbacks: if rcu_segcblist_entrain() moved only DONE's tail, "
			 "the empty segments after it still ended at the last ready callback, and "
			 "call_rcu_hurry() linked the new callback there, over the marker: the list "
			 "no longer matches its counts (TODO 6: the tails it moves)");
	queue_rec_on(2, &after_marker, false);
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	cr_assert(READ_ONCE(bc.returned) || barrier_caller_polls(&bc),
		  "seed %llu: rcu_barrier() never returned: its marker on CPU 2, linked into DONE "
		  "behind 3 ready callbacks, did not run once CPU 2 queued a callback after it "
		  "(which ran %d times). The segments after DONE were empty: their tails still "
		  "ended at the last ready callback's ->next, so call_rcu_hurry() linked the new "
		  "callback there, over the marker (TODO 6: rcu_segcblist_entrain() moves the "
		  "tail of its segment and of every later one)",
		  (unsigned long long)sim_seed(), READ_ONCE(after_marker.times));
	cr_assert_eq(READ_ONCE(after_marker.times), 1,
		     "seed %llu: the callback queued on CPU 2 after the barrier's marker ran %d "
		     "times, not once (TODO 6: the tails rcu_segcblist_entrain() moves)",
		     (unsigned long long)sim_seed(), READ_ONCE(after_marker.times));
	finish(&bc, "CPU 2's ready callbacks had run");
}

SEEDS_TEST(entrain, callback_queued_after_the_marker_runs_behind_it, queued_after_marker, NCPU, ANY_MODE)

/*
 * entrain/count_covers_a_marker_run_before_it_is_counted: CPU 2's callbacks
 * are ready and held; CPU 3's is running. The barrier's caller is stopped
 * the moment its cross-call to CPU 2 returns (as preemption may stop it),
 * before it counts CPU 2's marker; meanwhile CPU 2 runs its callbacks and
 * the marker. Then the caller goes on to CPU 3.
 */
static struct slow_cb cpu3_running;

static void note_cpu3_done(struct barrier_caller *bc)
{
	bc->early = !READ_ONCE(cpu3_running.finished);
	if (bc->early)
		trace_mark("CPU 3's callback still runs");
}

static void marker_before_count(void *arg)
{
	static struct barrier_caller bc;
	long sends;

	(void)arg;
	lab6_begin();
	start_slow_on(3, &cpu3_running);
	queue_ready_held(2, ready, 3);
	sends = sim_point_passes(SMP_CALL_SEND_POINT);
	sim_hold_point(SMP_CALL_RETURN_POINT);
	start_barrier(&bc, 0, note_cpu3_done);
	expect_waiting(&bc, "CPU 2's and CPU 3's callbacks, queued before it, had not run "
		       "(TODO 6, 7)");
	trace_mark("CPU 2 runs its ready callbacks");
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	trace_mark("the barrier's caller goes on");
	sim_release_point(SMP_CALL_RETURN_POINT);
	sim_run_until_idle();
	/* Two cross-calls, to CPUs 2 and 3, whatever the count: with one, CPU 3
	 * was skipped, and the count is not the cause. */
	if (sim_point_passes(SMP_CALL_SEND_POINT) - sends < 2)
		expect_waiting(&bc, "CPU 3's callback, queued before it, was still running, and "
			       "it sent CPU 3 no cross-call: CPU 3 looked empty while its callback "
			       "ran. ->len counts a callback until it has been invoked (TODO 3: "
			       "when ->len drops; TODO 7: the skip)");
	expect_waiting(&bc, "CPU 3's callback, queued before it, was still running: its count "
		       "reached zero when CPU 2's marker ran, before the barrier had counted that "
		       "marker (its caller was stopped the moment the cross-call returned, as "
		       "preemption can stop it): a marker is linked first and counted after, and "
		       "ran in between (TODO 7: the count the barrier starts with; the handout's "
		       "step 5)");
	release_slow(&cpu3_running);
	finish(&bc, "CPU 3's callback had finished");
}

SEEDS_TEST(entrain, count_covers_a_marker_run_before_it_is_counted, marker_before_count, NCPU, ANY_MODE)
