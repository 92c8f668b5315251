/*
 * readers.c - the reader loop and the timings every side shares.
 *
 * Rule kept here: every side's readers run this one loop (ready, wait for
 * go, batches of bench_batch read pairs with the side's between-batch call,
 * until stop) and are timed by these functions with the same clock, so that
 * the sides differ only in their read pair and their quiescent state.
 */
#include "bench.h"

void bench_readers_reset(struct bench_readers *rs)
{
	atomic_store(&rs->go, 0);
	atomic_store(&rs->stop, 0);
	atomic_store(&rs->ready, 0);
}

void bench_reader_ready(struct bench_readers *rs)
{
	atomic_fetch_add(&rs->ready, 1);
}

void bench_readers_wait_ready(struct bench_readers *rs, int n)
{
	while (atomic_load(&rs->ready) < n)
		;
}

unsigned long bench_reader_loop(struct bench_readers *rs, long (*batch)(int n),
				void (*between)(void), void (*relax)(void), long *sum)
{
	const int n = bench_batch;
	unsigned long reads = 0;
	long s = 0;

	bench_reader_ready(rs);
	while (!atomic_load(&rs->go))
		if (relax)
			relax();
	while (!atomic_load_explicit(&rs->stop, memory_order_relaxed)) {
		s += batch(n);
		reads += n;
		if (between)
			between();
	}
	*sum = s;
	return reads;
}

double bench_time_reads(struct bench_readers *rs, double secs,
			unsigned long (*stop_all)(void *ctx), void *ctx)
{
	uint64_t t0 = bench_now_ns();

	atomic_store(&rs->go, 1);
	bench_sleep(secs);
	uint64_t t1 = bench_now_ns();
	unsigned long total = stop_all(ctx);

	return total / ((t1 - t0) * 1e-9);
}

double bench_mean_ns(void (*fn)(void), int iters)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < iters; i++)
		fn();
	return (double)(bench_now_ns() - t0) / iters;
}
