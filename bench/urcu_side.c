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

static struct bench_obj obj = { 1 }, obj2 = { 1 };
static struct bench_obj *gp = &obj;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;

static inline long read_pair(void)
{
	F(read_lock)();
	struct bench_obj *p = rcu_dereference(gp);
	long v = p->value;

	F(read_unlock)();
	return v;
}

BENCH_DEFINE_READ_BATCH(read_pair)

#ifdef BENCH_QSBR
static void quiescent_state(void)
{
	F(quiescent_state)();
}
#else
#define quiescent_state NULL
#endif

static struct bench_readers rs;

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
	struct bench_reader *r = arg;

	bench_pin(r->i);
	F(register_thread)();
	if (r->idle)
		idle_reader();
	else
		bench_reader_loop(&rs, r, read_batch, quiescent_state, NULL);
	F(unregister_thread)();
	return NULL;
}

static void spawn(struct bench_reader *r)
{
	pthread_create(&r->thread, NULL, reader, r);
}

static void join(struct bench_reader *r)
{
	pthread_join(r->thread, NULL);
}

/* stop is already set: a reader that has not yet waited sees it under the lock. */
static void wake(void)
{
	pthread_mutex_lock(&idle_lock);
	pthread_cond_broadcast(&idle_cv);
	pthread_mutex_unlock(&idle_lock);
}

static struct bench_readers rs = { .spawn = spawn, .join = join, .wake = wake };

static double reads_per_s(int n, double secs)
{
	return bench_time_reads(&rs, n, secs);
}

/* The updater is not a registered reader (QSBR: it must not be online). */
static void synchronize(void)
{
	F(synchronize_rcu)();
}

static double sync_ns(enum sync_mode mode, int nreaders, int iters)
{
	return bench_time_sync(&rs, mode == SYNC_ALONE ? 0 : nreaders, mode == SYNC_IDLE,
			       synchronize, iters);
}

/* The torture updater: publish the other object, wait for the readers of the old one. */
static void replace_and_sync(void)
{
	rcu_assign_pointer(gp, gp == &obj ? &obj2 : &obj);
	F(synchronize_rcu)();
}

static double torture_reads_per_s(int n, double secs)
{
	return bench_time_torture(&rs, n, secs, replace_and_sync);
}

const struct read_side SIDE = {
	.name = SIDE_NAME,
	.reads_per_s = reads_per_s,
	.sync_ns = sync_ns,
	.torture_reads_per_s = torture_reads_per_s,
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
