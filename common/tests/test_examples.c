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
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/timer.h>
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
	int where = -1;

	sim_boot(NULL);
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
	struct seen s = { -1, false };

	sim_boot(NULL);
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
	struct task_struct *k[3];

	sim_boot(NULL);
	counted = 0;
	atomic_set(&workers_left, 3);
	init_completion(&all_done);
	for (int cpu = 0; cpu < 3; cpu++)
		k[cpu] = kthread_run_on_cpu(add_ten, NULL, cpu, "adder/%u");
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
	sim_boot(NULL);
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
	sim_boot(NULL);
	passed = 0;
	/* hold, start, run until idle: sim_kthread_run_held() does the three in one */
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
		k[cpu] = kthread_run_on_cpu(add_ten, NULL, cpu, "adder/%u");
	wait_for_completion(&all_done);
	cr_assert_eq(counted, 20, "seed %llu: lost an update",
		     (unsigned long long)sim_seed());
	for (int cpu = 0; cpu < 2; cpu++)
		kthread_stop(k[cpu]);
}

SIM_TEST(examples, a_scenario_over_every_seed)
{
	sim_run_seeds(NULL, two_adders, NULL);  /* boots and halts per seed */
}
//! [seeds]

/* ---- Tracing ------------------------------------------------------------------- */

//! [trace]
SIM_TEST(examples, the_trace_records_marks_and_irqs)
{
	struct seen s = { -1, false };
	char *text = NULL;
	size_t len = 0;

	sim_boot(NULL);
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
	sim_boot(NULL);
	sim_expect_bug("sleeping function called from invalid context");
	raise_irq(0, sleeps_in_irq, NULL, "sleepy");
	sim_run_until_idle();           /* the BUG ends the test here */
}
//! [expect_bug]

/* ---- A tour of the rest of the API (each call shows up as an example) --- */

//! [atomics]
SIM_TEST(examples, atomic_operations_and_ordering)
{
	atomic_t n = ATOMIC_INIT(5);
	long published = 0, data = 0;

	sim_boot(NULL);
	migrate_to_cpu(0);                      /* atomics are scheduling points */
	atomic_add(2, &n);                      /* 7 */
	atomic_sub(1, &n);                      /* 6 */
	atomic_dec(&n);                         /* 5 */
	cr_assert_eq(atomic_add_return(3, &n), 8);
	cr_assert_eq(atomic_sub_return(2, &n), 6);
	cr_assert_eq(atomic_inc_return(&n), 7);
	cr_assert_eq(atomic_dec_return(&n), 6);
	cr_assert(atomic_sub_and_test(6, &n));  /* reached zero */
	cr_assert_eq(atomic_xchg(&n, 4), 0);
	cr_assert_eq(atomic_cmpxchg(&n, 4, 9), 4);      /* swapped */
	cr_assert_eq(atomic_cmpxchg(&n, 4, 1), 9);      /* not swapped */
	cr_assert_eq(atomic_read(&n), 9);

	data = 42;                              /* initialise, then publish */
	smp_store_release(&published, 1);
	if (smp_load_acquire(&published))       /* sees 1 => sees data == 42 */
		cr_assert_eq(READ_ONCE(data), 42);
	smp_wmb();
	smp_rmb();
	smp_mb();
	barrier();
	cr_assert(!unlikely(data != 42) && likely(published),
		  "ordering primitives changed a value");
	migrate_to_cpu(-1);
}
//! [atomics]

//! [locks]
static DEFINE_MUTEX(tour_mutex);

SIM_TEST(examples, trylocks_irq_locks_and_completions)
{
	spinlock_t lock;
	DECLARE_COMPLETION(once);

	sim_boot(NULL);
	spin_lock_init(&lock);
	migrate_to_cpu(1);
	cr_assert(spin_trylock(&lock));         /* free: taken */
	cr_assert(!spin_trylock(&lock));        /* held: not taken */
	spin_unlock(&lock);
	spin_lock_irq(&lock);                   /* interrupts off while held */
	cr_assert(irqs_disabled());
	spin_unlock_irq(&lock);
	cr_assert(!irqs_disabled());
	cr_assert(mutex_trylock(&tour_mutex));
	cr_assert(mutex_is_locked(&tour_mutex));
	mutex_unlock(&tour_mutex);
	migrate_to_cpu(-1);

	complete(&once);
	cr_assert(completion_done(&once));
	cr_assert(try_wait_for_completion(&once));      /* consumes it */
	cr_assert(!completion_done(&once));
	complete_all(&once);
	wait_for_completion(&once);             /* complete_all(): never sleeps */
	wait_for_completion(&once);
	reinit_completion(&once);
	cr_assert(!completion_done(&once));
}
//! [locks]

//! [lists]
struct node {
	int key;
	struct list_head link;                  /* embedded, found with list_entry() */
};

SIM_TEST(examples, list_operations)
{
	LIST_HEAD(a);
	struct list_head b = LIST_HEAD_INIT(b);
	struct node n[3] = { { .key = 0 }, { .key = 1 }, { .key = 2 } };
	struct list_head *pos;
	struct node *it;
	int sum = 0, count = 0;

	INIT_LIST_HEAD(&n[0].link);
	list_add_tail(&n[0].link, &a);
	list_add_tail(&n[1].link, &a);
	list_add(&n[2].link, &b);
	list_splice_tail_init(&b, &a);          /* a: 0 1 2, b: empty */
	cr_assert(list_empty(&b));
	cr_assert_eq(list_first_entry(&a, struct node, link)->key, 0);
	list_for_each(pos, &a)
		count++;
	list_for_each_entry(it, &a, link)
		sum += it->key;
	cr_assert_eq(count, 3);
	cr_assert_eq(sum, 3);
	list_del_init(&n[1].link);              /* unlinked, points to itself */
	cr_assert(list_empty(&n[1].link));
	list_del(&n[0].link);                   /* unlinked, pointers poisoned */
	cr_assert_eq(list_entry(a.next, struct node, link)->key, 2);
}
//! [lists]

//! [tasks]
struct whoami {
	char comm[TASK_COMM_LEN];
	int cpu;
	long left;
	bool irqs_off_inside;
};

static int who_and_sleep(void *arg)
{
	struct whoami *w = arg;

	snprintf(w->comm, sizeof(w->comm), "%s", task_comm(current));
	w->cpu = task_cpu(current_task());
	local_irq_disable();
	w->irqs_off_inside = irqs_disabled();
	local_irq_enable();
	might_sleep();                          /* fine: process context */
	w->left = schedule_timeout(100 * HZ / 1000);    /* woken early below */
	return 0;
}

SIM_TEST(examples, tasks_names_and_early_wake_up)
{
	struct whoami w = { .cpu = -2 };

	sim_boot(NULL);
	cr_assert(nr_cpu_ids <= NR_CPUS);
	struct task_struct *k = kthread_run(who_and_sleep, &w, "who/%d", 7);

	sim_run_until_idle();                   /* it sleeps in schedule_timeout() */
	wake_up_process(k);
	sim_run_until_idle();
	kthread_stop(k);
	cr_assert_str_eq(w.comm, "who/7");
	cr_assert(w.cpu >= 0 && w.cpu < nr_cpu_ids);
	cr_assert(w.irqs_off_inside);
	cr_assert_gt(w.left, 0, "woken before its timeout: jiffies were left");
}
//! [tasks]

//! [timers_and_calls]
static int fired;

static void tick_once(struct timer_list *t)
{
	(void)t;
	fired++;
}

static void on_cpu(void *info)
{
	*(int *)info = smp_processor_id();      /* IRQ context, on the target */
}

SIM_TEST(examples, timers_and_a_single_cross_call)
{
	struct timer_list t;
	int where = -1;

	sim_boot(NULL);
	fired = 0;
	timer_setup(&t, tick_once, 0);
	migrate_to_cpu(0);                      /* a timer fires where it was armed */
	mod_timer(&t, jiffies + 10);
	cr_assert(timer_pending(&t));
	cr_assert_eq(del_timer(&t), 1);         /* it was pending */
	mod_timer(&t, jiffies + 10);
	smp_call_function_single(2, on_cpu, &where, 1);
	migrate_to_cpu(-1);
	cr_assert_eq(where, 2);
	sim_advance_jiffies(10);
	sim_run_until_idle();
	cr_assert_eq(fired, 1);
	cr_assert_eq(del_timer_sync(&t), 0);    /* no longer pending */
}
//! [timers_and_calls]

//! [zeroed]
SIM_TEST(examples, zeroed_allocations_and_live_objects)
{
	sim_boot(NULL);
	long before = kmem_live_objects();
	int *z = kzalloc(4 * sizeof(int), GFP_KERNEL);
	char *a = kmalloc(16, GFP_ATOMIC | __GFP_ZERO);

	cr_assert_eq(z[3], 0);
	cr_assert_eq(a[15], 0);
	cr_assert_eq(kmem_live_objects(), before + 2);
	kfree(z);
	kfree(a);
	cr_assert_eq(kmem_live_objects(), before);
	cr_assert(kmem_is_poisoned(a, 16));     /* every byte is POISON_FREE */
}
//! [zeroed]

//! [store_buffer]
SIM_TEST(examples, a_buffered_store_and_the_barrier_that_drains_it)
{
	static long flag;

	sim_boot(NULL);
	flag = 0;
	migrate_to_cpu(0);
	sim_store(&flag, 1);            /* held in CPU 0's store buffer ... */
	smp_mb();                       /* ... until this barrier drains it */
	cr_assert_eq(READ_ONCE(flag), 1);
	trace_event(TR_MARK, "drained", 1);
	migrate_to_cpu(-1);
	cr_assert_eq(trace_count(TR_MARK), 1);
}
//! [store_buffer]

//! [bug]
SIM_TEST(examples, bug_ends_the_test_with_bug_signal, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("kernel BUG");
	BUG();                          /* report, then raise BUG_SIGNAL */
}
//! [bug]
