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
	queue_on_cpu(cpu, rh, func);
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

void expect_gp_started(long gps_before, int cpu)
{
	cr_assert_gt(trace_count(TR_GP_START), gps_before,
		     "a callback queued with call_rcu_hurry() on CPU %d started no grace period: "
		     "it wakes rcuc/%d, which joins NEXT to WAIT and calls synchronize_rcu() "
		     "(TODO 1-3)", cpu, cpu);
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
	WRITE_ONCE(d->done, 1);
	return 0;
}

void downer_start(struct downer *d, unsigned int cpu, int on)
{
	d->cpu = cpu;
	d->ret = 1;
	d->done = 0;
	d->task = kthread_run_on_cpu(downer_fn, d, (unsigned int)on, "downer");
}

void downer_stop(struct downer *d)
{
	if (d->task)
		kthread_stop(d->task);
	d->task = NULL;
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
