/*
 * The examples shown in the API pages of the docs (docs/groups.dox pulls the
 * regions between the `//! [name]` markers with \snippet).
 *
 * Rule kept here: every example in the docs is a passing test, so an example
 * that stops compiling or stops being true fails the build, not the reader.
 * Keep each region short and self-contained; keep the markers in pairs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <sim/test.h>

/* ---- CPUs and tasks ---------------------------------------------------- */

//! [kthread]
static int say_where(void *arg)
{
	int *where = arg;

	*where = smp_processor_id();    /* a kthread holds its CPU */
	return 42;                      /* what kthread_stop() returns */
}

SIM_TEST(examples, kthread_on_a_cpu_and_its_quiescent_states)
{
	struct sim_config cfg = sim_default_config();
	int where = -1;

	sim_boot(&cfg);
	unsigned long qs = cpu_quiescent_count(2);
	struct task_struct *k = kthread_run_on_cpu(say_where, &where, 2, "where");

	cr_assert_eq(kthread_stop(k), 42);
	cr_assert_eq(where, 2);
	/* CPU 2 went from idle to the kthread and back: hand-overs are
	 * quiescent states, which is all that classic RCU waits for. */
	cr_assert_gt(cpu_quiescent_count(2), qs);
}
//! [kthread]

/* ---- Interrupts ---------------------------------------------------------- */

//! [raise_irq]
struct seen {
	int cpu;
	bool in_irq;
};

static void record_irq(void *data)
{
	struct seen *s = data;

	s->cpu = smp_processor_id();
	s->in_irq = in_interrupt();     /* sleeping here would be a BUG */
}

SIM_TEST(examples, an_interrupt_runs_on_its_cpu)
{
	struct sim_config cfg = sim_default_config();
	struct seen s = { -1, false };

	sim_boot(&cfg);
	raise_irq(1, record_irq, &s, "example");
	sim_run_until_idle();           /* idle CPU 1 takes it */
	cr_assert_eq(s.cpu, 1);
	cr_assert(s.in_irq);
}
//! [raise_irq]

/* ---- Synchronisation ------------------------------------------------------ */

//! [sync]
static DEFINE_SPINLOCK(count_lock);
static int counted;
static atomic_t workers_left;
static struct completion all_done;

static int add_ten(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++) {
		spin_lock(&count_lock);
		counted++;                              /* protected by count_lock */
		spin_unlock(&count_lock);
	}
	if (atomic_dec_and_test(&workers_left))        /* exactly one sees zero */
		complete(&all_done);
	return 0;
}

SIM_TEST(examples, spinlock_atomic_and_completion)
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *k[3];

	sim_boot(&cfg);
	counted = 0;
	atomic_set(&workers_left, 3);
	init_completion(&all_done);
	for (int cpu = 0; cpu < 3; cpu++)
		k[cpu] = kthread_run_on_cpu(add_ten, NULL, cpu, "adder/%d", cpu);
	wait_for_completion(&all_done);                /* the test sleeps here */
	cr_assert_eq(counted, 30);
	for (int cpu = 0; cpu < 3; cpu++)
		kthread_stop(k[cpu]);
}
//! [sync]

/* ---- Memory ------------------------------------------------------------------ */

//! [poison]
struct item {
	long key;
	long value;
};

SIM_TEST(examples, freed_memory_is_poisoned)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	struct item *it = kmalloc(sizeof(*it), GFP_KERNEL);

	it->key = 1;
	it->value = 2;
	cr_assert(!kmem_is_poisoned(it, sizeof(*it)));
	kfree(it);
	/* The memory stays quarantined and filled with POISON_FREE (0x6b):
	 * a reader that still holds the pointer sees the poison, and a test
	 * asks kmem_is_poisoned() whether that happened. */
	cr_assert(kmem_is_poisoned(it, sizeof(*it)));
}
//! [poison]

/* ---- Control ------------------------------------------------------------------- */

//! [hold_point]
static int passed;

static int stops_at_a_point(void *arg)
{
	(void)arg;
	sim_point("example-stop");      /* the test may hold the task here */
	WRITE_ONCE(passed, 1);
	return 0;
}

SIM_TEST(examples, hold_a_task_at_a_named_point)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	passed = 0;
	sim_hold_point("example-stop");
	struct task_struct *k = kthread_run_on_cpu(stops_at_a_point, NULL, 1, "stopper");

	sim_run_until_idle();           /* everything else runs; it waits */
	cr_assert_eq(sim_tasks_at_point("example-stop"), 1);
	cr_assert_eq(READ_ONCE(passed), 0);
	sim_release_point("example-stop");
	kthread_stop(k);
	cr_assert_eq(READ_ONCE(passed), 1);
	cr_assert_eq(sim_point_passes("example-stop"), 1);
}
//! [hold_point]

//! [seeds]
static void two_adders(void *arg)
{
	struct task_struct *k[2];

	(void)arg;
	counted = 0;
	atomic_set(&workers_left, 2);
	init_completion(&all_done);
	for (int cpu = 0; cpu < 2; cpu++)
		k[cpu] = kthread_run_on_cpu(add_ten, NULL, cpu, "adder/%d", cpu);
	wait_for_completion(&all_done);
	cr_assert_eq(counted, 20, "seed %llu: lost an update",
		     (unsigned long long)sim_seed());
	for (int cpu = 0; cpu < 2; cpu++)
		kthread_stop(k[cpu]);
}

SIM_TEST(examples, a_scenario_over_every_seed)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, two_adders, NULL);  /* boots and halts per seed */
}
//! [seeds]

/* ---- Tracing ------------------------------------------------------------------- */

//! [trace]
SIM_TEST(examples, the_trace_records_marks_and_irqs)
{
	struct sim_config cfg = sim_default_config();
	struct seen s = { -1, false };
	char *text = NULL;
	size_t len = 0;

	sim_boot(&cfg);
	trace_mark("before the interrupt");
	raise_irq(3, record_irq, &s, "example");
	sim_run_until_idle();
	cr_assert_eq(trace_count(TR_MARK), 1);
	cr_assert_eq(trace_count(TR_IRQ_ENTER), 1);

	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(trace_write_text(f), 0);  /* one line per event */
	fclose(f);
	cr_assert_not_null(strstr(text, "before the interrupt"));
	free(text);
}
//! [trace]

/* ---- Bugs ---------------------------------------------------------------------- */

//! [expect_bug]
static void sleeps_in_irq(void *data)
{
	(void)data;
	msleep(1);                      /* might sleep: a BUG in IRQ context */
}

SIM_TEST(examples, sleeping_in_an_interrupt_is_reported, .signal = BUG_SIGNAL)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	sim_expect_bug("sleeping function called from invalid context");
	raise_irq(0, sleeps_in_irq, NULL, "sleepy");
	sim_run_until_idle();           /* the BUG ends the test here */
}
//! [expect_bug]
