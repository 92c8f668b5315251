/* qq4_scenario.c - see qq4_scenario.h. */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/compiler.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <sim/sim.h>
#include <sim/test.h>
#include <sim/trace.h>
#include "lab4_util.h"
#include "qq4_scenario.h"

/* ---- the article's rcu_barrier(), 2007: the count starts at zero ---- */

static struct mutex article_mutex;
static struct completion article_completion;
static atomic_t article_count;
static DEFINE_PER_CPU(struct rcu_head, article_head);

static void article_callback(struct rcu_head *notused)
{
	(void)notused;
	if (atomic_dec_and_test(&article_count))
		complete(&article_completion);
}

static void article_func(void *notused)
{
	(void)notused;
	atomic_inc(&article_count);
	call_rcu(this_cpu_ptr(&article_head), article_callback);
}

void article_rcu_barrier_init(void)
{
	mutex_init(&article_mutex);
	init_completion(&article_completion);
	atomic_set(&article_count, 0);
}

void article_rcu_barrier(void)
{
	BUG_ON(in_interrupt());
	mutex_lock(&article_mutex);
	init_completion(&article_completion);
	atomic_set(&article_count, 0);
	on_each_cpu(article_func, NULL, 1);
	wait_for_completion(&article_completion);
	mutex_unlock(&article_mutex);
}

/* ---- the schedule ---- */

static void qq4_at_return(struct barrier_caller *bc)
{
	struct slow_cb *s = bc->arg;

	trace_mark("rcu_barrier() returns");
	bc->early = !READ_ONCE(s->finished);
}

void qq4_scenario(struct qq4_run *r)
{
	static struct slow_cb slow;
	static struct barrier_caller bc;

	r->slow_started = r->returned_before_ipi = r->returned_while_blocked = false;
	r->returned_at_end = r->blocked_done_at_return = false;
	sim_set_ipi_wait_sleeps(r->ipi_wait_sleeps);
	article_rcu_barrier_init();
	rcu_callbacks_init();

	/* 1. A callback on CPU 1, queued before the barrier, blocks. */
	slow_cb_init(&slow);
	trace_mark("queue a blocking callback on CPU 1");
	sim_call_rcu_on(1, &slow.rh, slow_cb_func);
	sim_run_until_idle();
	r->slow_started = READ_ONCE(slow.started);
	if (!r->slow_started) {
		/* call_rcu() or the kthreads do not work: nothing to show. */
		rcu_callbacks_exit();
		return;
	}

	/* 2. CPU 1 takes its cross-call late; the barrier starts on CPU 0. */
	sim_hold_irqs(1);
	trace_mark("CPU 1 holds its interrupts");
	bc = (struct barrier_caller){ .do_barrier = r->do_barrier, .at_return = qq4_at_return,
				      .arg = &slow };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	r->returned_before_ipi = READ_ONCE(bc.returned);

	/* 3. CPU 1 takes rcu_barrier_func(); its marker queues behind the slow callback. */
	trace_mark("CPU 1 takes its interrupts");
	sim_release_irqs(1);
	sim_run_until_idle();
	r->returned_while_blocked = READ_ONCE(bc.returned) && bc.early;

	/* 4. The slow callback finishes; everything drains. */
	trace_mark("release CPU 1's blocking callback");
	slow_cb_release(&slow);
	sim_run_until_idle();
	r->returned_at_end = READ_ONCE(bc.returned);
	r->blocked_done_at_return = r->returned_at_end && !bc.early;
	r->polls = barrier_caller_polls(&bc);
	if (r->returned_at_end)
		barrier_caller_stop(&bc);
	if (r->svg_path)
		trace_write_svg(r->svg_path, r->svg_title);
	rcu_callbacks_exit();
	sim_set_ipi_wait_sleeps(false);
}
