/*
 * testlib.c - the labs' shared test callbacks and barrier callers (see
 * sim/testlib.h).
 *
 * Rule kept here: nothing here asserts or knows a lab's code; the callbacks
 * and kthreads record with marked stores, and the test reads and judges
 * (IRQ_RACE_EXPECT_ONCE(), sim/testlib.h, asserts in the test's own file).
 */
#include <limits.h>
#include <stdio.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <sim/sim.h>
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

struct freeme *freeme_alloc(atomic_t *freed)
{
	struct freeme *f = kmalloc(sizeof(*f), GFP_KERNEL);

	f->freed = freed;
	return f;
}

void freeme_func(struct rcu_head *rh)
{
	struct freeme *f = container_of(rh, struct freeme, rh);

	atomic_inc(f->freed);
	kfree(f);
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

const char *barrier_caller_polls(const struct barrier_caller *bc)
{
	static __thread char why[PATH_MAX + 400];
	const char *file = NULL;
	int line = 0;

	long spins;

	if (READ_ONCE(bc->returned) || !bc->task)
		return NULL;
	spins = sim_task_polls(bc->task, &file, &line);
	if (spins) {
		snprintf(why, sizeof(why),
			 "the barrier called on CPU %d spins at %s:%d (%ld cpu_relax() calls "
			 "without sleeping once): a barrier that polls keeps its CPU, and in a "
			 "non-preemptible kernel the marker callback that must run on that CPU "
			 "never does. Sleep until the last marker's callback wakes the barrier: "
			 "wait_for_completion() on the completion it signals", bc->cpu,
			 file ? file : "?", line, spins);
		return why;
	}
	if (!sim_task_sleeps_on_timer(bc->task, &file, &line))
		return NULL;
	snprintf(why, sizeof(why),
		 "it is asleep in msleep() (schedule_timeout()) at %s:%d: a barrier that "
		 "polls its count, sleeping a jiffy between looks, waits for time to pass, and "
		 "no jiffy passes while the test waits for it. Sleep until the last marker's "
		 "callback wakes the barrier: wait_for_completion() on the completion it "
		 "signals", file ? file : "?", line);
	return why;
}

static void irq_race_irq(void *arg)
{
	struct irq_race *r = arg;

	WRITE_ONCE(r->irq_ran, 1);
	r->queue(&r->by_irq.rh, rec_cb_func);
}

static int irq_race_task(void *arg)
{
	struct irq_race *r = arg;

	r->queue(&r->by_task.rh, rec_cb_func);
	return 0;
}

long irq_race_sweep(struct irq_race *r, long max_k, void (*check)(struct irq_race *r, long k))
{
	long k, came = 0;

	for (k = 1; k <= max_k; k++) {
		rec_cb_reset();
		rec_cb_init(&r->by_task, r->cpu);
		rec_cb_init(&r->by_irq, r->cpu);
		r->irq_ran = 0;
		r->start();
		sim_irq_at_access(r->cpu, k, irq_race_irq, r, "queue_irq");
		kthread_stop(kthread_run_on_cpu(irq_race_task, r, (unsigned int)r->cpu, "poster"));
		sim_run_until_idle();
		check(r, k);
		r->stop();
		if (!r->irq_ran)
			break;
		came++;
	}
	return came;
}

static int earlier_kthread_fn(void *arg)
{
	(void)arg;
	return 0;
}

void start_an_earlier_kthread(void)
{
	kthread_stop(kthread_run(earlier_kthread_fn, NULL, "earlier"));
}
