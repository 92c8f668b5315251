/*
 * urcu_side.c - liburcu's read and update sides, compiled once per flavour:
 * -DBENCH_QSBR (liburcu-qsbr: free readers, threads announce quiescent
 * states) or -DBENCH_MEMB (liburcu-memb: readers bump a per-thread counter,
 * the updater uses sys_membarrier()).
 *
 * Rule kept here: the reader loop is the one every side runs (bench.h); a
 * QSBR reader announces a quiescent state once per BENCH_BATCH pairs, as the
 * reference's reader calls cond_resched(), and goes offline while it blocks.
 */
#define _GNU_SOURCE
#define _LGPL_SOURCE /* the inline read side, as a real user builds it */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#if defined(BENCH_QSBR)
#include <urcu/urcu-qsbr.h>
#define F(x) urcu_qsbr_##x
#define SIDE_NAME "liburcu-qsbr"
#define SIDE read_urcu_qsbr
#elif defined(BENCH_MEMB)
#include <urcu/urcu-memb.h>
#define F(x) urcu_memb_##x
#define SIDE_NAME "liburcu-memb"
#define SIDE read_urcu_memb
#else
#error "define BENCH_QSBR or BENCH_MEMB"
#endif
#include "bench.h"

static struct bench_obj obj = { 1 };
static struct bench_obj *gp = &obj;
static struct bench_readers rs;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;

struct reader {
	pthread_t thread;
	int i;
	bool idle;
	unsigned long reads;
	long sum;
};

static long read_batch(int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		F(read_lock)();
		struct bench_obj *p = rcu_dereference(gp);
		sum += p->value;
		F(read_unlock)();
	}
	return sum;
}

#ifdef BENCH_QSBR
static void quiescent_state(void)
{
	F(quiescent_state)();
}
#else
#define quiescent_state NULL
#endif

/* Registered, blocked outside any critical section. */
static void idle_reader(void)
{
#ifdef BENCH_QSBR
	F(thread_offline)();
#endif
	pthread_mutex_lock(&idle_lock);
	bench_reader_ready(&rs);
	while (!atomic_load(&rs.stop))
		pthread_cond_wait(&idle_cv, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
#ifdef BENCH_QSBR
	F(thread_online)();
#endif
}

static void *reader(void *arg)
{
	struct reader *r = arg;

	bench_pin(r->i);
	F(register_thread)();
	if (r->idle)
		idle_reader();
	else
		r->reads = bench_reader_loop(&rs, read_batch, quiescent_state, NULL, &r->sum);
	F(unregister_thread)();
	return NULL;
}

static struct reader *start_readers(int n, bool idle)
{
	struct reader *r = calloc(n ? n : 1, sizeof(*r));

	bench_readers_reset(&rs);
	for (int i = 0; i < n; i++) {
		r[i].i = i;
		r[i].idle = idle;
		pthread_create(&r[i].thread, NULL, reader, &r[i]);
	}
	bench_readers_wait_ready(&rs, n);
	return r;
}

struct run {
	struct reader *r;
	int n;
};

static unsigned long stop_readers(void *arg)
{
	struct run *run = arg;
	unsigned long total = 0;

	pthread_mutex_lock(&idle_lock);
	atomic_store(&rs.stop, 1);
	pthread_cond_broadcast(&idle_cv);
	pthread_mutex_unlock(&idle_lock);
	for (int i = 0; i < run->n; i++) {
		pthread_join(run->r[i].thread, NULL);
		total += run->r[i].reads;
	}
	free(run->r);
	return total;
}

static double reads_per_s(int n, double secs)
{
	struct run run = { start_readers(n, false), n };

	return bench_time_reads(&rs, secs, stop_readers, &run);
}

static void synchronize(void)
{
	F(synchronize_rcu)();
}

static double sync_ns(enum sync_mode mode, int nreaders, int iters)
{
	int n = mode == SYNC_ALONE ? 0 : nreaders;
	struct run run = { start_readers(n, mode == SYNC_IDLE), n };

	atomic_store(&rs.go, 1);
	/* The updater is not a registered reader (QSBR: it must not be online). */
	double ns = bench_mean_ns(synchronize, iters);

	stop_readers(&run);
	return ns;
}

const struct read_side SIDE = {
	.name = SIDE_NAME,
	.reads_per_s = reads_per_s,
	.sync_ns = sync_ns,
};

#ifdef BENCH_MEMB
/* ---- call_rcu() and rcu_barrier() (memb: the default flavour) ---------- */

static atomic_long invoked;

static void cb(struct rcu_head *head)
{
	(void)head;
	atomic_fetch_add_explicit(&invoked, 1, memory_order_relaxed);
}

static void cb_run(const struct cb_side *self, int n, struct cb_result *res)
{
	struct rcu_head *heads = calloc(n, sizeof(*heads));

	(void)self;

	F(register_thread)();
	atomic_store(&invoked, 0);
	uint64_t t0 = bench_now_ns();
	for (int i = 0; i < n; i++)
		F(call_rcu)(&heads[i], cb);
	uint64_t t1 = bench_now_ns();
	F(barrier)();
	uint64_t t2 = bench_now_ns();
	F(unregister_thread)();
	if (atomic_load(&invoked) != n)
		abort();
	res->enqueue_ns = (double)(t1 - t0) / n;
	res->barrier_ns = (double)(t2 - t1);
	res->cbs_per_s = n / ((t2 - t0) * 1e-9);
	free(heads);
}

static void barrier(void)
{
	F(barrier)();
}

static double cb_barrier_empty_ns(const struct cb_side *self, int iters)
{
	(void)self;
	F(register_thread)();
	double ns = bench_mean_ns(barrier, iters);

	F(unregister_thread)();
	return ns;
}

const struct cb_side cb_urcu_memb = {
	.name = "liburcu-memb",
	.run = cb_run,
	.barrier_empty_ns = cb_barrier_empty_ns,
};
#endif
