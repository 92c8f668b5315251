/*
 * test_torture.c - a small rcutorture: a writer keeps replacing the one item
 * of a list and ages every retired version once per grace period; readers
 * read the current item's age. An item is retired at age 1 (list_del_rcu()),
 * so a reader that finds age 2 or more was still inside after a whole grace
 * period had ended: synchronize_rcu() returned too soon.
 *
 * Rule kept here: the seeded runs are bounded by iteration counts, never by
 * time; the parallel run stops after its iterations or its seconds of real
 * time, whichever come first (on an oversubscribed machine each grace period
 * waits for Linux to run every reader), and asserts only on what it did, so
 * its verdict never depends on the machine's speed. The readers pass a
 * quiescent state between read-side critical sections (cond_resched()), as
 * readers in a non-preemptible kernel must.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lab1.h"

#define AGE_MAX 4 /* a retired item is freed once it reaches this age */
#define NR_READERS 3

struct torture {
	struct list_head head;
	struct list_head retired;     /* writer-private: list_del_rcu()'d items */
	int writer_cpu;
	long grace_periods;           /* writer: synchronize_rcu() calls */
	double seconds;               /* writer: stop after this much real time (0: never) */
	int writer_done;
	int writer_broken;            /* list_add_rcu() did not work */
	long reads[NR_READERS];
	long ages[NR_READERS][AGE_MAX + 2]; /* [reader][age], last bucket: poison */
	long empty[NR_READERS];       /* reads that found no item */
	int spin;                     /* cpu_relax() calls inside each read */
};

struct reader_arg {
	struct torture *t;
	int id;
};

static int torture_reader(void *arg)
{
	struct reader_arg *ra = arg;
	struct torture *t = ra->t;
	int id = ra->id;

	while (!READ_ONCE(t->writer_done) && !kthread_should_stop()) {
		struct item *it;
		int age = -1;

		rcu_read_lock();
		list_for_each_entry_rcu(it, &t->head, list) {
			for (int i = 0; i < t->spin; i++)
				cpu_relax(); /* stay inside a while */
			if (kmem_is_poisoned(it, LAB1_FIELDS)) {
				age = AGE_MAX + 1;
				break;
			}
			age = __atomic_load_n(&it->age, __ATOMIC_RELAXED);
			if (age < 0 || age > AGE_MAX)
				age = AGE_MAX + 1;
			break; /* only the first item */
		}
		rcu_read_unlock();
		if (age < 0)
			t->empty[id]++;
		else
			t->ages[id][age]++;
		t->reads[id]++;
		cond_resched();
	}
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Parallel mode's time bound: checked after a grace period, so at least one runs. */
static bool out_of_time(const struct torture *t, double start)
{
	return t->seconds > 0 && now_seconds() - start >= t->seconds;
}

static int torture_writer(void *arg)
{
	struct torture *t = arg;
	long iterations = t->grace_periods;
	double start = now_seconds();
	struct item *it, *n;

	t->grace_periods = 0;
	for (long i = 0; i < iterations && (i == 0 || !out_of_time(t, start)); i++) {
		struct item *new = lab1_item(i);

		list_add_rcu(&new->list, &t->head);
		if (list_empty(&t->head) || t->head.next != &new->list ||
		    new->list.next == &t->head) {
			/* list_add_rcu() did not link it in front of the old one */
			t->writer_broken = 1;
			if (list_empty(&t->head))
				kfree(new);
			break;
		}
		struct item *old = list_entry(new->list.next, struct item, list);

		list_del_rcu(&old->list);
		__atomic_store_n(&old->age, 1, __ATOMIC_RELAXED);
		list_add_tail(&old->retired_node, &t->retired);
		synchronize_rcu();
		t->grace_periods++;
		list_for_each_entry_safe(it, n, &t->retired, retired_node) {
			int age = __atomic_load_n(&it->age, __ATOMIC_RELAXED) + 1;

			__atomic_store_n(&it->age, age, __ATOMIC_RELAXED);
			if (age >= AGE_MAX) {
				list_del(&it->retired_node);
				kfree(it);
			}
		}
		cond_resched();
	}
	WRITE_ONCE(t->writer_done, 1);
	return 0;
}

static void run_torture(struct torture *t, long iterations)
{
	struct reader_arg ra[NR_READERS];
	struct task_struct *rk[NR_READERS], *wk;
	struct item *it, *n;

	INIT_LIST_HEAD(&t->head);
	INIT_LIST_HEAD(&t->retired);
	list_add_rcu(&lab1_item(-1)->list, &t->head);
	t->grace_periods = iterations;
	for (int i = 0; i < NR_READERS; i++) {
		ra[i] = (struct reader_arg){ t, i };
		rk[i] = kthread_run_on_cpu(torture_reader, &ra[i], i, "reader/%u");
	}
	wk = kthread_run_on_cpu(torture_writer, t, NR_READERS, "writer");
	kthread_stop(wk);
	WRITE_ONCE(t->writer_done, 1);
	for (int i = 0; i < NR_READERS; i++)
		kthread_stop(rk[i]);
	list_for_each_entry_safe(it, n, &t->retired, retired_node)
		kfree(it);
	lab1_free_all(&t->head);
}

/* Totals over readers: reads, failures (age >= 2 or poison), and a summary line. */
static long torture_report(const struct torture *t, const char *what, long *failures)
{
	long reads = 0, age[AGE_MAX + 2] = { 0 }, empty = 0;

	for (int r = 0; r < NR_READERS; r++) {
		reads += t->reads[r];
		empty += t->empty[r];
		for (int a = 0; a <= AGE_MAX + 1; a++)
			age[a] += t->ages[r][a];
	}
	*failures = age[AGE_MAX + 1];
	for (int a = 2; a <= AGE_MAX; a++)
		*failures += age[a];
	/* printf, not cr_log_info(): Criterion shows info only with --verbose */
	printf("torture %s: %ld grace periods, %ld reads: age 0: %ld, age 1: %ld, "
	       "age 2: %ld, age 3: %ld, age %d: %ld, freed: %ld, empty: %ld; failures %ld\n",
	       what, t->grace_periods, reads, age[0], age[1], age[2], age[3], AGE_MAX,
	       age[AGE_MAX], age[AGE_MAX + 1], empty, *failures);
	fflush(stdout);
	return reads;
}

/* @iterations: the grace periods the writer must have done (-1: at least one). */
static void torture_assert(const struct torture *t, long iterations, const char *what)
{
	long failures, reads = torture_report(t, what, &failures);

	cr_assert(!t->writer_broken,
		  "%s: list_add_rcu() did not put the new item first, in front of the old "
		  "one (TODO 6)", what);
	if (iterations >= 0)
		cr_assert_eq(t->grace_periods, iterations,
			     "%s: the writer did %ld of %ld grace periods",
			     what, t->grace_periods, iterations);
	else
		cr_assert_gt(t->grace_periods, 0, "%s: the writer did no grace period", what);
	cr_assert(reads > 0, "%s: the readers never ran", what);
	cr_assert(reads > t->empty[0] + t->empty[1] + t->empty[2],
		  "%s: the readers never found an item: check list_for_each_entry_rcu() (TODO 8)",
		  what);
	cr_assert_eq(failures, 0,
		     "%s: %ld reads found an item whose age was 2 or more (or freed): a reader "
		     "was still inside after a whole grace period had ended, so "
		     "synchronize_rcu() returned too soon", what, failures);
}

#define SEEDED_ITERATIONS 12

static void seeded(void *arg)
{
	struct torture t;
	char what[48];

	(void)arg;
	memset(&t, 0, sizeof(t));
	t.spin = 4;
	run_torture(&t, SEEDED_ITERATIONS);
	snprintf(what, sizeof(what), "seed %llu", (unsigned long long)sim_seed());
	torture_assert(&t, SEEDED_ITERATIONS, what);
}

SIM_TEST(torture, seeded_sweep,
	 .description = "rcutorture in deterministic mode: no reader sees age >= 2, any seed")
{
	struct sim_config cfg = sim_forced_config();

	sim_run_seeds(&cfg, seeded, NULL);
}

#define PARALLEL_ITERATIONS 2000
#define PARALLEL_SECONDS 1.0

SIM_TEST(torture, parallel, .timeout = 120,
	 .description = "rcutorture on real threads: no reader sees age >= 2")
{
	struct sim_config cfg = sim_default_config();
	static struct torture t;

	cfg.mode = SIM_PARALLEL;
	sim_boot(&cfg);
	t.spin = 20;
	t.seconds = PARALLEL_SECONDS;
	run_torture(&t, PARALLEL_ITERATIONS);
	torture_assert(&t, -1, "parallel");
}
