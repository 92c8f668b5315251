/*
 * bench.h - what the benchmark driver (main.c) needs from each side.
 *
 * Rule kept here: every side is measured by the same driver, with the same
 * reader loop (a lock/dereference/unlock pair, BENCH_BATCH pairs between
 * quiescent states or stop checks) and the same clock. This header includes
 * neither the simulated kernel's headers nor liburcu's: their names clash
 * (rcu_head, rcu_read_lock), so each side lives in its own file.
 *
 * Benchmarks are never tests: nothing here runs in a test suite.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/** Read pairs between two checks of the stop flag (and, for QSBR-like
 * sides, two quiescent states: urcu_qsbr_quiescent_state(), cond_resched()):
 * bench_batch, BENCH_BATCH for reads/s. The read pair's cost alone is
 * measured with BENCH_PAIR_BATCH, where the quiescent state's cost vanishes. */
#define BENCH_BATCH 1024
#define BENCH_PAIR_BATCH 65536
extern int bench_batch;

/** The object readers dereference. */
struct bench_obj {
	long value;
};

enum sync_mode { SYNC_ALONE, SYNC_IDLE, SYNC_BUSY };

/** A read side: RCU flavour or reader-writer lock. */
struct read_side {
	const char *name;
	/* Read pairs per second with @nthreads readers running @secs. */
	double (*reads_per_s)(int nthreads, double secs);
	/* Mean ns per synchronize_rcu() over @iters calls, with @nreaders
	 * readers idle (blocked, outside any critical section) or busy
	 * (the reader loop). NULL: no update side (pthread_rwlock). */
	double (*sync_ns)(enum sync_mode mode, int nreaders, int iters);
};

/** A callback side: call_rcu() and rcu_barrier(). */
struct cb_result {
	double enqueue_ns;  /* per call_rcu() */
	double barrier_ns;  /* rcu_barrier() right after the last call_rcu(); -1: none */
	double cbs_per_s;   /* n / (enqueue time + barrier time) */
};
struct cb_side {
	const char *name;
	/* Enqueue @n callbacks from one thread (CPU 0), then rcu_barrier()
	 * (without one: wait until the last callback has run). */
	void (*run)(const struct cb_side *self, int n, struct cb_result *res);
	/* Mean ns per rcu_barrier() with nothing queued, over @iters calls;
	 * NULL without rcu_barrier() (lab 2). */
	double (*barrier_empty_ns)(const struct cb_side *self, int iters);
	void *ctx;
};

/** What one side's readers share: they start together and stop together (readers.c). */
struct bench_readers {
	atomic_int go, stop, ready;
};
void bench_readers_reset(struct bench_readers *rs);
/* A reader that does not run the loop (an idle one) says it is ready. */
void bench_reader_ready(struct bench_readers *rs);
void bench_readers_wait_ready(struct bench_readers *rs, int n);
/* The one reader loop: ready, wait for go (calling @relax if not NULL), then
 * @batch(bench_batch) and @between (if not NULL) until stop. Returns the
 * pairs read; *sum gets what they read, so that no read is optimised away. */
unsigned long bench_reader_loop(struct bench_readers *rs, long (*batch)(int n),
				void (*between)(void), void (*relax)(void), long *sum);
/* Go, let the ready readers run @secs, then @stop_all(@ctx), which stops
 * them and returns the pairs they read: the reads per second. */
double bench_time_reads(struct bench_readers *rs, double secs,
			unsigned long (*stop_all)(void *ctx), void *ctx);
/* Mean ns per call of @fn over @iters calls. */
double bench_mean_ns(void (*fn)(void), int iters);

/* Helpers (main.c). */
uint64_t bench_now_ns(void);
void bench_sleep(double secs);
void bench_pin(int i);          /* pin the calling thread to online CPU i % n */
int bench_ncpus(void);

/* Sides (NULL-terminated lists fill themselves in). */
extern const struct read_side read_urcu_qsbr, read_urcu_memb, read_rwlock;
extern const struct cb_side cb_urcu_memb;
/* The reference (ref.c): boots the simulated kernel. */
void ref_boot(int nr_cpus);
void ref_halt(void);
extern const struct read_side read_ref, read_ref_nohook;
/* Load a lab's callback machinery (call_rcu.c or tree_rcu.c built as a
 * shared object) under @name; NULL if @path is missing or does not load. */
const struct cb_side *ref_cb_load(const char *name, const char *path);

#endif
