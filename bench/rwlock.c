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
static atomic_int go, stop, ready;

struct reader {
	pthread_t thread;
	int i;
	unsigned long reads;
	long sum;
};

static void *reader(void *arg)
{
	struct reader *r = arg;
	unsigned long reads = 0;
	long sum = 0;
	const int batch = bench_batch;

	bench_pin(r->i);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < batch; i++) {
			pthread_rwlock_rdlock(&lock);
			struct bench_obj *p = __atomic_load_n(&gp, __ATOMIC_RELAXED);
			sum += p->value;
			pthread_rwlock_unlock(&lock);
		}
		reads += batch;
	}
	r->reads = reads;
	r->sum = sum;
	return NULL;
}

static double reads_per_s(int n, double secs)
{
	struct reader *r = calloc(n, sizeof(*r));
	unsigned long total = 0;

	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	atomic_store(&ready, 0);
	for (int i = 0; i < n; i++) {
		r[i].i = i;
		pthread_create(&r[i].thread, NULL, reader, &r[i]);
	}
	while (atomic_load(&ready) < n)
		;
	uint64_t t0 = bench_now_ns();
	atomic_store(&go, 1);
	bench_sleep(secs);
	atomic_store(&stop, 1);
	uint64_t t1 = bench_now_ns();
	for (int i = 0; i < n; i++) {
		pthread_join(r[i].thread, NULL);
		total += r[i].reads;
	}
	free(r);
	return total / ((t1 - t0) * 1e-9);
}

const struct read_side read_rwlock = {
	.name = "pthread_rwlock",
	.reads_per_s = reads_per_s,
	.sync_ns = NULL,
};
