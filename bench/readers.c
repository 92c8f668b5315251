/*
 * readers.c - the reader loop and the timings every side shares.
 *
 * Rule kept here: every side's readers run this one loop (ready, wait for
 * go, batches of bench_batch read pairs with the side's between-batch call,
 * until stop) and are started, stopped and timed by these functions with the
 * same clock, so that the sides differ only in their read pair, their
 * quiescent state and how a reader thread is made.
 */
#include <stdlib.h>
#include "bench.h"

void bench_reader_ready(struct bench_readers *rs)
{
	atomic_fetch_add(&rs->ready, 1);
}

void bench_reader_loop(struct bench_readers *rs, struct bench_reader *r,
		       long (*batch)(int n), void (*between)(void), void (*relax)(void))
{
	const int n = bench_batch;
	unsigned long reads = 0;
	long sum = 0;

	bench_reader_ready(rs);
	while (!atomic_load(&rs->go))
		if (relax)
			relax();
	while (!atomic_load_explicit(&rs->stop, memory_order_relaxed)) {
		sum += batch(n);
		reads += n;
		if (between)
			between();
	}
	r->reads = reads;
	r->sum = sum;
}

/* Start @n readers and wait until each is ready (busy ones wait for go). */
static void readers_start(struct bench_readers *rs, int n, bool idle)
{
	rs->r = calloc(n ? n : 1, sizeof(*rs->r));
	rs->n = n;
	atomic_store(&rs->go, 0);
	atomic_store(&rs->stop, 0);
	atomic_store(&rs->ready, 0);
	for (int i = 0; i < n; i++) {
		rs->r[i].i = i;
		rs->r[i].idle = idle;
		rs->spawn(&rs->r[i]);
	}
	while (atomic_load(&rs->ready) < n)
		;
}

/* Stop the readers, wait for each: the pairs they read. */
static unsigned long readers_stop(struct bench_readers *rs)
{
	unsigned long total = 0;

	atomic_store(&rs->stop, 1);
	if (rs->wake)
		rs->wake();
	for (int i = 0; i < rs->n; i++) {
		rs->join(&rs->r[i]);
		total += rs->r[i].reads;
	}
	free(rs->r);
	rs->r = NULL;
	return total;
}

double bench_time_reads(struct bench_readers *rs, int n, double secs)
{
	readers_start(rs, n, false);
	uint64_t t0 = bench_now_ns();

	atomic_store(&rs->go, 1);
	bench_sleep(secs);
	uint64_t t1 = bench_now_ns();
	unsigned long total = readers_stop(rs);

	return total / ((t1 - t0) * 1e-9);
}

double bench_time_sync(struct bench_readers *rs, int n, bool idle, void (*sync)(void),
		       int iters)
{
	readers_start(rs, n, idle);
	atomic_store(&rs->go, 1);
	double ns = bench_mean_ns(sync, iters);

	readers_stop(rs);
	return ns;
}

double bench_time_torture(struct bench_readers *rs, int n, double secs, void (*update)(void))
{
	readers_start(rs, n, false);
	uint64_t t0 = bench_now_ns(), end = t0 + (uint64_t)(secs * 1e9), t1;

	atomic_store(&rs->go, 1);
	do {
		update();
		t1 = bench_now_ns();
	} while (t1 < end);
	unsigned long total = readers_stop(rs);

	return total / ((t1 - t0) * 1e-9) / (n ? n : 1);
}

double bench_mean_ns(void (*fn)(void), int iters)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < iters; i++)
		fn();
	return (double)(bench_now_ns() - t0) / iters;
}
