/* lab6_util.c - see lab6_util.h. */
#include <stdio.h>
#include <linux/compiler.h>
#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/smp.h>
#include <sim/test.h>
#include "lab6_util.h"

void queue_lazy_on(int cpu, struct rcu_head *rh, rcu_callback_t func)
{
	sim_call_rcu_on(cpu, rh, func);
}

void queue_hurry_on(int cpu, struct rcu_head *rh, rcu_callback_t func)
{
	migrate_to_cpu(cpu);
	call_rcu_hurry(rh, func);
	migrate_to_cpu(-1);
}

const char *pass_point(int cpu)
{
	static char names[NR_CPUS][24];

	if (!names[cpu][0])
		snprintf(names[cpu], sizeof(names[cpu]), "rcu_cb_pass/%d", cpu);
	return names[cpu];
}

void queue_ready_held(int cpu, struct rec_cb *cbs, int n)
{
	sim_hold_point(pass_point(cpu));
	migrate_to_cpu(cpu);
	for (int i = 0; i < n; i++) {
		rec_cb_init(&cbs[i], cpu);
		call_rcu_hurry(&cbs[i].rh, rec_cb_func);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point(pass_point(cpu)), 1,
		     "%d callbacks queued with call_rcu_hurry() on CPU %d never became ready: "
		     "rcuc/%d did not reach its first pass over DONE (rcu_cb_pass_begin()) once "
		     "their grace period was over (TODO 1-3)", n, cpu, cpu);
}

void start_slow_on(int cpu, struct slow_cb *s)
{
	slow_cb_init(s);
	queue_hurry_on(cpu, &s->rh, slow_cb_func);
	sim_run_until_idle();
	cr_assert(READ_ONCE(s->started), "a callback queued with call_rcu_hurry() on CPU %d was "
		  "never invoked: it goes to CPU %d's NEXT (TODO 1, 2), and rcuc/%d gives NEXT a "
		  "grace period and invokes DONE (TODO 3)", cpu, cpu, cpu);
}

void queue_into_wait(int cpu, struct rec_cb *r)
{
	long gps = trace_count(TR_GP_START);

	queue_rec_on(cpu, r, false);
	sim_run_until_idle();
	cr_assert_gt(trace_count(TR_GP_START), gps,
		     "a callback queued with call_rcu_hurry() on CPU %d started no grace period: "
		     "it wakes rcuc/%d, which joins NEXT to WAIT and calls synchronize_rcu() "
		     "(TODO 1-3)", cpu, cpu);
}

void release_slow(struct slow_cb *s)
{
	slow_cb_release(s);
	sim_run_until_idle();
}

void stamp_cb_init(struct stamp_cb *c)
{
	c->times = 0;
	c->at = 0;
}

void stamp_cb_func(struct rcu_head *rh)
{
	struct stamp_cb *c = container_of(rh, struct stamp_cb, rh);

	WRITE_ONCE(c->at, jiffies);
	WRITE_ONCE(c->times, c->times + 1);
}

static int downer_fn(void *arg)
{
	struct downer *d = arg;

	d->ret = cpu_down(d->cpu);
	return 0;
}

void downer_start(struct downer *d, unsigned int cpu, int on)
{
	d->cpu = cpu;
	d->ret = 1;
	d->task = kthread_run_on_cpu(downer_fn, d, (unsigned int)on, "downer");
}

void downer_stop(struct downer *d)
{
	if (d->task)
		kthread_stop(d->task);
	d->task = NULL;
}

void lab6_begin(void)
{
	rec_cb_reset();
	rcu_callbacks_init();
}

void queue_rec_on(int cpu, struct rec_cb *r, bool lazy)
{
	rec_cb_init(r, cpu);
	if (lazy)
		queue_lazy_on(cpu, &r->rh, rec_cb_func);
	else
		queue_hurry_on(cpu, &r->rh, rec_cb_func);
}

void lab6_end(void)
{
	int cpu;

	sim_release_point(CPUHP_DEAD_POINT);
	for_each_possible_cpu(cpu)
		sim_release_point(pass_point(cpu));
	sim_run_until_idle();
	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			cpu_up(cpu);
	sim_run_until_idle();
	rcu_callbacks_exit();
}

void run_seeds_on(sim_scenario_fn fn, int ncpus, int mode)
{
	struct sim_config cfg = mode == FORCED ? sim_forced_config() : sim_default_config();

	cfg.nr_cpus = ncpus;
	if (mode == SIM_PARALLEL)
		cfg.mode = SIM_PARALLEL;
	sim_run_seeds(&cfg, fn, NULL);
}

struct task_struct *hold_reader(int cpu)
{
	return reader_held_at(cpu, "lab6_reader");
}

void release_reader(struct task_struct *reader)
{
	reader_let_go(reader, "lab6_reader");
}

void start_barrier(struct barrier_caller *bc, int cpu, void (*at_return)(struct barrier_caller *bc))
{
	*bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = at_return };
	barrier_caller_start(bc, cpu);
	sim_run_until_idle();
}

void expect_returned(struct barrier_caller *bc, const char *what)
{
	cr_assert(READ_ONCE(bc->returned), "seed %llu: rcu_barrier() did not return once %s: "
		  "%s (TODO 6-8)", (unsigned long long)sim_seed(), what,
		  barrier_caller_polls(bc) ? barrier_caller_polls(bc) :
		  "does every marker it waits for run, and the last complete()?");
	cr_assert(!bc->early, "seed %llu: rcu_barrier() returned before %s (TODO 6-8)",
		  (unsigned long long)sim_seed(), what);
	barrier_caller_stop(bc);
}

void finish(struct barrier_caller *bc, const char *what)
{
	expect_returned(bc, what);
	lab6_end();
}
