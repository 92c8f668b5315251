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

static inline long read_pair(void)
{
	pthread_rwlock_rdlock(&lock);
	struct bench_obj *p = __atomic_load_n(&gp, __ATOMIC_RELAXED);
	long v = p->value;

	pthread_rwlock_unlock(&lock);
	return v;
}

BENCH_DEFINE_READ_BATCH(read_pair)

static struct bench_readers rs;

static void *reader(void *arg)
{
	struct bench_reader *r = arg;

	bench_pin(r->i);
	bench_reader_loop(&rs, r, read_batch, NULL, NULL);
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

static struct bench_readers rs = { .spawn = spawn, .join = join };

static double reads_per_s(int n, double secs)
{
	return bench_time_reads(&rs, n, secs);
}

const struct read_side read_rwlock = {
	.name = "pthread_rwlock",
	.reads_per_s = reads_per_s,
	.sync_ns = NULL,
};
