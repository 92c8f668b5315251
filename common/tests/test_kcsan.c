/*
 * test_kcsan.c - student code seen access by access (common/src/kcsan.c).
 *
 * Rule kept here: each test drives the student-like code of kcsan_student.c
 * and checks, from the tests' own uninstrumented view, that every access of
 * student code is a scheduling point, that interrupts land between two of
 * its accesses, and that its plain stores are buffered as a weakly-ordered
 * CPU buffers them. A test whose effect needs the instrumentation passes
 * vacuously when the binary has none (asan and tsan presets).
 */
#include <linux/kthread.h>
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <signal.h>
#include <sim/test.h>
#include "kcsan_student.h"

#define NEED_KCSAN()                                                    \
	do {                                                            \
		if (!sim_kcsan_enabled()) {                             \
			cr_log_info("student code is not instrumented here"); \
			return;                                         \
		}                                                       \
	} while (0)

static struct sim_config det_config(void)
{
	struct sim_config cfg = sim_default_config();

	cfg.mode = SIM_DETERMINISTIC;
	cfg.weak_memory = true;
	cfg.races = false;      /* these tests look at the effects themselves */
	return cfg;
}

/* ---- every access is seen ---------------------------------------------- */

SIM_TEST(kcsan, student_accesses_are_counted_test_accesses_are_not)
{
	struct sim_config cfg = det_config();
	static long x;
	long mine = 0;

	NEED_KCSAN();
	sim_boot(&cfg);
	migrate_to_cpu(0);
	long before = sim_access_count(0);

	for (int i = 0; i < 10; i++)
		mine += i;              /* the test's own code: not counted */
	cr_assert_eq(sim_access_count(0), before, "a test's own accesses were counted");
	cr_assert_eq(ks_store_and_reload(&x, 5), 5);
	cr_assert_geq(sim_access_count(0) - before, 2,
		      "a store and a load of student code: at least 2 accesses");
	migrate_to_cpu(-1);
	cr_assert_eq(mine, 45);
}

/* A student loop that spins on plain loads no longer starves the others. */
static int spinner(void *arg)
{
	ks_wait_flag(arg);
	return 0;
}

SIM_TEST(kcsan, plain_spin_loop_lets_others_run)
{
	static long flag;

	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct sim_config cfg = det_config();

		cfg.seed = seed;
		flag = 0;
		sim_boot(&cfg);
		struct task_struct *k = kthread_run_on_cpu(spinner, &flag, 1, "spinner");

		WRITE_ONCE(flag, 1);
		kthread_stop(k);
		cr_assert_eq(sim_halt(), 0);
	}
}

/* ---- interrupts between two accesses ------------------------------------ */

struct irq_push {
	struct ks_queue *q;
	struct ks_node *n;
	bool safe;
	bool ran;
};

static void push_from_irq(void *arg)
{
	struct irq_push *p = arg;

	p->ran = true;
	if (p->safe)
		ks_push_irqsafe(p->q, p->n);
	else
		ks_push(p->q, p->n);
}

struct pusher {
	struct ks_queue *q;
	struct ks_node *n;
	bool safe;
};

static int push_task(void *arg)
{
	struct pusher *p = arg;

	if (p->safe)
		ks_push_irqsafe(p->q, p->n);
	else
		ks_push(p->q, p->n);
	return 0;
}

static long queue_nodes(struct ks_queue *q)
{
	long n = 0;

	for (struct ks_node *p = q->head; p; p = p->next)
		n++;
	return n;
}

/*
 * Push from a task with an interrupt at its k-th access that pushes too:
 * 1 if a node was lost, 0 if not, -1 if the push made fewer than k accesses.
 */
static int push_loses_node(bool safe, long k)
{
	struct sim_config cfg = det_config();
	struct ks_queue q = { .head = NULL, .len = 0 };
	struct ks_node a = { NULL }, b = { NULL };
	struct irq_push ip = { &q, &b, safe, false };
	struct pusher pu = { &q, &a, safe };

	spin_lock_init(&q.lock);
	sim_boot(&cfg);
	sim_irq_at_access(0, k, push_from_irq, &ip, "push");
	kthread_stop(kthread_run_on_cpu(push_task, &pu, 0, "pusher"));
	sim_run_until_idle();
	int lost = !ip.ran ? -1 : queue_nodes(&q) != 2 || q.len != 2;

	cr_assert_eq(sim_halt(), 0);
	return lost;
}

SIM_TEST(kcsan, irq_between_two_accesses_loses_a_lockless_push)
{
	int lost = 0;

	NEED_KCSAN();
	for (long k = 1; lost == 0; k++)
		lost = push_loses_node(false, k);
	cr_assert(lost == 1, "an interrupt between reading and writing q->head must lose a node");
}

SIM_TEST(kcsan, irqsafe_lock_keeps_every_push)
{
	int lost = 0;
	long k;

	NEED_KCSAN();
	for (k = 1; lost == 0; k++)
		lost = push_loses_node(true, k);
	cr_assert(lost == -1, "a push under spin_lock_irqsave() lost a node (IRQ at access %ld)",
		  k - 1);
	cr_assert_gt(k, 3, "the push made too few accesses to be interrupted inside");
}

/* ---- two CPUs interleaved inside student code ---------------------------- */

struct incs {
	struct ks_counter *c;
	bool locked;
};

static int inc_task(void *arg)
{
	struct incs *in = arg;

	for (int i = 0; i < 50; i++) {
		if (in->locked)
			ks_locked_inc(in->c);
		else
			ks_racy_inc(in->c);
	}
	return 0;
}

/*
 * Two CPUs add 50 each to one counter, with or without its lock. With @races
 * the race check runs too, and an unlocked run must then be reported.
 */
static long run_incs(bool locked, bool races, uint64_t seed)
{
	struct sim_config cfg = det_config();
	struct ks_counter c = { .n = 0 };
	struct incs in = { &c, locked };

	spin_lock_init(&c.lock);
	cfg.seed = seed;
	cfg.races = races;
	sim_boot(&cfg);
	if (races && !locked)
		sim_expect_bug("KCSAN: data-race in ks_racy_inc / ks_racy_inc");
	struct task_struct *a = kthread_run_on_cpu(inc_task, &in, 0, "inc0");
	struct task_struct *b = kthread_run_on_cpu(inc_task, &in, 1, "inc1");

	kthread_stop(a);
	kthread_stop(b);
	cr_assert_eq(sim_halt(), 0);
	return c.n;
}

SIM_TEST(kcsan, unlocked_counter_loses_updates)
{
	bool lost = false;

	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 20 && !lost; seed++)
		lost = run_incs(false, false, seed) != 100;
	cr_assert(lost, "c->n++ from two CPUs without the lock never lost an update");
}

SIM_TEST(kcsan, locked_counter_keeps_every_update)
{
	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 10; seed++)
		cr_assert_eq(run_incs(true, false, seed), 100, "seed %llu", (unsigned long long)seed);
}

/* ---- the store buffer --------------------------------------------------- */

struct twice {
	long *p;
};

static int twice_task(void *arg)
{
	struct twice *t = arg;

	ks_store_twice(t->p, 1, 2);
	return 0;
}

SIM_TEST(kcsan, same_address_stores_drain_in_order)
{
	struct sim_config cfg = det_config();
	static long x;
	struct twice t = { &x };

	NEED_KCSAN();
	x = 0;
	sim_boot(&cfg);
	sim_hold_access(0, 2);          /* stop before the second store */
	struct task_struct *k = kthread_run_on_cpu(twice_task, &t, 0, "twice");

	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point(SIM_ACCESS_POINT), 1);
	cr_assert(READ_ONCE(x) == 0 || READ_ONCE(x) == 1,
		  "x is %ld before the second store was made", READ_ONCE(x));
	sim_release_point(SIM_ACCESS_POINT);
	kthread_stop(k);
	cr_assert_eq(READ_ONCE(x), 2, "the later store to the same address must win");
}

SIM_TEST(kcsan, storing_cpu_reads_its_own_buffered_store)
{
	struct sim_config cfg = det_config();
	static long x;

	NEED_KCSAN();
	x = 0;
	sim_boot(&cfg);
	migrate_to_cpu(0);
	cr_assert_eq(ks_store_and_reload(&x, 9), 9);
	migrate_to_cpu(-1);
}

struct dekker {
	long *mine, *other, seen;
	bool mb;
};

static int dekker_task(void *arg)
{
	struct dekker *d = arg;

	d->seen = d->mb ? ks_store_mb_load(d->mine, d->other)
			: ks_store_then_load(d->mine, d->other);
	return 0;
}

/* Each CPU stops at its function's end, its store maybe still buffered. */
static bool both_read_zero(bool mb, uint64_t seed)
{
	struct sim_config cfg = det_config();
	static long x, y;
	struct dekker a = { &x, &y, -1, mb }, b = { &y, &x, -1, mb };

	x = y = 0;
	cfg.seed = seed;
	sim_boot(&cfg);
	sim_hold_access(0, 3);          /* the store, the load, then the end */
	sim_hold_access(1, 3);
	struct task_struct *ka = kthread_run_on_cpu(dekker_task, &a, 0, "dekker0");
	struct task_struct *kb = kthread_run_on_cpu(dekker_task, &b, 1, "dekker1");

	sim_run_until_idle();
	sim_release_point(SIM_ACCESS_POINT);
	kthread_stop(ka);
	kthread_stop(kb);
	cr_assert_eq(sim_halt(), 0);
	return a.seen == 0 && b.seen == 0;
}

SIM_TEST(kcsan, store_buffering_lets_both_cpus_read_zero)
{
	bool seen = false;

	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 20 && !seen; seed++)
		seen = both_read_zero(false, seed);
	cr_assert(seen, "x = 1; r = y on two CPUs never read 0 on both: no store buffering");
}

SIM_TEST(kcsan, full_barrier_forbids_both_reading_zero)
{
	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 20; seed++)
		cr_assert(!both_read_zero(true, seed),
			  "seed %llu: smp_mb() between store and load, yet both read 0",
			  (unsigned long long)seed);
}

struct pub {
	struct ks_obj **slot;
	struct ks_obj *o;
	bool release;
};

static int publish_task(void *arg)
{
	struct pub *p = arg;

	if (p->release)
		ks_publish_release(p->slot, p->o, 42);
	else
		ks_publish_plain(p->slot, p->o, 42);
	return 0;
}

/*
 * The publisher stops at its function's end, stores still buffered; the
 * test lets the newest of them (the publishing one) drain first.
 */
static bool reader_sees_uninitialised(bool release, uint64_t seed)
{
	struct sim_config cfg = det_config();
	static struct ks_obj *slot;

	slot = NULL;
	cfg.seed = seed;
	sim_boot(&cfg);
	struct ks_obj *o = kzalloc(sizeof(*o), GFP_KERNEL);
	struct pub p = { &slot, o, release };

	sim_hold_access(0, 3);          /* o->val, *slot, then the function's end */
	struct task_struct *k = kthread_run_on_cpu(publish_task, &p, 0, "publisher");

	sim_run_until_idle();
	sim_commit_store(0, 0);
	struct ks_obj *seen = READ_ONCE(slot);
	bool bad = seen && READ_ONCE(seen->val) != 42;

	sim_release_point(SIM_ACCESS_POINT);
	kthread_stop(k);
	kfree(o);
	cr_assert_eq(sim_halt(), 0);
	return bad;
}

SIM_TEST(kcsan, plain_publication_is_seen_before_its_init)
{
	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 5; seed++)
		cr_assert(reader_sees_uninitialised(false, seed),
			  "seed %llu: a plain store published an object and drained first, "
			  "yet the reader saw it initialised", (unsigned long long)seed);
}

SIM_TEST(kcsan, release_publication_is_never_seen_early)
{
	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 20; seed++)
		cr_assert(!reader_sees_uninitialised(true, seed), "seed %llu",
			  (unsigned long long)seed);
}

/* ---- sim_store(): same-address order and store-to-load forwarding -------- */

SIM_TEST(kcsan, sim_store_is_read_back_by_its_cpu)
{
	struct sim_config cfg = det_config();
	static long x;

	x = 0;
	sim_boot(&cfg);
	migrate_to_cpu(0);
	sim_store(&x, 3);
	cr_assert_eq(READ_ONCE(x), 3, "the storing CPU must read its own buffered store");
	smp_mb();
	migrate_to_cpu(-1);
	cr_assert_eq(READ_ONCE(x), 3);
}

static int store_then_plain(void *arg)
{
	long *x = arg;

	sim_store(x, 1);
	WRITE_ONCE(*x, 2);              /* later, same address */
	sim_point("after");
	smp_mb();
	return 0;
}

SIM_TEST(kcsan, sim_store_keeps_same_address_order)
{
	struct sim_config cfg = det_config();
	static long x;

	x = 0;
	sim_boot(&cfg);
	struct task_struct *k = sim_kthread_run_held("after", store_then_plain, &x, 2, "storer");

	cr_assert_eq(READ_ONCE(x), 0, "another CPU saw a store still in the buffer");
	sim_release_point("after");
	kthread_stop(k);
	cr_assert_eq(READ_ONCE(x), 2, "the drained older store overwrote the later one");
}

/* ---- data races ---------------------------------------------------------- */

SIM_TEST(kcsan, unlocked_counter_is_reported_as_a_data_race, .signal = BUG_SIGNAL)
{
	if (!sim_kcsan_enabled())
		raise(BUG_SIGNAL);      /* nothing to see without the instrumentation */
	for (uint64_t seed = 1; seed <= 20; seed++)
		run_incs(false, true, seed);
}

SIM_TEST(kcsan, locked_counter_is_never_reported)
{
	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 10; seed++) {
		cr_assert_eq(run_incs(true, true, seed), 100, "seed %llu",
			     (unsigned long long)seed);
	}
}

/* ---- data races, KCSAN's way: an access in progress (watch.c) ------------ */

enum watch_op { LOAD_PLAIN, LOAD_ONCE, STORE_PLAIN, STORE_ONCE };

struct watch_access {
	long *p;
	enum watch_op op;
	long seen;
};

static int watch_task(void *arg)
{
	struct watch_access *a = arg;

	switch (a->op) {
	case LOAD_PLAIN:
		a->seen = ks_load_plain(a->p);
		break;
	case LOAD_ONCE:
		a->seen = ks_load_once(a->p);
		break;
	case STORE_PLAIN:
		ks_store_plain(a->p, 1);
		break;
	case STORE_ONCE:
		ks_store_once(a->p, 1);
		break;
	}
	return 0;
}

/*
 * CPU 1 stops in the middle of its access @first (held at it, as KCSAN's
 * watchpoint delays it); meanwhile CPU 2 makes the access @second to the
 * same word. Returns normally when no race was reported.
 */
static void overlap(enum watch_op first, enum watch_op second, bool watch)
{
	struct sim_config cfg = det_config();
	static long x;
	struct watch_access a = { &x, first, -1 }, b = { &x, second, -1 };

	x = 0;
	cfg.race_watch = watch;
	sim_boot(&cfg);
	sim_hold_access(1, 1);
	struct task_struct *ka = kthread_run_on_cpu(watch_task, &a, 1, "first");

	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point(SIM_ACCESS_POINT), 1, "CPU 1 never reached its access");
	kthread_stop(kthread_run_on_cpu(watch_task, &b, 2, "second"));
	sim_release_point(SIM_ACCESS_POINT);
	kthread_stop(ka);
	cr_assert_eq(sim_halt(), 0);
}

SIM_TEST(kcsan, plain_read_in_progress_against_marked_write_is_a_race,
	 .signal = BUG_SIGNAL)
{
	if (!sim_kcsan_enabled())
		raise(BUG_SIGNAL);      /* nothing to see without the instrumentation */
	sim_expect_bug("KCSAN: data-race in ks_load_plain / ks_store_once");
	overlap(LOAD_PLAIN, STORE_ONCE, true);
}

SIM_TEST(kcsan, plain_read_in_progress_against_plain_write_is_a_race,
	 .signal = BUG_SIGNAL)
{
	if (!sim_kcsan_enabled())
		raise(BUG_SIGNAL);
	sim_expect_bug("KCSAN: data-race in ks_load_plain / ks_store_plain");
	overlap(LOAD_PLAIN, STORE_PLAIN, true);
}

SIM_TEST(kcsan, accesses_that_do_not_conflict_are_never_reported)
{
	NEED_KCSAN();
	overlap(LOAD_ONCE, STORE_ONCE, true);   /* both marked */
	overlap(LOAD_ONCE, STORE_PLAIN, true);  /* a plain aligned word store is taken as atomic */
	overlap(LOAD_PLAIN, LOAD_PLAIN, true);  /* two reads */
	overlap(LOAD_PLAIN, LOAD_ONCE, true);
	overlap(STORE_PLAIN, LOAD_ONCE, true);  /* an aligned word store is never watched */
}

SIM_TEST(kcsan, race_watch_off_reports_nothing)
{
	NEED_KCSAN();
	overlap(LOAD_PLAIN, STORE_ONCE, false);
}

/* ---- late stores, and a held task's buffer (sim_commit_store()) ---------- */

static int store_then_stand(void *arg)
{
	ks_store_plain(arg, 1);
	sim_point("after-store");       /* the test's own code: no access of the student */
	return 0;
}

/* What another CPU sees of a store whose function has returned, its CPU held. */
static long seen_after_return(bool late)
{
	struct sim_config cfg = det_config();
	static long x;

	x = 0;
	cfg.late_stores = late;
	cfg.access_preempt = 0;         /* no switch (and random drain) on the way */
	sim_boot(&cfg);
	struct task_struct *k = sim_kthread_run_held("after-store", store_then_stand, &x, 1,
						     "storer");
	long seen = READ_ONCE(x);

	cr_assert_eq(sim_buffered_stores(1), late ? 1 : 0);
	if (late) {
		cr_assert(sim_commit_store(1, 0), "the held task's store could not be committed");
		cr_assert_eq(READ_ONCE(x), 1, "a committed store is not visible");
		cr_assert_eq(sim_buffered_stores(1), 0);
		cr_assert(!sim_commit_store(1, 0), "a store was committed twice");
	}
	sim_release_point("after-store");
	kthread_stop(k);
	cr_assert_eq(READ_ONCE(x), 1, "the store never reached memory");
	cr_assert_eq(sim_halt(), 0);
	return seen;
}

SIM_TEST(kcsan, late_store_outlives_its_function_until_committed)
{
	NEED_KCSAN();
	cr_assert_eq(seen_after_return(false), 1, "without late stores a store drains when "
		     "its function returns");
	cr_assert_eq(seen_after_return(true), 0, "with late stores a store made by a function "
		     "that has returned was visible at once, its CPU held");
}

/* Two stores to different words, the CPU held after both: either may drain first. */
static int store_two(void *arg)
{
	long *xy = arg;

	ks_store_plain(&xy[0], 1);
	ks_store_plain(&xy[1], 1);
	sim_point("after-two");
	return 0;
}

SIM_TEST(kcsan, held_task_drains_only_what_the_test_commits)
{
	struct sim_config cfg = det_config();
	static long xy[2];

	int both = 0;

	NEED_KCSAN();
	for (uint64_t seed = 1; seed <= 20; seed++) {
		int first = (int)(seed & 1);     /* which store the test drains */

		xy[0] = xy[1] = 0;
		cfg.late_stores = true;
		cfg.access_preempt = 0;
		cfg.seed = seed;
		sim_boot(&cfg);
		struct task_struct *k = sim_kthread_run_held("after-two", store_two, xy, 2,
							     "storer");
		int n = sim_buffered_stores(2); /* the first may have drained by itself */

		for (int i = 0; i < 5; i++)   /* others run: the held buffer stays */
			kthread_stop(kthread_run_on_cpu(watch_task, &(struct watch_access){
				&xy[1], LOAD_ONCE, -1 }, 0, "other"));
		cr_assert_eq(sim_buffered_stores(2), n, "seed %llu: a held task's buffer "
			     "changed while it stood still", (unsigned long long)seed);
		if (n == 2) {
			both++;
			cr_assert(READ_ONCE(xy[0]) == 0 && READ_ONCE(xy[1]) == 0);
			sim_commit_store(2, first);   /* 0: the newest, xy[1] */
			cr_assert_eq(READ_ONCE(xy[first]), 0,
				     "committing one store drained another, to another word");
			cr_assert_eq(READ_ONCE(xy[1 - first]), 1);
		}
		sim_release_point("after-two");
		kthread_stop(k);
		cr_assert_eq(sim_halt(), 0);
	}
	cr_assert_geq(both, 10, "only %d of 20 seeds kept both stores buffered", both);
}
