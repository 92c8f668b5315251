/*
 * testlib.c - the labs' shared test callbacks and barrier callers (see
 * sim/testlib.h).
 *
 * Rule kept here: nothing here asserts or knows a lab's code; the callbacks
 * and kthreads record with marked stores, and the test reads and judges.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/timer.h>
#include <sim/testlib.h>
#include <sim/trace.h>

void slow_cb_init(struct slow_cb *s)
{
	init_completion(&s->release);
	s->started = 0;
	s->finished = 0;
	s->cpu = -1;
}

void slow_cb_func(struct rcu_head *rh)
{
	struct slow_cb *s = container_of(rh, struct slow_cb, rh);

	WRITE_ONCE(s->cpu, smp_processor_id());
	WRITE_ONCE(s->started, 1);
	wait_for_completion(&s->release);
	WRITE_ONCE(s->finished, 1);
}

void slow_cb_release(struct slow_cb *s)
{
	complete(&s->release);
}

static atomic_t rec_seq;

void rec_cb_reset(void)
{
	atomic_set(&rec_seq, 0);
}

void rec_cb_init(struct rec_cb *r, int cpu)
{
	r->queued_on = cpu;
	r->ran_on = -1;
	r->seq = 0;
	r->times = 0;
}

void rec_cb_func(struct rcu_head *rh)
{
	struct rec_cb *r = container_of(rh, struct rec_cb, rh);

	WRITE_ONCE(r->ran_on, smp_processor_id());
	WRITE_ONCE(r->seq, atomic_inc_return(&rec_seq));
	WRITE_ONCE(r->times, r->times + 1);
}

static int barrier_caller_fn(void *arg)
{
	struct barrier_caller *bc = arg;

	if (bc->before)
		bc->before(bc);
	WRITE_ONCE(bc->called_at, jiffies);
	bc->do_barrier();
	trace_mark("barrier/%d returned", bc->cpu);
	WRITE_ONCE(bc->returned_at, jiffies);
	if (bc->at_return)
		bc->at_return(bc);
	WRITE_ONCE(bc->returned, 1);
	return 0;
}

void barrier_caller_start(struct barrier_caller *bc, int cpu)
{
	bc->cpu = cpu;
	bc->returned = 0;
	bc->early = 0;
	bc->called_at = bc->returned_at = 0;
	bc->task = kthread_run_on_cpu(barrier_caller_fn, bc, cpu, "barrier/%u");
}

void barrier_caller_stop(struct barrier_caller *bc)
{
	if (bc->task)
		kthread_stop(bc->task);
	bc->task = NULL;
}
