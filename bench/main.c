/*
 * main.c - the benchmark driver: every side measured in one process,
 * repetitions interleaved (each repetition visits every side, in an order
 * that rotates), raw samples printed as CSV for bench.py to summarise.
 *
 *   rcubench [--quick] [--reps N] [--secs S] [--threads N] [--cbs N]
 *            [--batch N] [--lab2 call_rcu.so] [--lab4 tree_rcu.so]
 *
 * --batch: read pairs between quiescent states for reads/s (default 1024).
 *
 * Output lines: metric,side,x,rep,value (x: threads, readers or callbacks).
 * Benchmarks are never tests: nothing here runs in a test suite.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void bench_sleep(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int bench_batch = BENCH_BATCH;
static int online[CPU_SETSIZE], nr_online;

int bench_ncpus(void)
{
	return nr_online;
}

void bench_pin(int i)
{
	cpu_set_t set;

	if (!nr_online)
		return;
	CPU_ZERO(&set);
	CPU_SET(online[i % nr_online], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void find_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			online[nr_online++] = c;
}

static void emit(const char *metric, const char *side, long x, int rep, double v)
{
	printf("%s,%s,%ld,%d,%.6g\n", metric, side, x, rep, v);
	fflush(stdout);
}

static const char *mode_name[] = { "sync_alone_ns", "sync_idle_ns", "sync_busy_ns" };

/* Iterations that make one sample last about @target_ns, from a first try. */
static int calibrate(double ns_per_iter, double target_ns, int lo, int hi)
{
	double n = ns_per_iter > 0 ? target_ns / ns_per_iter : hi;

	return n < lo ? lo : n > hi ? hi : (int)n;
}

int main(int argc, char **argv)
{
	int reps = 7, threads = 0, cbs = 100000, batch = BENCH_BATCH;
	double secs = 0.5, sample_ns = 100e6;
	const char *lab2 = NULL, *lab4 = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			reps = 3;
			secs = 0.1;
			sample_ns = 20e6;
		} else if (!strcmp(a, "--reps") && v) {
			reps = atoi(v), i++;
		} else if (!strcmp(a, "--secs") && v) {
			secs = atof(v), i++;
		} else if (!strcmp(a, "--threads") && v) {
			threads = atoi(v), i++;
		} else if (!strcmp(a, "--batch") && v) {
			batch = atoi(v) > 0 ? atoi(v) : BENCH_BATCH, i++;
		} else if (!strcmp(a, "--cbs") && v) {
			cbs = atoi(v), i++;
		} else if (!strcmp(a, "--lab2") && v) {
			lab2 = v, i++;
		} else if (!strcmp(a, "--lab4") && v) {
			lab4 = v, i++;
		} else {
			fprintf(stderr, "usage: %s [--quick] [--reps N] [--secs S] [--threads N] "
				"[--cbs N] [--batch N] [--lab2 SO] [--lab4 SO]\n", argv[0]);
			return 2;
		}
	}
	find_cpus();
	if (threads <= 0)
		threads = nr_online > 0 ? nr_online : 1;

	const struct read_side *rs[8];
	int nrs = 0;

	rs[nrs++] = &read_ref;
	rs[nrs++] = &read_ref_nohook;
	rs[nrs++] = &read_urcu_qsbr;
	rs[nrs++] = &read_urcu_memb;
	rs[nrs++] = &read_rwlock;

	ref_boot(threads);

	const struct cb_side *cs[8];
	int ncs = 0;

	cs[ncs++] = &cb_urcu_memb;
	if ((cs[ncs] = ref_cb_load("reference-lab2", lab2)))
		ncs++;
	if ((cs[ncs] = ref_cb_load("reference-lab4", lab4)))
		ncs++;

	printf("metric,side,x,rep,value\n");
	fprintf(stderr, "bench: %d CPUs, %d reps, %.2f s per read sample, %d callbacks\n",
		nr_online, reps, secs, cbs);

	/* Calibrate the update-side loops once (also a warm-up). */
	int sync_iters[8][3], barrier_iters[8];

	for (int s = 0; s < nrs; s++)
		for (int m = 0; m < 3; m++)
			if (rs[s]->sync_ns)
				sync_iters[s][m] = calibrate(rs[s]->sync_ns(m, threads, 10),
							     sample_ns, 10, 1000000);
	for (int s = 0; s < ncs; s++) {
		/* liburcu starts its call_rcu worker at the first call_rcu(): until
		 * then its rcu_barrier() has nothing to wait for. */
		struct cb_result warm;

		cs[s]->run(cs[s], 1000, &warm);
	}
	for (int s = 0; s < ncs; s++)
		barrier_iters[s] = !cs[s]->barrier_empty_ns ? 0 : calibrate(cs[s]->barrier_empty_ns(cs[s], 3), sample_ns, 3, 100000);

	for (int rep = 0; rep < reps; rep++) {
		fprintf(stderr, "bench: repetition %d/%d\n", rep + 1, reps);
		/* The read pair alone: one reader, quiescent states 64x rarer. */
		bench_batch = BENCH_PAIR_BATCH;
		for (int k = 0; k < nrs; k++) {
			const struct read_side *r = rs[(k + rep) % nrs];

			emit("read_pair_ns", r->name, 1, rep, 1e9 / r->reads_per_s(1, secs));
		}
		bench_batch = batch;
		for (int t = 1; t <= threads; t++)
			for (int k = 0; k < nrs; k++) {
				const struct read_side *r = rs[(k + rep) % nrs];

				emit("reads_per_s", r->name, t, rep, r->reads_per_s(t, secs));
			}
		for (int m = 0; m < 3; m++)
			for (int k = 0; k < nrs; k++) {
				int s = (k + rep) % nrs;

				if (rs[s]->sync_ns)
					emit(mode_name[m], rs[s]->name, m == SYNC_ALONE ? 0 : threads,
					     rep, rs[s]->sync_ns(m, threads, sync_iters[s][m]));
			}
		for (int k = 0; k < ncs; k++) {
			int s = (k + rep) % ncs;
			struct cb_result res;

			if (cs[s]->barrier_empty_ns)
				emit("barrier_empty_ns", cs[s]->name, 0, rep,
				     cs[s]->barrier_empty_ns(cs[s], barrier_iters[s]));
			cs[s]->run(cs[s], cbs, &res);
			emit("call_rcu_ns", cs[s]->name, cbs, rep, res.enqueue_ns);
			if (res.barrier_ns >= 0)
				emit("barrier_full_ns", cs[s]->name, cbs, rep, res.barrier_ns);
			emit("callbacks_per_s", cs[s]->name, cbs, rep, res.cbs_per_s);
		}
	}
	ref_halt();
	return 0;
}
