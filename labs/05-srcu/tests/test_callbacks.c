/*
 * test_callbacks.c - call_srcu() runs a callback after a grace period of
 * its domain, on the CPU that queued it, in order; srcu_barrier() waits for
 * every CPU's callbacks; cleanup_srcu_struct() is a BUG while a reader or a
 * callback is left. A CPU's queue changes only under its sdp->lock: an
 * interrupt on that CPU, or another CPU taking the queue, may come at any
 * access.
 */
#include <signal.h>
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <sim/test.h>
#include "lab5.h"

#define NCPU 4
#define PER_CPU 3

static struct srcu_struct ss;
static struct rec_cb rec[NCPU][PER_CPU];

static void after_gp(void *arg)
{
	static struct reader x;

	(void)arg;
	rec_cb_reset();
	init_srcu_struct(&ss);
	x = (struct reader){ 0 };
	reader_start(&x, &ss, 1);
	sim_run_until_idle();
	for (int cpu = 0; cpu < NCPU; cpu++)
		for (int i = 0; i < PER_CPU; i++) {
			rec_cb_init(&rec[cpu][i], cpu);
			call_srcu_on(cpu, &ss, &rec[cpu][i].rh, rec_cb_func);
		}
	settle(5);
	for (int cpu = 0; cpu < NCPU; cpu++)
		for (int i = 0; i < PER_CPU; i++)
			cr_assert(!READ_ONCE(rec[cpu][i].times),
				  "a callback queued with call_srcu() on CPU %d ran while a reader "
				  "that began before it was still inside: each batch waits for a "
				  "grace period of its domain before it is invoked (TODO 4)", cpu);
	reader_release(&x);
	settle(6);
	for (int cpu = 0; cpu < NCPU; cpu++)
		for (int i = 0; i < PER_CPU; i++) {
			struct rec_cb *r = &rec[cpu][i];

			cr_assert(r->times == 1, "callback %d queued on CPU %d was invoked %d times "
				  "after its grace period, not once (TODO 4)", i, cpu, r->times);
			cr_assert(r->ran_on == cpu, "a callback queued on CPU %d ran on CPU %d: "
				  "each CPU's kthread invokes its own queue (TODO 4)", cpu, r->ran_on);
			if (i > 0)
				cr_assert(r->seq > rec[cpu][i - 1].seq,
					  "callbacks queued on CPU %d ran out of order: a CPU's "
					  "queue is invoked oldest first (TODO 4)", cpu);
		}
	kthread_stop(x.task);
	cleanup_after_readers(&ss);
}

SIM_TEST_SEEDS_ON(callbacks, run_after_grace_period_on_queuing_cpu_in_order, after_gp, NCPU)

/*
 * callbacks/irq_at_every_access_loses_none: a task on CPU 1 queues one
 * callback with call_srcu() while an interrupt that queues another is
 * raised before CPU 1's k-th student access, k = 1, 2, ... until it no
 * longer comes (irq_race_sweep(), sim/testlib.h): inside call_srcu(), or
 * inside srcu/1 taking its queue. Both must run once.
 */
static struct srcu_struct irq_ss;

static void call_srcu_irq_ss(struct rcu_head *rh, rcu_callback_t f)
{
	call_srcu(&irq_ss, rh, f);
}

static void irq_ss_start(void)
{
	init_srcu_struct(&irq_ss);
}

static void irq_ss_stop(void)
{
	cleanup_after_readers(&irq_ss);
}

static void both_ran_once(struct irq_race *r, long k)
{
	settle(6);
	IRQ_RACE_EXPECT_ONCE(r, k);
}

SIM_TEST(callbacks, irq_at_every_access_loses_none, .timeout = 120)
{
	static struct irq_race r = {
		.cpu = 1, .queue = call_srcu_irq_ss, .start = irq_ss_start, .stop = irq_ss_stop,
		.api = "call_srcu()", .lost_why = "TODO 4",
		.race_why = "the queue changed with interrupts on, or outside sdp->lock (TODO 4: "
			    "call_srcu() and the take of the queue, each under "
			    "spin_lock_irqsave(&sdp->lock))",
	};

	sim_boot(NULL);
	/* Without the access-level instrumentation (the asan and tsan presets)
	 * no interrupt comes at an access: one plain run, for the checker. */
	cr_assert(irq_race_sweep(&r, 3000, both_ran_once) > 2 || !sim_kcsan_enabled(),
		  "the interrupt came at fewer than 3 accesses: nothing was tested");
	cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
}

/*
 * callbacks/queue_taken_from_another_cpu_loses_none: in Linux a CPU's SRCU
 * callbacks are not its own business only. srcu_barrier() links its markers
 * from the CPU it runs on, workqueue handlers advance and invoke a CPU's
 * callbacks wherever they run, and a small srcu_struct has one list for
 * every CPU: each takes the list's ->lock. A task on CPU 1 queues a callback
 * with call_srcu() and is stopped at its k-th student access, k = 1, 2, ...;
 * where it does not hold sdp->lock, a kthread on CPU 2 takes CPU 1's whole queue under
 * sdp->lock, as such a handler would, and invokes it after a grace period.
 * Then one more callback is queued on CPU 1. Both must run once, and CPU 1's
 * queue must end empty and whole (take_sweep()).
 */
#define TAKE_MAX_ACCESSES 200

static struct srcu_struct take_ss;
static struct rec_cb taken_first, taken_second;

static int take_poster_fn(void *arg)
{
	(void)arg;
	call_srcu(&take_ss, &taken_first.rh, rec_cb_func);
	return 0;
}

/* CPU 2 plays Linux's handler: CPU 1's list, taken under its lock, run after a grace period. */
static int take_elsewhere_fn(void *arg)
{
	struct srcu_data *sdp = &take_ss.sda[1];
	struct rcu_head *list, *next;
	unsigned long flags;
	long n = 0;

	(void)arg;
	spin_lock_irqsave(&sdp->lock, flags);
	list = sdp->head;
	sdp->head = NULL;
	sdp->tail = &sdp->head;
	spin_unlock_irqrestore(&sdp->lock, flags);
	synchronize_srcu(&take_ss);
	for (; list; list = next, n++) {
		next = list->next;
		rcu_invoke_callback(list);
	}
	spin_lock_irqsave(&sdp->lock, flags);
	sdp->pending -= n;
	spin_unlock_irqrestore(&sdp->lock, flags);
	return 0;
}

static const char *queue_state(const struct srcu_data *sdp)
{
	if (sdp->head)
		return "it still holds callbacks";
	if (sdp->tail != &sdp->head)
		return "its head is empty but its tail points into a list CPU 2 took away";
	if (sdp->pending)
		return "its pending count is not 0";
	return NULL;
}

/* Stop call_srcu() at its k-th access; false once it has made fewer than k. */
static bool take_at(long k, bool *raced)
{
	struct task_struct *poster, *taker = NULL;
	const char *broken;
	bool held;

	trace_start_here();     /* a failure draws its own round only */
	rec_cb_reset();
	rec_cb_init(&taken_first, 1);
	rec_cb_init(&taken_second, 1);
	init_srcu_struct(&take_ss);
	sim_hold_access(1, k);
	poster = kthread_run_on_cpu(take_poster_fn, NULL, 1, "poster");
	sim_run_until_idle();
	held = sim_tasks_at_point(SIM_ACCESS_POINT) > 0;
	/* Only sdp->lock keeps CPU 2 out: a lock of another name does not. */
	*raced = held && !spin_is_locked(&take_ss.sda[1].lock);
	if (*raced) {
		/* What CPU 1 stored so far is visible, oldest first, as on a
		 * strongly ordered CPU: the race is about the lock, not the order. */
		for (int n; (n = sim_buffered_stores(1)) > 0;)
			sim_commit_store(1, n - 1);
		trace_mark("call_srcu() stopped at access %ld: CPU 2 takes CPU 1's queue", k);
		taker = kthread_run_on_cpu(take_elsewhere_fn, NULL, 2, "srcu-elsewhere");
		sim_run_until_idle();
	}
	sim_release_point(SIM_ACCESS_POINT);
	settle(6);
	kthread_stop(poster);
	if (taker)
		kthread_stop(taker);
	cr_assert(taken_first.times == 1 || *raced,
		  "a callback queued with call_srcu() on CPU 1 ran %d times, not once (TODO 4)",
		  taken_first.times);
	cr_assert(taken_first.times == 1,
		  "call_srcu() on CPU 1, stopped at its student access %ld with interrupts off "
		  "but not holding sdp->lock, while CPU 2 took CPU 1's queue under sdp->lock (as "
		  "Linux's srcu_barrier() and workqueue handlers do from other CPUs): its callback "
		  "ran %d times, not once. Interrupts off keep out only CPU 1's own interrupts: "
		  "the queue changes only under sdp->lock (TODO 4)", k, taken_first.times);
	call_srcu_on(1, &take_ss, &taken_second.rh, rec_cb_func);
	settle(6);
	broken = queue_state(&take_ss.sda[1]);
	cr_assert(taken_second.times == 1 && !broken,
		  "call_srcu() on CPU 1, stopped at its student access %ld with interrupts off "
		  "but not holding sdp->lock, while CPU 2 took CPU 1's queue under sdp->lock (as "
		  "Linux's srcu_barrier() and workqueue handlers do from other CPUs): a callback "
		  "queued on CPU 1 afterwards ran %d times, not once; CPU 1's queue: %s. "
		  "Interrupts off keep out only CPU 1's own interrupts: the queue changes only "
		  "under sdp->lock (TODO 4)", k, taken_second.times,
		  broken ? broken : "empty and whole");
	cleanup_after_readers(&take_ss);
	return held;
}

static void take_sweep(void)
{
	long k, raced_n = 0;
	bool raced;

	for (k = 1; k < TAKE_MAX_ACCESSES && take_at(k, &raced); k++)
		raced_n += raced;
	/* Without the access-level instrumentation (the asan and tsan presets)
	 * no task stops at an access: one plain round, for the checker. */
	cr_assert(raced_n > 2 || !sim_kcsan_enabled(),
		  "call_srcu() was stopped outside its lock at %ld accesses only: nothing was "
		  "tested", raced_n);
}

SIM_TEST(callbacks, queue_taken_from_another_cpu_loses_none, .timeout = 120)
{
	struct sim_config cfg = sim_forced_config();

	cfg.nr_cpus = NCPU;
	sim_boot(&cfg);
	take_sweep();
	cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
}

/* A slow callback on each CPU, a recorded one behind it; the barrier waits for all. */
static struct slow_cb slow[NCPU];

static void barrier_every_cpu(void *arg)
{
	int last = *(int *)arg;
	static struct updater b;

	rec_cb_reset();
	init_srcu_struct(&ss);
	for (int cpu = 0; cpu < NCPU; cpu++) {
		slow_cb_init(&slow[cpu]);
		rec_cb_init(&rec[cpu][0], cpu);
		call_srcu_on(cpu, &ss, &slow[cpu].rh, slow_cb_func);
		call_srcu_on(cpu, &ss, &rec[cpu][0].rh, rec_cb_func);
	}
	settle(4);
	for (int cpu = 0; cpu < NCPU; cpu++)
		cr_assert(READ_ONCE(slow[cpu].started), "a callback queued with call_srcu() on "
			  "CPU %d, with no reader anywhere, was not invoked after a few jiffies "
			  "(TODO 4)", cpu);
	updater_start(&b, &ss, 0, true);
	settle(3);
	/* Release every CPU's slow callback, CPU @last's last. */
	for (int k = 1; k <= NCPU; k++) {
		int cpu = (last + k) % NCPU;

		cr_assert(!READ_ONCE(b.returned),
			  "srcu_barrier() returned while the callback queued on CPU %d before it "
			  "was still running: every CPU needs a marker of its own behind its "
			  "callbacks, and the count may reach zero only when the last has run "
			  "(TODO 5)", cpu);
		complete(&slow[cpu].release);
		settle(3);
	}
	cr_assert(READ_ONCE(b.returned), "srcu_barrier() never returned after every callback "
		  "had run: does each marker's callback drop the count and the last one "
		  "complete()? (TODO 5)");
	for (int cpu = 0; cpu < NCPU; cpu++)
		cr_assert(rec[cpu][0].times == 1, "srcu_barrier() returned before the callback "
			  "queued on CPU %d had run (TODO 5)", cpu);
	updater_reap(&b);
	cleanup_after_readers(&ss);
}

SIM_TEST(barrier, waits_for_callbacks_on_every_cpu, .timeout = 300)
{
	struct sim_config cfg = sim_default_config();

	cfg.nr_cpus = NCPU;
	for (int last = 0; last < NCPU; last++)
		sim_run_seeds(&cfg, barrier_every_cpu, &last);
}

/* A new domain, and a slow callback running on @cpu (it waits for its release). */
static void slow_callback_on(struct slow_cb *s, int cpu)
{
	init_srcu_struct(&ss);
	slow_cb_init(s);
	call_srcu_on(cpu, &ss, &s->rh, slow_cb_func);
	settle(4);
	cr_assert(READ_ONCE(s->started), "a callback queued with call_srcu() on CPU %d, with no "
		  "reader anywhere, was not invoked after a few jiffies (TODO 4)", cpu);
}

/* @fn on NCPU CPUs over the seeds, in deterministic mode: a barrier spins on a held cross-call. */
static void run_held_barrier(sim_scenario_fn fn)
{
	struct sim_config cfg = sim_default_config();

	cfg.nr_cpus = NCPU;
	cfg.mode = SIM_DETERMINISTIC;
	sim_run_seeds(&cfg, fn, NULL);
}

/*
 * The count must not reach zero before every marker is queued. The barrier
 * runs on the last CPU, which it reaches last; the CPU before it holds a
 * slow callback and its interrupts, so the barrier's cross-call to it waits
 * (spinning, as in the kernel) while the markers queued on the CPUs before
 * run. A count that starts at zero, without the barrier's own, reaches zero
 * there and completes: the barrier then returns with the slow callback and
 * its CPU's marker still pending. Every seed, no race to win.
 */
/* A barrier that returns while a CPU's interrupts are held has not waited
 * for its cross-call there: a different mistake from the count's. */
#define NO_WAIT_MSG                                                                      \
	"srcu_barrier() on CPU %d returned while its cross-call to CPU %d could not yet "    \
	"have run (that CPU's interrupts were held the whole time): CPU %d's marker was "    \
	"not queued, so nothing waited for the callback queued there before the barrier. "  \
	"A cross-call the barrier has not waited for is not a queued marker (TODO 5)"

static void barrier_count_before_markers(void *arg)
{
	static struct updater b;
	static struct slow_cb s;
	int held = NCPU - 2, self = NCPU - 1;

	(void)arg;
	slow_callback_on(&s, held);
	sim_hold_irqs(held);
	updater_start(&b, &ss, self, true);
	settle(3);
	cr_assert(!READ_ONCE(b.returned), NO_WAIT_MSG, self, held, held);
	sim_release_irqs(held);
	settle(3);
	cr_assert(!READ_ONCE(b.returned),
		  "srcu_barrier() on CPU %d returned while the callback queued on CPU %d was "
		  "still running: the markers of CPUs 0-%d ran while its cross-call to CPU %d "
		  "waited, and the count reached zero before every marker was queued. It "
		  "starts at one, the barrier's own, dropped only after the loop (TODO 5)",
		  self, held, held - 1, held);
	complete(&s.release);
	settle(3);
	cr_assert(READ_ONCE(b.returned), "srcu_barrier() never returned after every callback "
		  "had run (TODO 5)");
	updater_reap(&b);
	cleanup_after_readers(&ss);
}

SIM_TEST(barrier, count_holds_until_every_marker_is_queued,
	 .description = "markers that run while the barrier is still queueing the others do not "
			"let it return early: the count starts with the barrier's own")
{
	run_held_barrier(barrier_count_before_markers);
}

/*
 * Two barriers of one domain at once. The first waits at its cross-call to
 * a CPU whose interrupts are held, behind a slow callback; the second starts
 * meanwhile. They share the count, the completion and each CPU's marker: the
 * second may begin only when the first is done, or it resets the first's
 * count and queues a marker that is still queued a second time.
 */
static int cpu_probe_fn(void *arg)
{
	WRITE_ONCE(*(int *)arg, 1);
	while (!kthread_should_stop())
		msleep(1);
	return 0;
}

static void two_barriers_at_once(void *arg)
{
	static struct updater a, b;
	static struct slow_cb s;
	int held = NCPU - 2;

	(void)arg;
	slow_callback_on(&s, held);
	sim_hold_irqs(held);
	updater_start(&a, &ss, NCPU - 1, true);
	settle(3);
	cr_assert(!READ_ONCE(a.returned), NO_WAIT_MSG, NCPU - 1, held, held);
	updater_start(&b, &ss, 0, true);
	settle(3);
	/* Waiting for the first, the second sleeps: its CPU is free. Queueing
	 * markers, it spins at the same held cross-call with its CPU taken. */
	static int probe_ran;
	struct task_struct *probe;

	probe_ran = 0;
	probe = kthread_run_on_cpu(cpu_probe_fn, &probe_ran, 0, "probe");
	settle(1);
	cr_assert(READ_ONCE(probe_ran),
		  "a second srcu_barrier(), called on CPU 0 while the first was still queueing "
		  "its markers, did not wait: it kept CPU 0 spinning in a cross-call of its own "
		  "(nothing else could run there). The two share the count, the completion and "
		  "each CPU's marker, so the second must wait until the first is done (the "
		  "domain's barrier mutex, TODO 5)");
	sim_release_irqs(held);
	settle(3);
	cr_assert(!READ_ONCE(a.returned) && !READ_ONCE(b.returned),
		  "with a second srcu_barrier() waiting (it did sleep) while the first was still "
		  "queueing its markers, one returned (first: %d, second: %d) while the callback "
		  "queued on CPU %d before both was still running: the count reached zero before "
		  "the last marker was queued (it starts at one, the barrier's own; see "
		  "barrier/count_holds_until_every_marker_is_queued, TODO 5)",
		  READ_ONCE(a.returned), READ_ONCE(b.returned), held);
	complete(&s.release);
	settle(6);
	cr_assert(READ_ONCE(a.returned) && READ_ONCE(b.returned),
		  "two srcu_barrier() calls, one after the other on the domain's mutex: after "
		  "every callback had run, the first %s and the second %s: does each marker's "
		  "callback drop the count, the last one complete(), and the mutex go when the "
		  "barrier returns? (TODO 5)", READ_ONCE(a.returned) ? "returned" : "never returned",
		  READ_ONCE(b.returned) ? "returned" : "never returned");
	updater_reap(&a);
	updater_reap(&b);
	kthread_stop(probe);
	cleanup_after_readers(&ss);
}

SIM_TEST(barrier, two_at_once_each_waits,
	 .description = "a second srcu_barrier() of the domain started while the first is "
			"queueing: both return, after the callbacks queued before them")
{
	run_held_barrier(two_barriers_at_once);
}

SIM_TEST(cleanup, bug_while_a_reader_is_inside, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	init_srcu_struct(&ss);
	migrate_to_cpu(2);
	(void)srcu_read_lock(&ss);
	migrate_to_cpu(-1);
	sim_expect_student_bug("kernel BUG", false);
	cleanup_srcu_struct(&ss);
	cr_assert_fail("cleanup_srcu_struct() returned while a reader was still inside: it must "
		"be a BUG (TODO 6)");
}

SIM_TEST(cleanup, bug_while_a_callback_is_pending, .signal = BUG_SIGNAL)
{
	static struct reader x;
	static struct rec_cb r;

	sim_boot(NULL);
	init_srcu_struct(&ss);
	x = (struct reader){ 0 };
	reader_start(&x, &ss, 1);
	sim_run_until_idle();
	rec_cb_init(&r, 2);
	call_srcu_on(2, &ss, &r.rh, rec_cb_func);
	settle(3);
	/* The reader leaves; CPU 2's kthread has taken the callback and waits
	 * in a grace period that has not yet looked again. */
	reader_release(&x);
	sim_run_until_idle();
	sim_expect_student_bug("kernel BUG", false);
	cleanup_srcu_struct(&ss);
	cr_assert_fail("cleanup_srcu_struct() returned while a callback was queued and not yet "
		"invoked (callback ran %d times meanwhile): it must be a BUG, even when the "
		"queue itself is empty because its kthread took the batch (TODO 6)", r.times);
}
