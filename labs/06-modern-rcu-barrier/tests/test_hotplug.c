/*
 * test_hotplug.c - rcu_barrier() and CPU hotplug: an offline CPU gets no
 * cross-call, so the barrier links its marker itself; a dead CPU's
 * callbacks move, marker and all, in order, behind a live CPU's; a dead
 * CPU's callbacks moved while a barrier runs get a marker from the move.
 * And a parallel-mode churn of barriers while CPUs go down and up.
 */
#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <sim/test.h>
#include "lab6_util.h"

static struct rec_cb dead_cbs[3];
static struct barrier_caller bc;
static struct downer down3;

static void note_dead_cbs_ran(struct barrier_caller *b)
{
	for (int i = 0; i < 3; i++)
		b->early |= READ_ONCE(dead_cbs[i].times) != 1;
}

/* Take CPU 3 down from a kthread on CPU 1 (CPU 1 adopts its callbacks). */
static void take_cpu3_down(void)
{
	trace_mark("CPU 3 goes down");
	downer_start(&down3, 3, 1);
	sim_run_until_idle();
}

/* The barrier returned, CPU 3 is down; clean up. */
static void end_after_cpu3(const char *what)
{
	cr_assert_eq(down3.ret, 0, "cpu_down(3) failed: %d", down3.ret);
	downer_stop(&down3);
	finish(&bc, what);
}

/* CPU 3 is offline, its callbacks not yet moved (the hotplug core held at CPUHP_DEAD_POINT). */
static void offline_gets_marker(void *arg)
{
	(void)arg;
	lab6_begin();
	queue_ready_held(3, dead_cbs, 3);
	sim_hold_point(CPUHP_DEAD_POINT);
	take_cpu3_down();
	cr_assert(!cpu_online(3) && sim_tasks_at_point(CPUHP_DEAD_POINT) == 1);
	start_barrier(&bc, 0, note_dead_cbs_ran);
	expect_waiting(&bc, "3 callbacks queued on CPU 3 before it waited there: CPU 3 had gone "
		       "offline, and the hotplug callback that moves its list had not run yet. An "
		       "offline CPU takes no cross-call (smp_call_function_single() returns "
		       "-ENXIO), and the barrier linked no marker for it (TODO 7)");
	trace_mark("CPU 3's hotplug callback runs");
	sim_release_point(CPUHP_DEAD_POINT);
	sim_run_until_idle();
	end_after_cpu3("CPU 3's callbacks had moved and run");
}

SEEDS_TEST(hotplug, offline_cpu_callbacks_get_a_marker, offline_gets_marker, 4, ANY_MODE)

/*
 * CPU 3 goes offline between the barrier's look at it (online, callbacks
 * queued) and its cross-call there: the call returns -ENXIO, and the
 * barrier must look again (now offline: it links the marker itself).
 */
static void offline_during_cross_call(void *arg)
{
	(void)arg;
	lab6_begin();
	queue_ready_held(3, dead_cbs, 3);
	sim_hold_point(SMP_CALL_SEND_POINT);
	start_barrier(&bc, 0, note_dead_cbs_ran);
	cr_assert(sim_tasks_at_point(SMP_CALL_SEND_POINT) == 1,
		  "seed %llu: rcu_barrier() made no cross-call to CPU 3, online with 3 callbacks "
		  "queued (TODO 7)", (unsigned long long)sim_seed());
	sim_hold_point(CPUHP_DEAD_POINT);
	take_cpu3_down();
	cr_assert(!cpu_online(3) && sim_tasks_at_point(CPUHP_DEAD_POINT) == 1);
	trace_mark("the cross-call to CPU 3 goes on");
	sim_release_point(SMP_CALL_SEND_POINT);
	sim_run_until_idle();
	expect_waiting(&bc, "3 callbacks queued on CPU 3 before it waited there: CPU 3 went "
		       "offline between the barrier's look at it and its cross-call, which "
		       "returned -ENXIO; the barrier must look at the CPU again (offline now: "
		       "it links the marker itself) (TODO 7)");
	trace_mark("CPU 3's hotplug callback runs");
	sim_release_point(CPUHP_DEAD_POINT);
	sim_run_until_idle();
	end_after_cpu3("CPU 3's callbacks had moved and run");
}

SEEDS_TEST(hotplug, cross_call_to_a_cpu_going_down_is_retried, offline_during_cross_call, 4,
	   ANY_MODE)

/* CPU 3 holds 3 ready callbacks and the barrier's marker behind them, then goes down. */
static void migrate_with_marker(void *arg)
{
	(void)arg;
	lab6_begin();
	queue_ready_held(3, dead_cbs, 3);
	start_barrier(&bc, 0, note_dead_cbs_ran);
	expect_waiting(&bc, "CPU 3's ready callbacks, queued before it, were held (TODO 6, 7)");
	take_cpu3_down();
	cr_assert(!cpu_online(3), "cpu_down(3) did not complete");
	cr_assert(READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() never returned after CPU 3, which held its marker "
		  "behind 3 ready callbacks, went offline: CPU 3's list, marker included, stayed "
		  "with the dead CPU, where no kthread invokes it (TODO 8: rcutree_dead_cpu(), "
		  "rcu_segcblist_merge())", (unsigned long long)sim_seed());
	for (int i = 0; i < 3; i++)
		cr_assert(dead_cbs[i].ran_on == 1 && (i == 0 || dead_cbs[i].seq > dead_cbs[i - 1].seq),
			  "a callback of dead CPU 3 ran on CPU %d, or out of order: a dead CPU's "
			  "callbacks move, in order, to the CPU that runs the hotplug callback "
			  "(CPU 1 here: the caller of cpu_down()) (TODO 8)", dead_cbs[i].ran_on);
	end_after_cpu3("CPU 3's callbacks had run: its marker did not stay behind them when "
		       "they moved (TODO 8)");
}

SEEDS_TEST(hotplug, callbacks_migrate_with_their_marker, migrate_with_marker, 4, ANY_MODE)

/*
 * hotplug/migration_entrains_for_a_barrier_in_progress: a reader holds
 * every grace period up. The barrier, on CPU 0, has seen to CPUs 0 and 1
 * (no callbacks) and is stopped just after its cross-call to CPU 2 returned;
 * then CPU 3 goes down and its callbacks move to CPU 1, whose passes are
 * held. The barrier goes on: CPU 3 is empty now.
 */
static struct rec_cb on2, on3[2];

static void note_moved_ran(struct barrier_caller *b)
{
	b->early = READ_ONCE(on3[0].times) != 1 || READ_ONCE(on3[1].times) != 1 ||
		   READ_ONCE(on2.times) != 1;
}

static void migration_entrains(void *arg)
{
	struct task_struct *reader;

	(void)arg;
	lab6_begin();
	reader = hold_reader(4);
	queue_into_wait(2, &on2);
	queue_into_wait(3, &on3[0]);
	queue_rec_on(3, &on3[1], false);
	sim_hold_point(SMP_CALL_RETURN_POINT);
	start_barrier(&bc, 0, note_moved_ran);
	sim_hold_point(pass_point(1));
	take_cpu3_down();
	cr_assert(!cpu_online(3) && down3.ret == 0, "cpu_down(3) did not complete");
	sim_release_point(SMP_CALL_RETURN_POINT);
	release_reader(reader);
	expect_waiting(&bc, "the 2 callbacks CPU 3 had queued before it were still waiting "
		       "(moved to CPU 1, whose passes are held): CPU 3 went offline while the "
		       "barrier ran but before it reached CPU 3, and the move left them without "
		       "a marker: the barrier had already seen to CPU 1, and found CPU 3 empty "
		       "(TODO 8: what rcutree_dead_cpu() owes a barrier in progress)");
	sim_release_point(pass_point(1));
	sim_run_until_idle();
	end_after_cpu3("every callback had run");
}

SEEDS_TEST(hotplug, migration_entrains_for_a_barrier_in_progress, migration_entrains, 5, FORCED)

/*
 * hotplug/teardown_and_barrier_exclude_each_other: a barrier that finds a
 * dead CPU still holding callbacks links that CPU's marker itself, while
 * rcutree_dead_cpu() moves the same list away: both under barrier_lock, or
 * the marker lands in a list half moved. For k = 1, 2, ... the teardown (on
 * CPU 1) is stopped at its k-th access; where it holds no lock, a barrier
 * on CPU 0 runs meanwhile, as far as it can; then the teardown goes on.
 * Every stop must end with each callback run once and the barrier returned
 * after them.
 */
#define TEARDOWN_MAX_ACCESSES 400

static struct rec_cb moved[3];

static void note_moved_all_ran(struct barrier_caller *b)
{
	for (int i = 0; i < 3; i++)
		b->early |= READ_ONCE(moved[i].times) != 1;
}

/* Stop the teardown at its k-th access; false once it has made fewer than k. */
static bool teardown_stopped_at(long k, bool *barrier_ran)
{
	trace_start_here();     /* a failure draws its own round only */
	lab6_begin();
	queue_ready_held(3, moved, 3);
	sim_hold_point(CPUHP_DEAD_POINT);
	take_cpu3_down();
	sim_hold_access(1, k);
	sim_release_point(CPUHP_DEAD_POINT);
	sim_run_until_idle();
	/* past its end: no stop, or one in another task (cpu_down() returned) */
	if (!sim_tasks_at_point(SIM_ACCESS_POINT) || READ_ONCE(down3.ret) != 1) {
		sim_release_point(SIM_ACCESS_POINT);
		sim_run_until_idle();
		downer_stop(&down3);
		lab6_end();
		return false;
	}
	*barrier_ran = !sim_cpu_in_atomic(1);
	if (*barrier_ran) {
		trace_mark("teardown stopped at access %ld", k);
		start_barrier(&bc, 0, note_moved_all_ran);
	}
	sim_release_point(SIM_ACCESS_POINT);
	sim_run_until_idle();
	return true;
}

static void teardown_vs_barrier(void *arg)
{
	long k, raced = 0;
	bool barrier_ran = false;

	(void)arg;
	for (k = 1; k < TEARDOWN_MAX_ACCESSES && teardown_stopped_at(k, &barrier_ran); k++) {
		for (int i = 0; i < 3; i++)
			cr_assert(READ_ONCE(moved[i].times) == 1,
				  "seed %llu: callback %d of dead CPU 3 ran %d time(s) after the "
				  "teardown, stopped at its access %ld, went on%s: the move of CPU 3's "
				  "list (TODO 8) and a barrier that links CPU 3's marker itself "
				  "(TODO 7) change the same list; does the teardown hold barrier_lock "
				  "from its look at the list to the end of the merge?",
				  (unsigned long long)sim_seed(), i, READ_ONCE(moved[i].times), k,
				  barrier_ran ? ", a barrier having run meanwhile" : "");
		if (barrier_ran) {
			raced++;
			cr_assert(READ_ONCE(bc.returned) && !bc.early,
				  "seed %llu: rcu_barrier() %s, CPU 3's 3 callbacks having %s, when "
				  "it ran while the teardown of dead CPU 3 was stopped at its access "
				  "%ld, holding no lock: its marker went into a list half moved, "
				  "or was linked twice, or not counted. The teardown's look at the "
				  "list, its marker and the merge (TODO 8) must all hold "
				  "barrier_lock, which the barrier takes to see to a dead CPU "
				  "(TODO 7)", (unsigned long long)sim_seed(),
				  READ_ONCE(bc.returned) ? "returned before its callbacks ran" :
				  "never returned", READ_ONCE(moved[0].times) ? "run" : "not run", k);
			barrier_caller_stop(&bc);
		}
		downer_stop(&down3);
		lab6_end();
	}
	cr_log_info("seed %llu: the teardown stopped at each of its %ld accesses, a barrier "
		    "running beside it at %ld of them", (unsigned long long)sim_seed(), k - 1, raced);
	/* without the instrumentation (asan, tsan) no access stops */
	cr_assert(k > 3 || !sim_kcsan_enabled(), "the teardown of dead CPU 3 made %ld "
		  "student access(es): does rcutree_dead_cpu() move its list (TODO 8)?", k - 1);
	cr_assert(k < TEARDOWN_MAX_ACCESSES, "the teardown of dead CPU 3 was still making "
		  "accesses after %d stops (TODO 8)", TEARDOWN_MAX_ACCESSES - 1);
}

/* One boot on 4 CPUs: the sweep, not the seed, chooses the interleavings. */
static void run_sweep(sim_scenario_fn sweep)
{
	struct sim_config cfg = sim_forced_config();

	cfg.nr_cpus = 4;
	sim_boot(&cfg);
	sweep(NULL);
	cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
}

SIM_TEST(hotplug, teardown_and_barrier_exclude_each_other, .timeout = 60)
{
	run_sweep(teardown_vs_barrier);
}

/*
 * hotplug/barrier_start_excludes_a_teardown: the other side of the same
 * lock. rcu_barrier() starts its sequence and sets its own count, and a
 * teardown that finds that sequence running links the dead CPU's marker and
 * counts it: if the barrier's start is not one critical section under
 * barrier_lock, the count it sets can overwrite the teardown's. For k = 1,
 * 2, ... the barrier (on CPU 0) is stopped at its k-th access; where it
 * holds no lock, CPU 3 (its callbacks ready) goes down meanwhile. CPU 2's
 * callback, queued before the barrier, is still running: the barrier must
 * wait for it whatever the stop.
 */
#define BARRIER_MAX_ACCESSES 400

static struct slow_cb cpu2_running;

static void note_cpu2_done(struct barrier_caller *b)
{
	note_moved_all_ran(b);
	b->early |= !READ_ONCE(cpu2_running.finished);
}

/* Stop the barrier at its k-th access; false once it has made fewer than k. */
static bool barrier_stopped_at(long k, bool *teardown_ran)
{
	trace_start_here();     /* a failure draws its own round only */
	lab6_begin();
	queue_ready_held(3, moved, 3);
	start_slow_on(2, &cpu2_running);
	sim_hold_access(0, k);
	start_barrier(&bc, 0, note_cpu2_done);
	if (!sim_tasks_at_point(SIM_ACCESS_POINT)) {
		sim_release_point(SIM_ACCESS_POINT);
		sim_release_point(pass_point(3));
		release_slow(&cpu2_running);
		barrier_caller_stop(&bc);
		lab6_end();
		return false;
	}
	*teardown_ran = !sim_cpu_in_atomic(0);
	if (*teardown_ran) {
		trace_mark("barrier stopped at access %ld", k);
		take_cpu3_down();
	}
	sim_release_point(SIM_ACCESS_POINT);
	sim_run_until_idle();
	return true;
}

/*
 * The same round with no CPU going down: a barrier that returns early here
 * has a mistake of its own, and the race this test is about is not its cause.
 */
static void round_without_teardown(void)
{
	trace_start_here();
	lab6_begin();
	queue_ready_held(3, moved, 3);
	start_slow_on(2, &cpu2_running);
	start_barrier(&bc, 0, note_cpu2_done);
	trace_mark("CPU 3 runs its ready callbacks");
	sim_release_point(pass_point(3));
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() returned while CPU 2's callback, queued before it, "
		  "was still running, with no CPU going down: does CPU 2 look empty while its "
		  "callback runs (->len counts a callback until it has been invoked, TODO 3), "
		  "and does the barrier give it a marker, count it and wait for it (TODO 6, 7)?",
		  (unsigned long long)sim_seed());
	release_slow(&cpu2_running);
	finish(&bc, "CPU 2's callback had finished");
}

static void barrier_vs_teardown(void *arg)
{
	long k, raced = 0;
	bool teardown_ran = false;

	(void)arg;
	round_without_teardown();
	for (k = 1; k < BARRIER_MAX_ACCESSES && barrier_stopped_at(k, &teardown_ran); k++) {
		if (teardown_ran)
			raced++;
		cr_assert(!READ_ONCE(bc.returned) || !teardown_ran,
			  "seed %llu: rcu_barrier() returned while CPU 2's callback, queued before "
			  "it, was still running, after it was stopped at its access %ld, holding "
			  "no lock, while CPU 3 went down. A teardown that finds a barrier's "
			  "sequence started links the dead CPU's marker and counts it; a count the "
			  "barrier sets afterwards overwrites that, and a marker not counted ends "
			  "the barrier early: start the sequence and set the count in one critical "
			  "section under barrier_lock (TODO 7)", (unsigned long long)sim_seed(), k);
		cr_assert(!READ_ONCE(bc.returned),
			  "seed %llu: rcu_barrier() returned while CPU 2's callback, queued before "
			  "it, was still running (stopped at its access %ld, nothing else ran "
			  "meanwhile): does CPU 2 get a marker, counted, and does the barrier wait "
			  "for it (TODO 6, 7)?", (unsigned long long)sim_seed(), k);
		sim_release_point(pass_point(3));
		release_slow(&cpu2_running);
		for (int i = 0; i < 3; i++)
			cr_assert(READ_ONCE(moved[i].times) == 1,
				  "seed %llu: callback %d of dead CPU 3 ran %d time(s) (the barrier "
				  "stopped at its access %ld%s; TODO 7, 8)",
				  (unsigned long long)sim_seed(), i, READ_ONCE(moved[i].times), k,
				  teardown_ran ? ", CPU 3 going down meanwhile" : "");
		expect_returned(&bc, "CPU 2's callback had finished");
		if (teardown_ran)
			downer_stop(&down3);
		lab6_end();
	}
	cr_log_info("seed %llu: the barrier stopped at each of its first %ld accesses, CPU 3 "
		    "going down beside it at %ld of them", (unsigned long long)sim_seed(), k - 1,
		    raced);
	cr_assert(k > 3 || !sim_kcsan_enabled(), "rcu_barrier() made %ld student access(es) "
		  "before it waited (TODO 5, 7)", k - 1);
	cr_assert(k < BARRIER_MAX_ACCESSES, "rcu_barrier() was still making accesses after "
		  "%d stops (TODO 7)", BARRIER_MAX_ACCESSES - 1);
}

SIM_TEST(hotplug, barrier_start_excludes_a_teardown, .timeout = 60)
{
	run_sweep(barrier_vs_teardown);
}

/* ---- parallel mode: barriers while CPUs 2 and 3 go down and come back ------ */

#define CHURN_ROUNDS 4
#define CHURN_PER_ROUND 24

/* One round: lazy, hurried and kfree_rcu() frees, then the barrier that must cover them. */
static int churn_round(atomic_t *freed, int round)
{
	for (int i = 0; i < CHURN_PER_ROUND; i++) {
		struct freeme *plain = kmalloc(sizeof(*plain), GFP_KERNEL);

		(i % 3 ? call_rcu : call_rcu_hurry)(&freeme_alloc(freed)->rh, freeme_func);
		kfree_rcu(plain, rh);
		if (i % 5 == 4)
			schedule();
	}
	rcu_barrier();
	return atomic_read(freed) != (round + 1) * CHURN_PER_ROUND;
}

/* arg: the count of rounds whose barrier returned early, then the frees. */
static int churner_fn(void *arg)
{
	atomic_t *freed = arg;
	int early = 0;

	for (int r = 0; r < CHURN_ROUNDS; r++)
		early += churn_round(&freed[1], r);
	atomic_set(&freed[0], early);
	return 0;
}

/* cpu_down() and cpu_up() of CPUs 2 and 3, by turns; returns the failures. */
static int plugger_fn(void *arg)
{
	int bad = 0;

	(void)arg;
	for (unsigned int i = 0; i < 2 * CHURN_ROUNDS; i++) {
		bad += cpu_down(2 + i % 2) != 0;
		schedule();
		bad += cpu_up(2 + i % 2) != 0;
	}
	return bad;
}

static void parallel_churn(void *arg)
{
	static atomic_t counts[2][2];
	struct task_struct *k[2], *plugger;

	(void)arg;
	rcu_callbacks_init();
	for (int i = 0; i < 2; i++) {
		atomic_set(&counts[i][0], 0);
		atomic_set(&counts[i][1], 0);
		k[i] = kthread_run_on_cpu(churner_fn, counts[i], (unsigned int)i, "churner/%u");
	}
	plugger = kthread_run_on_cpu(plugger_fn, NULL, 0, "plugger");
	cr_assert_eq(kthread_stop(plugger), 0, "cpu_down()/cpu_up() failed");
	for (int i = 0; i < 2; i++) {
		kthread_stop(k[i]);
		cr_assert_eq(atomic_read(&counts[i][0]), 0, "CPU %d: rcu_barrier() returned %d "
			     "time(s) before the callbacks its caller had queued before it had run, "
			     "while CPUs 2 and 3 went down and up (TODO 6-8)",
			     i, atomic_read(&counts[i][0]));
	}
	lab6_end();
}

SEEDS_TEST(stress, parallel_barriers_during_hotplug, parallel_churn, 4, SIM_PARALLEL, .timeout = 120)
