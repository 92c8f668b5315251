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

#include <pthread.h>
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

/**
 * BENCH_DEFINE_READ_BATCH(pair) - a side's batch function, read_batch(n),
 * from its one read pair `static inline long pair(void)` (returns what it
 * read). A batch of one (the torture loop) is the pair inline, as a real
 * reader's would be. A longer batch (read pair, reads/s) runs in a loop of
 * its own function that starts a cache line: a loop of a few bytes runs as
 * fast as its place allows, and the place is the linker's whim (on the
 * 2-CPU Xeon of bench/results, the same 15-byte pair loop takes 0.67 ns a
 * pair where it straddles two 64-byte lines and 0.36 ns elsewhere), so
 * every side's loop is placed alike: at the start of an aligned function.
 */
#define BENCH_DEFINE_READ_BATCH(pair)                                           \
	static __attribute__((noinline, aligned(64))) long pair##_loop(int n)   \
	{                                                                        \
		long sum = 0;                                                    \
									 \
		for (int i = 0; i < n; i++)                                      \
			sum += pair();                                           \
		return sum;                                                      \
	}                                                                        \
	static long read_batch(int n)                                            \
	{                                                                        \
		return n == 1 ? pair() : pair##_loop(n);                         \
	}

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
	/* The torture read loop: reads/s per reader, @nreaders readers each
	 * passing a quiescent state after every read pair while the updater
	 * replaces the object and waits for a grace period, over and over,
	 * for @secs. NULL: no update side. */
	double (*torture_reads_per_s)(int nreaders, double secs);
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

struct task_struct;
/** One reader thread of a side (the reference's are kthreads: @task). */
struct bench_reader {
	int i;                      /* its index: the CPU it is pinned to */
	bool idle;                  /* blocks outside any critical section */
	unsigned long reads;        /* pairs read */
	long sum;                   /* what they read, so no read is optimised away */
	pthread_t thread;
	struct task_struct *task;
};

/** A side's readers: they start together and stop together (readers.c). */
struct bench_readers {
	atomic_int go, stop, ready;
	struct bench_reader *r;
	int n;
	void (*spawn)(struct bench_reader *r);  /* start one reader */
	void (*join)(struct bench_reader *r);   /* wait until it has returned */
	void (*wake)(void);                     /* stop is set: wake idle readers (or NULL) */
};
/* A reader that does not run the loop (an idle one) says it is ready. */
void bench_reader_ready(struct bench_readers *rs);
/* The one reader loop: ready, wait for go (calling @relax if not NULL), then
 * @batch(bench_batch) and @between (if not NULL) until stop; sets r->reads
 * and r->sum. */
void bench_reader_loop(struct bench_readers *rs, struct bench_reader *r,
		       long (*batch)(int n), void (*between)(void), void (*relax)(void));
/* Reads per second of @n busy readers over @secs. */
double bench_time_reads(struct bench_readers *rs, int n, double secs);
/* Mean ns per @sync() over @iters calls, with @n readers busy or idle. */
double bench_time_sync(struct bench_readers *rs, int n, bool idle, void (*sync)(void),
		       int iters);
/* The torture loop (bench_batch must be 1): reads/s per reader of @n busy
 * readers while @update (replace the object, then synchronize) runs in a
 * loop on the calling thread for @secs. */
double bench_time_torture(struct bench_readers *rs, int n, double secs, void (*update)(void));
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
