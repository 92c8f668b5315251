/*
 * ref.c - the reference RCU (the workbook's solutions) inside the simulated
 * kernel: boot it (parallel mode, trace off) and load the callback
 * machinery. The read side and synchronize_rcu() are in ref_read.c. Lab 1's
 * rcu.c is linked into this program; lab 2's call_rcu.c and lab 4's
 * tree_rcu.c define the same symbols, so each is a shared object loaded
 * privately (RTLD_LOCAL, -Bsymbolic), resolving kernel symbols from here.
 *
 * Rule kept here: the students' API as they write it (call_rcu(),
 * rcu_barrier(), rcu_callbacks_init()/exit()); nothing here reaches into
 * its internals. Callbacks are queued from a kthread on CPU 0, and
 * rcu_barrier() needs a CPU too (it cross-calls): the caller migrates.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <sim/sim.h>
#include "bench.h"

int bench_ref_cpus;

void ref_boot(int nr_cpus)
{
	struct sim_config cfg = sim_default_config();

	cfg.nr_cpus = nr_cpus;
	cfg.mode = SIM_PARALLEL;
	cfg.trace = false;
	cfg.livelock_ms = 120000;
	sim_boot(&cfg);
	bench_ref_cpus = nr_cpus;
}

/* ---- call_rcu() and rcu_barrier(): lab 2 or lab 4, loaded --------------- */

struct ref_cb {
	struct cb_side side;
	void (*call_rcu)(struct rcu_head *, rcu_callback_t);
	void (*rcu_barrier)(void);
	void (*init)(void);
	void (*exit)(void);
};

static atomic_long invoked;

static void cb(struct rcu_head *head)
{
	(void)head;
	atomic_fetch_add_explicit(&invoked, 1, memory_order_relaxed);
}

struct cb_job {
	const struct ref_cb *m;
	struct rcu_head *heads;
	int n;
	uint64_t t0, t1, t2;
};

/* On CPU 0, as a kernel user would: enqueue, then wait for them all. */
static int cb_job(void *arg)
{
	struct cb_job *j = arg;

	bench_pin(0);
	j->t0 = bench_now_ns();
	for (int i = 0; i < j->n; i++)
		j->m->call_rcu(&j->heads[i], cb);
	j->t1 = bench_now_ns();
	if (j->m->rcu_barrier)
		j->m->rcu_barrier();
	j->t2 = bench_now_ns();
	return 0;
}

static void cb_run(const struct cb_side *self, int n, struct cb_result *res)
{
	struct cb_job j = { .m = self->ctx, .n = n };

	j.heads = calloc(n, sizeof(*j.heads));
	atomic_store(&invoked, 0);
	kthread_stop(kthread_run_on_cpu(cb_job, &j, 0, "cbjob"));
	if (!j.m->rcu_barrier) {
		/* Lab 2 has no rcu_barrier(): end to end is the last callback. */
		while (atomic_load(&invoked) < n)
			sched_yield();
		j.t2 = bench_now_ns();
	}
	if (atomic_load(&invoked) != n) {
		fprintf(stderr, "bench: %s: %ld of %d callbacks invoked after rcu_barrier()\n",
			self->name, atomic_load(&invoked), n);
		abort();
	}
	res->enqueue_ns = (double)(j.t1 - j.t0) / n;
	res->barrier_ns = j.m->rcu_barrier ? (double)(j.t2 - j.t1) : -1;
	res->cbs_per_s = n / ((j.t2 - j.t0) * 1e-9);
	free(j.heads);
}

static double cb_barrier_empty_ns(const struct cb_side *self, int iters)
{
	const struct ref_cb *m = self->ctx;

	migrate_to_cpu(0); /* rcu_barrier() cross-calls: it needs a CPU */
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < iters; i++)
		m->rcu_barrier();
	uint64_t t1 = bench_now_ns();

	migrate_to_cpu(-1);
	return (double)(t1 - t0) / iters;
}

#define MAX_CB_MODULES 4
static struct ref_cb cb_modules[MAX_CB_MODULES];
static int nr_cb_modules;

const struct cb_side *ref_cb_load(const char *name, const char *path)
{
	if (!path || !*path || nr_cb_modules == MAX_CB_MODULES)
		return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "bench: %s: %s\n", name, dlerror());
		return NULL;
	}
	struct ref_cb *m = &cb_modules[nr_cb_modules];

	m->call_rcu = (void (*)(struct rcu_head *, rcu_callback_t))dlsym(h, "call_rcu");
	m->rcu_barrier = (void (*)(void))dlsym(h, "rcu_barrier");
	m->init = (void (*)(void))dlsym(h, "rcu_callbacks_init");
	m->exit = (void (*)(void))dlsym(h, "rcu_callbacks_exit");
	if (!m->call_rcu || !m->init || !m->exit) {
		fprintf(stderr, "bench: %s: missing call_rcu/rcu_callbacks_init/exit\n",
			name);
		return NULL;
	}
	m->side.name = name;
	m->side.run = cb_run;
	m->side.barrier_empty_ns = m->rcu_barrier ? cb_barrier_empty_ns : NULL;
	m->side.ctx = m;
	m->init();
	nr_cb_modules++;
	return &m->side;
}

void ref_halt(void)
{
	migrate_to_cpu(0);
	for (int i = 0; i < nr_cb_modules; i++)
		if (cb_modules[i].rcu_barrier)
			cb_modules[i].rcu_barrier();
	for (int i = 0; i < nr_cb_modules; i++)
		cb_modules[i].exit();
	migrate_to_cpu(-1);
	long leaks = sim_halt();

	if (leaks)
		fprintf(stderr, "bench: the simulated kernel reports %ld leaks\n", leaks);
}
