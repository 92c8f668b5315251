/*
 * ref_read.c - the reference's read side and synchronize_rcu(), inside the
 * simulated kernel (booted by ref.c: parallel mode, trace off). Reader
 * tasks are kthreads bound to simulated CPUs; the updater is the booting
 * thread (task "test", which holds no CPU).
 *
 * Compiled twice:
 *  - as is ("reference"): lab 1's rcu.c linked in, its rcu_read_lock()
 *    calling the simulated kernel's debug hook rcu_lock_acquire() (depth
 *    count, "holds no CPU" check; a scheduling point where schedules are
 *    explored or traced);
 *  - with -DBENCH_NOHOOK ("reference-nohook"): the same rcu.c included here
 *    with the debug hooks compiled out, as a production kernel builds it
 *    (no lockdep, CONFIG_PREEMPT=n), so the compiler inlines the empty
 *    read side into the loop. The difference between the two is what the
 *    simulated kernel costs, not what the algorithm costs.
 *
 * Rule kept here: the students' API as they write it (rcu_read_lock(),
 * rcu_dereference(), rcu_read_unlock(), synchronize_rcu()). A busy reader
 * calls cond_resched() once per BENCH_BATCH pairs, as a liburcu-qsbr reader
 * calls urcu_qsbr_quiescent_state(): a non-preemptible kernel needs it.
 */
#define _GNU_SOURCE
#ifdef BENCH_NOHOOK
#include "nohook.h"
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <sim/sim.h>
#include "rculist.h"
#include "bench.h"
#ifdef BENCH_NOHOOK
#include "rcu.c"
#endif

extern int bench_ref_cpus;

static struct bench_obj obj = { 1 }, obj2 = { 1 };
static struct bench_obj *gp;
static DECLARE_WAIT_QUEUE_HEAD(idle_wq);

static inline long read_pair(void)
{
	rcu_read_lock();
	struct bench_obj *p = rcu_dereference(gp);
	long v = p->value;

	rcu_read_unlock();
	return v;
}

BENCH_DEFINE_READ_BATCH(read_pair)

static void quiescent_state(void)
{
	cond_resched();
}

static void relax(void)
{
	cpu_relax();
}

static struct bench_readers rs;

static int reader(void *arg)
{
	struct bench_reader *r = arg;

	bench_pin(r->i);
	if (r->idle) {
		/* Blocked outside any critical section: its CPU is idle. */
		bench_reader_ready(&rs);
		wait_event(idle_wq, atomic_load(&rs.stop) || kthread_should_stop());
		return 0;
	}
	bench_reader_loop(&rs, r, read_batch, quiescent_state, relax);
	return 0;
}

static void spawn(struct bench_reader *r)
{
	r->task = kthread_run_on_cpu(reader, r, r->i, "reader/%u");
}

static void join(struct bench_reader *r)
{
	kthread_stop(r->task);
}

static void wake(void)
{
	wake_up(&idle_wq);
}

static struct bench_readers rs = { .spawn = spawn, .join = join, .wake = wake };

/* Readers are kthreads on simulated CPUs: no more than there are. */
static int readers_fit(int n)
{
	if (n > bench_ref_cpus) {
		fprintf(stderr, "bench: %d readers, %d simulated CPUs\n", n, bench_ref_cpus);
		abort();
	}
	if (!gp)
		rcu_assign_pointer(gp, &obj);
	return n;
}

static double reads_per_s(int n, double secs)
{
	return bench_time_reads(&rs, readers_fit(n), secs);
}

static double sync_ns(enum sync_mode mode, int nreaders, int iters)
{
	int n = readers_fit(mode == SYNC_ALONE ? 0 : nreaders);

	return bench_time_sync(&rs, n, mode == SYNC_IDLE, synchronize_rcu, iters);
}

/* The torture updater: publish the other object, wait for the readers of the old one. */
static void replace_and_sync(void)
{
	rcu_assign_pointer(gp, gp == &obj ? &obj2 : &obj);
	synchronize_rcu();
}

static double torture_reads_per_s(int n, double secs)
{
	return bench_time_torture(&rs, readers_fit(n), secs, replace_and_sync);
}

/* One table, named after the build it is compiled in (see the top of this file). */
#ifdef BENCH_NOHOOK
#define READ_REF read_ref_nohook
#define READ_REF_NAME "reference-nohook"
#else
#define READ_REF read_ref
#define READ_REF_NAME "reference"
#endif

const struct read_side READ_REF = {
	.name = READ_REF_NAME,
	.reads_per_s = reads_per_s,
	.sync_ns = sync_ns,
	.torture_reads_per_s = torture_reads_per_s,
};

