/*
 * test_gp.c - readers and grace periods: a reader counts itself on its CPU
 * under the index it took; synchronize_srcu() waits for a reader that
 * sleeps, or that ends on another CPU, and not for one that began after
 * it; two domains never wait for each other.
 */
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "lab5.h"

static struct srcu_struct ss, ss_b;

static unsigned long locks(int cpu, int idx)
{
	return READ_ONCE(ss.sda[cpu].srcu_lock_count[idx]);
}

static unsigned long unlocks(int cpu, int idx)
{
	return READ_ONCE(ss.sda[cpu].srcu_unlock_count[idx]);
}

SIM_TEST(read, counts_on_its_cpu_under_its_index)
{
	struct updater u;
	int idx, idx2;

	sim_boot(NULL);
	init_srcu_struct(&ss);
	migrate_to_cpu(1);
	idx = srcu_read_lock(&ss);
	migrate_to_cpu(-1);
	cr_assert(idx == 0, "the first srcu_read_lock() of a new domain returned %d, "
		  "not index 0 (TODO 1: the low bit of srcu_idx)", idx);
	cr_assert(locks(1, 0) == 1 && locks(0, 0) == 0,
		  "srcu_read_lock() on CPU 1 left lock counts %lu on CPU 1 and %lu on CPU 0 "
		  "for index 0, not 1 and 0 (TODO 1)", locks(1, 0), locks(0, 0));
	migrate_to_cpu(2);
	srcu_read_unlock(&ss, idx);
	migrate_to_cpu(-1);
	cr_assert(unlocks(2, 0) == 1 && unlocks(1, 0) == 0,
		  "srcu_read_unlock() on CPU 2 left unlock counts %lu on CPU 2 and %lu on CPU 1 "
		  "for index 0, not 1 and 0: it counts on the CPU it runs on (TODO 1)",
		  unlocks(2, 0), unlocks(1, 0));
	/* After a grace period new readers take the other index. */
	updater_start(&u, &ss, 0, false);
	settle(3);
	cr_assert(READ_ONCE(u.returned), "synchronize_srcu() with no reader inside never "
		  "returned (TODO 2, 3)");
	updater_reap(&u);
	migrate_to_cpu(3);
	idx2 = srcu_read_lock(&ss);
	srcu_read_unlock(&ss, idx2);
	migrate_to_cpu(-1);
	cr_assert(idx2 == 1 && locks(3, 1) == 1 && unlocks(3, 1) == 1,
		  "after one synchronize_srcu() a reader took index %d (locks %lu, unlocks %lu on "
		  "CPU 3 for index 1): the grace period flips the index new readers take "
		  "(TODO 3), and a reader counts under the index it took (TODO 1)",
		  idx2, locks(3, 1), unlocks(3, 1));
	cleanup_after_readers(&ss);
}

/*
 * A reader in an interrupt handler on the reader's own CPU, taken at each
 * student access of a task's srcu_read_lock()/srcu_read_unlock() in turn:
 * between the load of a count and the store of its new value, the
 * handler's own increment would be overwritten, and the counts would never
 * balance again (a grace period that waits for ever).
 */
static int irq_fired_inside, reader_done;

static void irq_reader(void *arg)
{
	struct srcu_struct *ssp = arg;

	irq_fired_inside = !READ_ONCE(reader_done);
	srcu_read_unlock(ssp, srcu_read_lock(ssp));
}

static int one_read(void *arg)
{
	struct srcu_struct *ssp = arg;

	srcu_read_unlock(ssp, srcu_read_lock(ssp));
	WRITE_ONCE(reader_done, 1);
	return 0;
}

SIM_TEST(read, irq_reader_on_the_same_cpu_is_counted,
	 .description = "an interrupt-time reader on the CPU of a task's srcu_read_lock(), "
			"at any of its accesses, is counted: the counts' updates run with "
			"interrupts off")
{
	struct sim_config cfg = sim_default_config();
	long k;

	cfg.mode = SIM_DETERMINISTIC;     /* interrupts at a chosen access */
	for (k = 1; k < 200; k++) {
		sim_boot(&cfg);
		init_srcu_struct(&ss);
		settle(1);                /* the srcu/N kthreads are asleep */
		irq_fired_inside = 0;
		reader_done = 0;
		sim_irq_at_access(1, k, irq_reader, &ss, "irq_reader");
		struct task_struct *t = kthread_run_on_cpu(one_read, &ss, 1, "reader");

		sim_run_until_idle();
		kthread_stop(t);
		unsigned long all = 0;

		for (int idx = 0; idx < 2; idx++)
			for (int cpu = 0; cpu < (int)nr_cpu_ids; cpu++)
				all += locks(cpu, idx);
		cr_assert(all >= 1, "a reader's srcu_read_lock() on CPU 1 counted nothing on any "
			  "CPU under any index (TODO 1)");
		for (int idx = 0; idx < 2; idx++) {
			unsigned long l = 0, u = 0;

			for (int cpu = 0; cpu < (int)nr_cpu_ids; cpu++)
				l += locks(cpu, idx), u += unlocks(cpu, idx);
			cr_assert(l == u, "after one reader on CPU 1 and one in an interrupt handler "
				  "taken there at the reader's access %ld, index %d counts %lu "
				  "srcu_read_lock()s and %lu srcu_read_unlock()s: the handler's "
				  "count was overwritten by the reader's, whose load of the count "
				  "came before the interrupt and its store after. A count's "
				  "read-modify-write runs with interrupts off (TODO 1)", k, idx, l, u);
		}
		cleanup_after_readers(&ss);
		sim_halt();
		if (!irq_fired_inside)
			break;
	}
	cr_assert(k > 2 || !sim_kcsan_enabled(), "the interrupt never came inside the reader: "
		  "srcu_read_lock() and srcu_read_unlock() made %ld accesses (TODO 1)", k - 1);
}

/* A reader sleeping inside: the grace period waits for it. */
static void waits_for_sleeping(void *arg)
{
	static struct reader r;
	static struct updater u;

	(void)arg;
	init_srcu_struct(&ss);
	r = (struct reader){ 0 };
	reader_start(&r, &ss, 1);
	sim_run_until_idle();
	cr_assert(READ_ONCE(r.inside), "srcu_read_lock() never returned (TODO 1)");
	updater_start(&u, &ss, 0, false);
	settle(5);
	cr_assert(!READ_ONCE(u.returned),
		  "synchronize_srcu() returned while a reader that began before it was still "
		  "inside, asleep in wait_for_completion() (TODO 2, 3)");
	reader_release(&r);
	settle(3);
	cr_assert(READ_ONCE(r.done), "the reader's srcu_read_unlock() never returned");
	cr_assert(READ_ONCE(u.returned),
		  "synchronize_srcu() never returned after its only reader had left "
		  "(TODO 1: does the unlock count under the index the reader took? TODO 2, 3)");
	updater_reap(&u);
	kthread_stop(r.task);
	cleanup_after_readers(&ss);
}

SIM_TEST_SEEDS(gp, waits_for_a_reader_that_sleeps, waits_for_sleeping)

/* The test's own thread reads: lock on CPU 1, unlock on CPU 2. */
static void reader_moves(void *arg)
{
	static struct updater u;
	int idx;

	(void)arg;
	init_srcu_struct(&ss);
	migrate_to_cpu(1);
	idx = srcu_read_lock(&ss);
	migrate_to_cpu(-1);
	updater_start(&u, &ss, 0, false);
	settle(4);
	cr_assert(!READ_ONCE(u.returned),
		  "synchronize_srcu() returned while a reader that locked on CPU 1 before it was "
		  "still inside (TODO 2, 3)");
	migrate_to_cpu(2);
	srcu_read_unlock(&ss, idx);
	migrate_to_cpu(-1);
	settle(3);
	cr_assert(READ_ONCE(u.returned),
		  "synchronize_srcu() never returned after the reader unlocked on CPU 2: the "
		  "counts of every CPU are summed, and the unlock counts under the index its "
		  "lock returned, not the current one (TODO 1, 2)");
	updater_reap(&u);
	cleanup_after_readers(&ss);
}

SIM_TEST_SEEDS(gp, waits_for_a_reader_that_ends_on_another_cpu, reader_moves)

/* An old reader holds the grace period; a new one, after the flip, does not. */
static void ignores_new(void *arg)
{
	static struct reader old, young;
	static struct updater u;

	(void)arg;
	init_srcu_struct(&ss);
	old = (struct reader){ 0 };
	young = (struct reader){ 0 };
	reader_start(&old, &ss, 1);
	sim_run_until_idle();
	updater_start(&u, &ss, 0, false);
	settle(3);
	cr_assert(!READ_ONCE(u.returned),
		  "synchronize_srcu() returned while a reader that began before it was still "
		  "inside (TODO 2, 3)");
	reader_start(&young, &ss, 2);
	settle(2);
	reader_release(&old);
	settle(4);
	cr_assert(READ_ONCE(u.returned),
		  "synchronize_srcu() did not return after the reader older than it had left, "
		  "while a reader that began after it (index %d) was inside: it must wait only "
		  "for the index readers took before its flip (TODO 3)", young.idx);
	reader_release(&young);
	settle(1);
	updater_reap(&u);
	kthread_stop(old.task);
	kthread_stop(young.task);
	cleanup_after_readers(&ss);
}

SIM_TEST_SEEDS(gp, does_not_wait_for_readers_that_begin_after_it, ignores_new)

/*
 * A reader of domain a calls synchronize_srcu(&b) while synchronize_srcu(&a)
 * waits for it: legal in SRCU, and it must return.
 */
static void two_domains(void *arg)
{
	static struct reader r;
	static struct updater ua;

	(void)arg;
	ss.name = "a";
	ss_b.name = "b";
	init_srcu_struct(&ss);
	init_srcu_struct(&ss_b);
	r = (struct reader){ .inner = &ss_b };
	reader_start(&r, &ss, 1);
	sim_run_until_idle();
	updater_start(&ua, &ss, 0, false);
	settle(3);
	cr_assert(!READ_ONCE(ua.returned),
		  "synchronize_srcu(&a) returned while a reader of a was inside (TODO 2, 3)");
	complete(&r.go_inner);
	settle(3);
	cr_assert(READ_ONCE(r.inner_returned),
		  "synchronize_srcu(&b), called inside a reader of a while synchronize_srcu(&a) "
		  "waited for that reader, never returned: a grace period of b waited for a's "
		  "reader or for a's grace period (TODO 3: whose mutex, whose counters)");
	reader_release(&r);
	settle(3);
	cr_assert(READ_ONCE(ua.returned), "synchronize_srcu(&a) never returned after its "
		  "reader left (TODO 2, 3)");
	updater_reap(&ua);
	kthread_stop(r.task);
	cleanup_after_readers(&ss_b);
	cleanup_after_readers(&ss);
	ss.name = ss_b.name = NULL;
}

SIM_TEST_SEEDS(gp, two_domains_do_not_wait_for_each_other, two_domains)
