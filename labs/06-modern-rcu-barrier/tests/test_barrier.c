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

static int all_finished(void)
{
	for (int cpu = 0; cpu < NCPU; cpu++)
		if (!READ_ONCE(slow[cpu].finished) || READ_ONCE(behind[cpu][0].times) != 1 ||
		    READ_ONCE(behind[cpu][1].times) != 1)
			return 0;
	return 1;
}

static void note_all_finished(struct barrier_caller *bc)
{
	bc->early = !all_finished();
}

/* A blocked callback with two more behind it on every CPU; released one CPU at a time. */
static void every_cpu(void *arg)
{
	static struct barrier_caller bc;
	static const int order[NCPU] = { 2, 0, 3, 1 };

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	for (int cpu = 0; cpu < NCPU; cpu++) {
		start_slow_on(cpu, &slow[cpu]);
		cr_assert(slow[cpu].started, "a callback queued with call_rcu_hurry() on CPU %d was "
			  "never invoked (TODO 1-3)", cpu);
		for (int i = 0; i < 2; i++) {
			rec_cb_init(&behind[cpu][i], cpu);
			queue_hurry_on(cpu, &behind[cpu][i].rh, rec_cb_func);
		}
	}
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_all_finished };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	for (int k = 0; k < NCPU; k++) {
		cr_assert(!READ_ONCE(bc.returned),
			  "seed %llu: rcu_barrier() returned while CPU %d's callbacks, queued before "
			  "it, had not run: every CPU with callbacks needs a marker behind its last "
			  "one, and the barrier waits until every marker has run (TODO 6, 7)",
			  (unsigned long long)sim_seed(), order[k]);
		slow_cb_release(&slow[order[k]]);
		sim_run_until_idle();
	}
	cr_assert(READ_ONCE(bc.returned), "rcu_barrier() never returned once every callback had "
		  "run: does every marker's callback take its count off, and the last complete() "
		  "(TODO 7)?");
	cr_assert(!bc.early, "rcu_barrier() returned before every earlier callback had run");
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(barrier, waits_for_every_callback_on_every_cpu)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, every_cpu, NULL);
}

/* ---- skip: no cross-call to a CPU without callbacks ------------------------ */

static struct rec_cb ready[3];

static void note_ready_run(struct barrier_caller *bc)
{
	for (int i = 0; i < 3; i++)
		if (READ_ONCE(ready[i].times) != 1)
			bc->early = 1;
}

static void only_cpus_with_callbacks(void *arg)
{
	static struct barrier_caller idle, busy;
	long ipis, gps;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	ipis = trace_count(TR_IPI_SEND);
	gps = trace_count(TR_GP_START);
	idle = (struct barrier_caller){ .do_barrier = rcu_barrier };
	barrier_caller_start(&idle, 0);
	sim_run_until_idle();
	cr_assert(READ_ONCE(idle.returned), "rcu_barrier() on a system with no callbacks at all "
		  "did not return at once");
	cr_assert_eq(trace_count(TR_IPI_SEND) - ipis, 0, "rcu_barrier() with no callbacks "
		     "queued anywhere sent %ld cross-call(s): a CPU whose list is empty (->len 0) "
		     "needs no marker and gets no cross-call (TODO 7)", trace_count(TR_IPI_SEND) - ipis);
	cr_assert_eq(trace_count(TR_GP_START) - gps, 0, "rcu_barrier() with no callbacks waited "
		     "for a grace period");
	barrier_caller_stop(&idle);

	queue_ready_held(2, ready, 3);
	ipis = trace_count(TR_IPI_SEND);
	busy = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_ready_run };
	barrier_caller_start(&busy, 1);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(busy.returned), "rcu_barrier() returned while the 3 callbacks queued "
		  "on CPU 2 before it were still waiting there: CPU 2 needs a marker (TODO 6, 7)");
	cr_assert_eq(trace_count(TR_IPI_SEND) - ipis, 1, "rcu_barrier() on CPU 1, with callbacks "
		     "on CPU 2 only, sent %ld cross-calls: exactly one, to CPU 2 (TODO 7)",
		     trace_count(TR_IPI_SEND) - ipis);
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	cr_assert(READ_ONCE(busy.returned) && !busy.early, "rcu_barrier() did not return once "
		  "CPU 2's callbacks had run, or returned before (TODO 6, 7)");
	barrier_caller_stop(&busy);
	lab6_end();
}

SIM_TEST(skip, only_cpus_with_callbacks_get_a_cross_call)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, only_cpus_with_callbacks, NULL);
}

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
	rec_cb_reset();
	rcu_callbacks_init();
	start_slow_on(3, &running);
	for (int i = 0; i < 2; i++) {
		rec_cb_init(&idle_lazy[i], 1);
		queue_lazy_on(1, &idle_lazy[i].rh, rec_cb_func);
	}
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_running_done };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() returned while a callback queued on CPU 3 before it was "
		  "still running (taken off CPU 3's list, being invoked): CPU 3 was skipped. A "
		  "callback counts in ->len until it has been invoked, and only a CPU whose ->len "
		  "is 0 may be skipped (TODO 3: when ->len drops; TODO 7: the skip)",
		  (unsigned long long)sim_seed());
	slow_cb_release(&running);
	sim_run_until_idle();
	cr_assert(READ_ONCE(bc.returned), "rcu_barrier() never returned after CPU 3's callback "
		  "finished (TODO 6, 7)");
	cr_assert(!bc.early, "rcu_barrier() returned before the lazy callbacks queued on CPU 1 "
		  "before it had run (TODO 6, 7)");
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(skip, cpu_with_callbacks_not_yet_done_is_not_skipped)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, not_yet_done, NULL);
}

/* ---- entrain: where the marker goes ---------------------------------------- */

static struct rec_cb waiting, next_one;

static void note_both_ran(struct barrier_caller *bc)
{
	bc->early = READ_ONCE(waiting.times) != 1 || READ_ONCE(next_one.times) != 1;
}

static int reader_fn(void *arg)
{
	(void)arg;
	rcu_read_lock();
	sim_point("lab6_reader");
	rcu_read_unlock();
	return 0;
}

/* CPU 2: one callback in WAIT (its grace period held up by a reader), one in NEXT. */
static void behind_waiting(void *arg)
{
	static struct barrier_caller bc;
	struct task_struct *reader;
	long gps;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	sim_hold_point("lab6_reader");
	reader = kthread_run_on_cpu(reader_fn, NULL, 4, "reader");
	sim_run_until_idle();
	rec_cb_init(&waiting, 2);
	rec_cb_init(&next_one, 2);
	gps = trace_count(TR_GP_START);
	queue_hurry_on(2, &waiting.rh, rec_cb_func);
	sim_run_until_idle();
	expect_gp_started(gps, 2);
	queue_hurry_on(2, &next_one.rh, rec_cb_func);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_both_ran };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned), "rcu_barrier() returned while a reader held up the "
		  "grace period of CPU 2's callbacks queued before it (TODO 6)");
	trace_mark("the reader leaves");
	sim_release_point("lab6_reader");
	sim_run_until_idle();
	kthread_stop(reader);
	cr_assert(READ_ONCE(bc.returned), "rcu_barrier() never returned once the reader had left "
		  "(TODO 6, 7)");
	cr_assert(!bc.early, "seed %llu: rcu_barrier() returned before CPU 2's callbacks, one "
		  "waiting for a grace period (WAIT) and one after it (NEXT), had both run: the "
		  "marker goes behind the list's last callback, in that callback's segment, NEXT "
		  "here (TODO 6: rcu_segcblist_entrain())", (unsigned long long)sim_seed());
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(entrain, marker_behind_callbacks_still_waiting)
{
	struct sim_config cfg = sim_default_config();

	/* A reader held inside keeps its grace period waiting: a forced schedule. */
	cfg.mode = SIM_DETERMINISTIC;

	cfg.nr_cpus = 5;
	sim_run_seeds(&cfg, behind_waiting, NULL);
}

/* CPU 2's callbacks are all ready (DONE): its marker needs no grace period. */
static void behind_ready(void *arg)
{
	static struct barrier_caller bc;
	long gps;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	queue_ready_held(2, ready, 3);
	gps = trace_count(TR_GP_START);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_ready_run };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned), "rcu_barrier() returned while CPU 2's ready callbacks, "
		  "queued before it, were held (TODO 6, 7)");
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	cr_assert(READ_ONCE(bc.returned) && !bc.early, "rcu_barrier() did not return once CPU 2's "
		  "callbacks had run, or returned before (TODO 6, 7)");
	cr_assert_eq(trace_count(TR_GP_START) - gps, 0,
		     "a grace period started for rcu_barrier()'s marker, although every callback "
		     "before it on CPU 2 was ready (DONE): a marker waits for the callbacks before "
		     "it, not necessarily for a grace period: it goes into the last segment that "
		     "is not empty, DONE here (TODO 6: rcu_segcblist_entrain())");
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(entrain, marker_behind_ready_callbacks_needs_no_grace_period)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, behind_ready, NULL);
}

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

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	queue_ready_held(2, ready, 3);
	start_slow_on(3, &cpu3_running);
	sim_hold_point(SMP_CALL_RETURN_POINT);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_cpu3_done };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned), "rcu_barrier() returned while CPU 2's and CPU 3's "
		  "callbacks, queued before it, had not run (TODO 6, 7)");
	trace_mark("CPU 2 runs its ready callbacks");
	sim_release_point(pass_point(2));
	sim_run_until_idle();
	trace_mark("the barrier's caller goes on");
	sim_release_point(SMP_CALL_RETURN_POINT);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() returned while CPU 3's callback, queued before it, "
		  "was still running: its count reached zero when CPU 2's marker ran, before the "
		  "barrier had counted that marker (its caller was stopped the moment the "
		  "cross-call returned, as preemption can stop it): a marker is linked first and "
		  "counted after, and ran in between (TODO 7: the count the barrier starts with; "
		  "the handout's step 5)",
		  (unsigned long long)sim_seed());
	slow_cb_release(&cpu3_running);
	sim_run_until_idle();
	cr_assert(READ_ONCE(bc.returned) && !bc.early, "rcu_barrier() did not return once CPU 3's "
		  "callback had finished, or returned before it (TODO 7)");
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(entrain, count_covers_a_marker_run_before_it_is_counted)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, marker_before_count, NULL);
}
