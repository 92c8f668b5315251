/*
 * test_order.c - the two schedules that make SRCU's counting subtle, forced
 * access by access (sim_hold_access(): every load and store of srcu.c is a
 * point where a task can be stopped):
 *
 *  - a reader that has read the index but not yet counted itself ("a
 *    straggler") while synchronize_srcu() sums the old index: a straggler
 *    that locks and unlocks between the two sums must not hide a reader
 *    still inside (unlocks summed first, then a barrier, then locks);
 *  - a straggler that counts itself under the index of the previous grace
 *    period: the next synchronize_srcu() must wait for it (both indices).
 *
 * Each test sweeps where the straggler stops (k1) and, for the first, where
 * synchronize_srcu() stops (k2), until the stop lies beyond the code.
 */
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "lab5.h"

static struct srcu_struct ss;

static struct sim_config two_cpus(void)
{
	struct sim_config cfg = sim_default_config();

	cfg.nr_cpus = 2;
	cfg.mode = SIM_DETERMINISTIC;
	return cfg;
}

/*
 * Start @w as a reader on CPU 1 that stops just before its @k1-th access
 * of student code (inside srcu_read_lock(), or after it). False, and
 * nothing held, when it never makes that many: the stop lies beyond the
 * code.
 */
static bool straggler_stopped(struct reader *w, long k1)
{
	sim_hold_access(1, k1);
	reader_start(w, &ss, 1);
	sim_run_until_idle();
	if (sim_tasks_at_point(SIM_ACCESS_POINT) > 0)
		return true;
	sim_release_point(SIM_ACCESS_POINT);
	return false;
}

enum { BEYOND, DONE, HIDDEN };

/*
 * The end of every run: @r, the reader still inside, leaves; then each
 * updater of @u[0..@n) that was started must have returned. Everything is
 * stopped and the kernel halted, with nothing leaked.
 */
static void end_run(struct reader *r, struct updater *u, int n)
{
	reader_release(r);
	settle(3);
	for (int i = 0; i < n; i++) {
		if (!u[i].task)
			continue;
		cr_assert(READ_ONCE(u[i].returned), "synchronize_srcu() never returned after "
			  "every reader had left (TODO 1-3)");
		updater_reap(&u[i]);
	}
	kthread_stop(r->task);
	cleanup_after_readers(&ss);
	cr_assert_eq(sim_halt(), 0);
}

/*
 * With the straggler stopped inside srcu_read_lock(): synchronize_srcu() on
 * CPU 0 stopped at its @k2-th access; the straggler goes on (locks and
 * unlocks), then the updater. BEYOND: the updater never made @k2 accesses.
 * HIDDEN: it returned while the reader that was inside all along still is.
 */
static int updater_between_sums(struct updater *u, long k2, long k3)
{
	sim_hold_access(0, k2);
	updater_start(u, &ss, 0, false);
	sim_run_until_idle();
	if (sim_tasks_at_point(SIM_ACCESS_POINT) < 2) {
		sim_release_point(SIM_ACCESS_POINT);
		settle(2);
		return BEYOND;
	}
	sim_step_point(SIM_ACCESS_POINT, 1);    /* w first: it waited first */
	sim_run_until_idle();
	if (k3)
		sim_stale_load(0, k3);          /* the updater's k3-th access reads early */
	sim_release_point(SIM_ACCESS_POINT);    /* then the updater */
	settle(3);
	return READ_ONCE(u->returned) ? HIDDEN : DONE;
}

/*
 * Reader x inside on CPU 1; straggler w on CPU 1 stopped at its k1-th access;
 * synchronize_srcu() on CPU 0 stopped at its k2-th; w goes on (locks and
 * unlocks), then the updater, whose k3-th access from there reads early
 * (k3 > 0: early loads on, sim_stale_load()). BEYOND: a stop was never
 * reached. HIDDEN: the updater returned with x inside.
 */
static int straggler_between_sums(long k1, long k2, long k3)
{
	struct sim_config cfg = two_cpus();
	static struct reader x, w;
	static struct updater u;
	int ret = BEYOND;

	cfg.early_loads = k3 > 0;
	sim_boot(&cfg);
	init_srcu_struct(&ss);
	x = (struct reader){ 0 };
	w = (struct reader){ .no_sleep = true };
	u = (struct updater){ 0 };
	reader_start(&x, &ss, 1);
	sim_run_until_idle();
	cr_assert(READ_ONCE(x.inside), "srcu_read_lock() never returned (TODO 1)");
	if (straggler_stopped(&w, k1))
		ret = updater_between_sums(&u, k2, k3);
	kthread_stop(w.task);   /* it locked and unlocked: done */
	end_run(&x, &u, 1);
	return ret;
}

/* How many accesses of student code one srcu_read_lock() makes (on CPU 1). */
static long lock_accesses(void)
{
	struct sim_config cfg = two_cpus();
	long before, n;
	int idx;

	sim_boot(&cfg);
	init_srcu_struct(&ss);
	sim_run_until_idle();
	migrate_to_cpu(1);
	before = sim_access_count(1);
	idx = srcu_read_lock(&ss);
	n = sim_access_count(1) - before;
	srcu_read_unlock(&ss, idx);
	migrate_to_cpu(-1);
	cleanup_after_readers(&ss);
	cr_assert_eq(sim_halt(), 0);
	return n;
}

SIM_TEST(order, straggler_between_the_sums_hides_no_reader, .timeout = 600)
{
	long n_lock;
	int tried = 0;

	if (!sim_kcsan_enabled()) {
		cr_log_info("student code is not instrumented here: nothing to force");
		return;
	}
	n_lock = lock_accesses();
	cr_assert_gt(n_lock, 1, "srcu_read_lock() made %ld accesses: it must read the index "
		     "and count itself (TODO 1)", n_lock);
	/* The straggler stops somewhere inside srcu_read_lock() (or just after). */
	for (long k1 = 1; k1 <= n_lock + 1; k1++) {
		int r = DONE;

		for (long k2 = 1; k2 < 400 && r != BEYOND; k2++) {
			r = straggler_between_sums(k1, k2, 0);
			cr_assert(r != HIDDEN,
				  "synchronize_srcu() returned while a reader was still inside: a "
				  "reader that had read the index before the flip locked and unlocked "
				  "while the old index was being summed (straggler stopped at its "
				  "access %ld, synchronize_srcu() at its access %ld), and the sums "
				  "came out equal. Which counts are summed first, and what lies "
				  "between the two sums? (TODO 2)", k1, k2);
			tried++;
		}
	}
	cr_assert_gt(tried, 4, "synchronize_srcu() made too few accesses to be stopped "
		     "between its sums (TODO 2, 3)");
}

/*
 * With straggler @w stopped inside srcu_read_lock(): one synchronize_srcu()
 * (@u[0]) while it is stopped, then w counts itself; then a second one
 * (@u[1]). HIDDEN: the second returned while w was inside.
 */
static int second_gp_after_straggler(struct reader *w, struct updater *u)
{
	updater_start(&u[0], &ss, 0, false);
	settle(3);
	sim_release_point(SIM_ACCESS_POINT);
	settle(3);
	cr_assert(READ_ONCE(w->inside), "srcu_read_lock() never returned (TODO 1)");
	if (!READ_ONCE(u[0].returned))
		return DONE;
	updater_start(&u[1], &ss, 0, false);
	settle(4);
	return READ_ONCE(u[1].returned) ? HIDDEN : DONE;
}

/*
 * Straggler w on CPU 1 stopped at its k1-th access, sleeping inside once
 * released; one synchronize_srcu(), then w goes on and counts itself; a
 * second synchronize_srcu() must wait for w. BEYOND: the stop was never
 * reached (w is inside before the first grace period).
 */
static int straggler_across_flip(long k1)
{
	struct sim_config cfg = two_cpus();
	static struct reader w;
	static struct updater u[2];
	int ret = BEYOND;

	sim_boot(&cfg);
	init_srcu_struct(&ss);
	sim_run_until_idle();
	w = (struct reader){ 0 };
	u[0] = u[1] = (struct updater){ 0 };
	if (straggler_stopped(&w, k1))
		ret = second_gp_after_straggler(&w, u);
	end_run(&w, u, 2);
	return ret;
}

SIM_TEST(order, straggler_from_before_a_flip_is_waited_for, .timeout = 300)
{
	int r = DONE;
	long k1;

	if (!sim_kcsan_enabled()) {
		cr_log_info("student code is not instrumented here: nothing to force");
		return;
	}
	for (k1 = 1; k1 < 64 && r != BEYOND; k1++) {
		r = straggler_across_flip(k1);
		cr_assert(r != HIDDEN,
			  "synchronize_srcu() returned while a reader was inside: the reader had "
			  "read the index just before the previous synchronize_srcu() flipped it "
			  "(stopped at its access %ld) and counted itself under that old index "
			  "only after. The next grace period must wait for it: which indices does "
			  "synchronize_srcu() wait for, and in what order? (TODO 3)", k1);
	}
	cr_assert_gt(k1, 3, "the reader made too few accesses to be stopped inside "
		     "srcu_read_lock() (TODO 1)");
}

/*
 * Boot two CPUs for a test of where a reader's stores become visible: the
 * store buffer and late stores on whatever the environment says (these
 * tests are about them), and no switch at an access, so that nothing drains
 * CPU 1's buffer on the way to the schedule the test forces.
 */
static void boot_buffered(uint64_t seed)
{
	struct sim_config cfg = two_cpus();

	cfg.seed = seed;
	cfg.weak_memory = cfg.late_stores = true;
	cfg.access_preempt = 0;
	sim_boot(&cfg);
	init_srcu_struct(&ss);
	sim_run_until_idle();
}

/*
 * A reader stands inside its section on CPU 1, keeping its CPU: no sleep,
 * so no context switch drains its store buffer. synchronize_srcu() on CPU 0
 * must still see it. Unless srcu_read_lock() ends with a full barrier after
 * the count, the count may still sit in CPU 1's store buffer while the
 * section's loads run (store buffering): the updater sums, finds nobody,
 * and frees what the reader holds.
 */
static bool counted_before_section(uint64_t seed)
{
	static struct reader r;
	static struct updater u;
	bool waited;
	int buffered;

	boot_buffered(seed);
	r = (struct reader){ .stand = true };
	u = (struct updater){ 0 };
	sim_hold_point(READER_INSIDE);
	reader_start(&r, &ss, 1);
	sim_run_until_idle();
	cr_assert(READ_ONCE(r.inside) && sim_tasks_at_point(READER_INSIDE) == 1,
		  "srcu_read_lock() never returned (TODO 1)");
	buffered = sim_buffered_stores(1);
	updater_start(&u, &ss, 0, false);
	settle(3);
	waited = !READ_ONCE(u.returned);
	sim_release_point(READER_INSIDE);
	end_run(&r, &u, 1);
	cr_assert(waited, "seed %llu: synchronize_srcu() on CPU 0 returned while a reader on "
		  "CPU 1 was inside its section, entered before the grace period began. "
		  "CPU 1 kept %d store(s) of srcu_read_lock() in its store buffer while its "
		  "section ran: the reader's count was not yet visible to CPU 0 when it summed. "
		  "What orders the count before the section's loads? (TODO 1)",
		  (unsigned long long)seed, buffered);
	return waited;
}

SIM_TEST(order, reader_is_counted_before_its_section)
{
	if (!sim_kcsan_enabled()) {
		cr_log_info("student code is not instrumented here: nothing is buffered");
		return;
	}
	for (uint64_t seed = 1; seed <= 3; seed++)
		counted_before_section(seed);
}

/*
 * A reader on CPU 1 stores inside its section, then leaves. It is stopped
 * at its k-th access (k = 1, 2, ... until it no longer stops), keeping its
 * CPU and its store buffer, and the newest store it buffers becomes
 * visible first, as a weakly-ordered CPU may drain it. Once the section's
 * store is made, a synchronize_srcu() on CPU 0 that returns must find it
 * visible: the unlock's count may not be seen before the section's accesses
 * are done, or the updater frees what the reader is still writing.
 * Returns false once the reader ran to its end without reaching access k.
 */
static bool section_done_before_unlock(uint64_t seed, long k)
{
	static struct reader r;
	static struct updater u;
	bool stopped, early;

	boot_buffered(seed);
	r = (struct reader){ .write_inside = true };
	u = (struct updater){ 0 };
	sim_hold_access(1, k);
	reader_start(&r, &ss, 1);
	sim_run_until_idle();
	stopped = sim_tasks_at_point(SIM_ACCESS_POINT) == 1;
	sim_commit_store(1, 0);
	updater_start(&u, &ss, 0, false);
	settle(3);
	early = READ_ONCE(u.returned) && READ_ONCE(r.stored) && READ_ONCE(r.data) != 1;
	sim_release_point(SIM_ACCESS_POINT);
	settle(3);
	kthread_stop(r.task);
	cr_assert(READ_ONCE(u.returned), "synchronize_srcu() never returned after the reader "
		  "left (TODOs 1-3)");
	updater_reap(&u);
	cleanup_after_readers(&ss);
	cr_assert_eq(sim_halt(), 0);
	cr_assert(!early, "seed %llu: synchronize_srcu() on CPU 0 returned while a store the "
		  "reader on CPU 1 made inside its section was still in CPU 1's store buffer "
		  "(the reader stopped at its access %ld, its newest buffered store visible "
		  "first): the unlock's count became visible before the section's store, and the "
		  "updater may free what the reader is still writing. What orders the section's "
		  "accesses before the unlock's count? (TODO 1)", (unsigned long long)seed, k);
	return stopped;
}

SIM_TEST(order, section_is_done_before_its_unlock_is_counted)
{
	long k = 1;

	if (!sim_kcsan_enabled()) {
		cr_log_info("student code is not instrumented here: nothing is buffered");
		return;
	}
	for (uint64_t seed = 1; seed <= 2; seed++)
		for (k = 1; k < 64 && section_done_before_unlock(seed, k); k++)
			;
	cr_assert_gt(k, 3, "the reader made too few accesses to be stopped in "
		     "srcu_read_unlock() (TODO 1)");
}

/*
 * Barrier A, between the sums. Reader x is inside on CPU 1; straggler w has
 * read the index before the flip (stopped after its first access) and locks
 * and unlocks while synchronize_srcu() on CPU 0 is stopped at its k2-th
 * access; then the updater goes on, and its k3-th access from there, if it
 * is a load, is satisfied early (the oldest value CPU 0 may still see, as a
 * CPU that reorders loads may give it). Unlocks summed first see w's
 * unlock; a lock count read early may miss w's lock, unless a full barrier
 * between the sums orders the lock loads after the unlock loads: then the
 * sums agree while x is still inside (straggler_between_sums() with k3).
 */
SIM_TEST(order, lock_sum_is_not_read_before_the_unlock_sum, .timeout = 300)
{
	int early = 0;

	if (!sim_kcsan_enabled()) {
		cr_log_info("student code is not instrumented here: nothing to force");
		return;
	}
	for (long k2 = 1; k2 < 400; k2++) {
		int r = DONE;

		for (long k3 = 1; k3 <= 12 && r != BEYOND; k3++) {
			r = straggler_between_sums(2, k2, k3);
			cr_assert(r != HIDDEN,
				  "synchronize_srcu() returned while a reader was still inside: a "
				  "straggler locked and unlocked while synchronize_srcu() was stopped "
				  "(at its access %ld); summing, it saw the straggler's unlock but, "
				  "with its access %ld after the stop read early, not its lock, and "
				  "the sums came out equal. What keeps the lock counts from being read "
				  "before the unlock counts? (TODO 2)", k2, k3);
			early += r != BEYOND;
		}
		if (r == BEYOND)
			break;
	}
	cr_assert_gt(early, 4, "synchronize_srcu() made too few accesses to be stopped "
		     "between its sums (TODO 2, 3)");
}
