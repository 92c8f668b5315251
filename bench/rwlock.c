/*
 * rwlock.c - the read side every RCU is compared with: pthread_rwlock.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "bench.h"

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct bench_obj obj = { 1 };
static struct bench_obj *gp = &obj;
static struct bench_readers rs;

struct reader {
	pthread_t thread;
	int i;
	unsigned long reads;
	long sum;
};

static long read_batch(int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		pthread_rwlock_rdlock(&lock);
		struct bench_obj *p = __atomic_load_n(&gp, __ATOMIC_RELAXED);
		sum += p->value;
		pthread_rwlock_unlock(&lock);
	}
	return sum;
}

static void *reader(void *arg)
{
	struct reader *r = arg;

	bench_pin(r->i);
	r->reads = bench_reader_loop(&rs, read_batch, NULL, NULL, &r->sum);
	return NULL;
}

struct run {
	struct reader *r;
	int n;
};

static unsigned long stop_readers(void *arg)
{
	struct run *run = arg;
	unsigned long total = 0;

	atomic_store(&rs.stop, 1);
	for (int i = 0; i < run->n; i++) {
		pthread_join(run->r[i].thread, NULL);
		total += run->r[i].reads;
	}
	free(run->r);
	return total;
}

static double reads_per_s(int n, double secs)
{
	struct run run = { calloc(n ? n : 1, sizeof(struct reader)), n };

	bench_readers_reset(&rs);
	for (int i = 0; i < n; i++) {
		run.r[i].i = i;
		pthread_create(&run.r[i].thread, NULL, reader, &run.r[i]);
	}
	bench_readers_wait_ready(&rs, n);
	return bench_time_reads(&rs, secs, stop_readers, &run);
}

const struct read_side read_rwlock = {
	.name = "pthread_rwlock",
	.reads_per_s = reads_per_s,
	.sync_ns = NULL,
};
