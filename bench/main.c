/*
 * main.c - the benchmark driver: every side measured in one process,
 * repetitions interleaved (each repetition visits every side, in an order
 * that rotates), raw samples printed as CSV for bench.py to summarise.
 *
 *   rcubench [--quick] [--reps N] [--secs S] [--threads N] [--cbs N]
 *            [--batch N] [--only GROUP] [--lab2 call_rcu.so] [--lab4 tree_rcu.so]
 *            [--lab6 tree.so]
 *
 * --batch: read pairs between quiescent states for reads/s (default 1024).
 * --only: one group of metrics (read_pair, reads, torture, sync, callbacks),
 * e.g. to count one loop's instructions under callgrind.
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

struct opts {
	int reps, threads, cbs, batch;
	double secs, sample_ns;
	const char *lab2, *lab4, *lab6, *only;
};

/* Is metric group @g measured in this run? */
static bool wanted(const struct opts *o, const char *g)
{
	return !o->only || !strcmp(o->only, g);
}

/* @return 0, or 2 after printing the usage. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .reps = 7, .cbs = 100000, .batch = BENCH_BATCH, .secs = 0.5,
			    .sample_ns = 100e6 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			o->reps = 3;
			o->secs = 0.1;
			o->sample_ns = 20e6;
		} else if (!strcmp(a, "--reps") && v) {
			o->reps = atoi(v), i++;
		} else if (!strcmp(a, "--secs") && v) {
			o->secs = atof(v), i++;
		} else if (!strcmp(a, "--threads") && v) {
			o->threads = atoi(v), i++;
		} else if (!strcmp(a, "--batch") && v) {
			o->batch = atoi(v) > 0 ? atoi(v) : BENCH_BATCH, i++;
		} else if (!strcmp(a, "--cbs") && v) {
			o->cbs = atoi(v), i++;
		} else if (!strcmp(a, "--only") && v) {
			o->only = v, i++;
		} else if (!strcmp(a, "--lab2") && v) {
			o->lab2 = v, i++;
		} else if (!strcmp(a, "--lab4") && v) {
			o->lab4 = v, i++;
		} else if (!strcmp(a, "--lab6") && v) {
			o->lab6 = v, i++;
		} else {
			fprintf(stderr, "usage: %s [--quick] [--reps N] [--secs S] [--threads N] "
				"[--cbs N] [--batch N] [--only GROUP] [--lab2 SO] [--lab4 SO] "
				"[--lab6 SO]\n", argv[0]);
			return 2;
		}
	}
	return 0;
}

/* Every side measured, and the iterations calibrated for each. */
struct sides {
	const struct read_side *rs[8];
	int nrs;
	const struct cb_side *cs[8];
	int ncs;
	int sync_iters[8][3], barrier_iters[8];
};

static void find_sides(struct sides *sd, const struct opts *o)
{
	sd->rs[sd->nrs++] = &read_ref;
	sd->rs[sd->nrs++] = &read_ref_nohook;
	sd->rs[sd->nrs++] = &read_urcu_qsbr;
	sd->rs[sd->nrs++] = &read_urcu_memb;
	sd->rs[sd->nrs++] = &read_rwlock;
	sd->cs[sd->ncs++] = &cb_urcu_memb;
	if ((sd->cs[sd->ncs] = ref_cb_load("reference-lab2", o->lab2)))
		sd->ncs++;
	if ((sd->cs[sd->ncs] = ref_cb_load("reference-lab4", o->lab4)))
		sd->ncs++;
	if ((sd->cs[sd->ncs] = ref_cb_load("reference-lab6", o->lab6)))
		sd->ncs++;
}

/* Calibrate the update-side loops once (also a warm-up). */
static void calibrate_sides(struct sides *sd, const struct opts *o)
{
	for (int s = 0; s < sd->nrs && wanted(o, "sync"); s++)
		for (int m = 0; m < 3; m++)
			if (sd->rs[s]->sync_ns)
				sd->sync_iters[s][m] = calibrate(sd->rs[s]->sync_ns(m, o->threads, 10),
								 o->sample_ns, 10, 1000000);
	for (int s = 0; s < sd->ncs && wanted(o, "callbacks"); s++) {
		/* liburcu starts its call_rcu worker at the first call_rcu(): until
		 * then its rcu_barrier() has nothing to wait for. */
		struct cb_result warm;

		sd->cs[s]->run(sd->cs[s], 1000, &warm);
	}
	for (int s = 0; s < sd->ncs && wanted(o, "callbacks"); s++)
		sd->barrier_iters[s] = !sd->cs[s]->barrier_empty_ns ? 0 :
			calibrate(sd->cs[s]->barrier_empty_ns(sd->cs[s], 3), o->sample_ns, 3, 100000);
}

/* The read sides of one repetition, each visited in an order that rotates. */
static void measure_reads(const struct sides *sd, const struct opts *o, int rep)
{
	/* The read pair alone: one reader, quiescent states 64x rarer. */
	bench_batch = BENCH_PAIR_BATCH;
	for (int k = 0; k < sd->nrs && wanted(o, "read_pair"); k++) {
		const struct read_side *r = sd->rs[(k + rep) % sd->nrs];

		emit("read_pair_ns", r->name, 1, rep, 1e9 / r->reads_per_s(1, o->secs));
	}
	bench_batch = o->batch;
	for (int t = 1; t <= o->threads && wanted(o, "reads"); t++)
		for (int k = 0; k < sd->nrs; k++) {
			const struct read_side *r = sd->rs[(k + rep) % sd->nrs];

			emit("reads_per_s", r->name, t, rep, r->reads_per_s(t, o->secs));
		}
	/* The torture read loop: a quiescent state after every pair, an updater
	 * replacing the object and synchronizing all the while. */
	bench_batch = 1;
	for (int k = 0; k < sd->nrs && wanted(o, "torture"); k++) {
		const struct read_side *r = sd->rs[(k + rep) % sd->nrs];

		if (r->torture_reads_per_s)
			emit("torture_reads_per_s", r->name, o->threads, rep,
			     r->torture_reads_per_s(o->threads, o->secs));
	}
	bench_batch = o->batch;
	for (int m = 0; m < 3 && wanted(o, "sync"); m++)
		for (int k = 0; k < sd->nrs; k++) {
			int s = (k + rep) % sd->nrs;

			if (sd->rs[s]->sync_ns)
				emit(mode_name[m], sd->rs[s]->name, m == SYNC_ALONE ? 0 : o->threads,
				     rep, sd->rs[s]->sync_ns(m, o->threads, sd->sync_iters[s][m]));
		}
}

/* The callback sides of one repetition. */
static void measure_callbacks(const struct sides *sd, const struct opts *o, int rep)
{
	for (int k = 0; k < sd->ncs; k++) {
		int s = (k + rep) % sd->ncs;
		const struct cb_side *c = sd->cs[s];
		struct cb_result res;

		if (c->barrier_empty_ns)
			emit("barrier_empty_ns", c->name, 0, rep,
			     c->barrier_empty_ns(c, sd->barrier_iters[s]));
		c->run(c, o->cbs, &res);
		emit("call_rcu_ns", c->name, o->cbs, rep, res.enqueue_ns);
		if (res.barrier_ns >= 0)
			emit("barrier_full_ns", c->name, o->cbs, rep, res.barrier_ns);
		emit("callbacks_per_s", c->name, o->cbs, rep, res.cbs_per_s);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	struct sides sd = { .nrs = 0 };

	if (parse_args(argc, argv, &o))
		return 2;
	find_cpus();
	if (o.threads <= 0)
		o.threads = nr_online > 0 ? nr_online : 1;
	ref_boot(o.threads);
	find_sides(&sd, &o);
	printf("metric,side,x,rep,value\n");
	fprintf(stderr, "bench: %d CPUs, %d reps, %.2f s per read sample, %d callbacks\n",
		nr_online, o.reps, o.secs, o.cbs);
	calibrate_sides(&sd, &o);
	for (int rep = 0; rep < o.reps; rep++) {
		fprintf(stderr, "bench: repetition %d/%d\n", rep + 1, o.reps);
		measure_reads(&sd, &o, rep);
		if (wanted(&o, "callbacks"))
			measure_callbacks(&sd, &o, rep);
	}
	ref_halt();
	return 0;
}
