/*
 * test_barrier.c - rcu_barrier() with per-CPU queues: it waits for every
 * callback queued on every CPU before it was called (from tasks or from
 * interrupts), only until the last of them has finished; concurrent callers
 * all return, none early; it is a BUG from IRQ context; lab 3's
 * one-callback barrier is not enough any more.
 */
#include <linux/compiler.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <sim/test.h>
#include "lab4_util.h"

#define NCPU 4

static struct rec_cb first[NCPU];
static struct slow_cb slow[NCPU];
static struct rec_cb after_slow[NCPU][3];

/* At return: were all of slow[] and after_slow[] done? */
static void all_done_at_return(struct barrier_caller *bc)
{
	for (int cpu = 0; cpu < NCPU; cpu++) {
		if (!READ_ONCE(slow[cpu].finished))
			bc->early = 1;
		for (int i = 0; i < 3; i++)
			if (READ_ONCE(after_slow[cpu][i].times) != 1)
				bc->early = 1;
	}
}

/* Release the slow callbacks in this order, checking the barrier after each;
 * the highest-numbered CPU comes last, so a barrier that forgets it shows. */
static const int release_order[NCPU] = { 1, 0, 2, 3 }; /* the last CPU last */

static void release_and_check(struct barrier_caller *bc, int nbc, const char *how)
{
	for (int k = 0; k < NCPU; k++) {
		int cpu = release_order[k];

		for (int b = 0; b < nbc && k == 0; b++)
			cr_assert(!READ_ONCE(bc[b].returned),
				  "rcu_barrier() (called on CPU %d) returned while every CPU's "
				  "marker still had to wait behind a callback that was running "
				  "(queued %s): it waited for no marker at all (TODO 4: does it "
				  "queue one on every CPU, and then wait for the completion the "
				  "last one signals?)", bc[b].cpu, how);
		for (int b = 0; b < nbc; b++)
			cr_assert(!READ_ONCE(bc[b].returned),
				  "rcu_barrier() (called on CPU %d) returned while the callback "
				  "queued %s on CPU %d before it was still running: it did not wait "
				  "for a marker queued behind that callback (TODO 4: %s)",
				  bc[b].cpu, how, cpu, bc[b].cpu == cpu ?
				  "that is the barrier's own CPU: does it get a marker too? A "
				  "cross-call to the other CPUs leaves it out" :
				  "which CPUs get a marker, and when the count reaches zero");
		slow_cb_release(&slow[cpu]);
		sim_run_until_idle();
	}
	for (int b = 0; b < nbc; b++) {
		const char *polls = NULL;

		/* one caller asleep in msleep() holds the others at the mutex */
		for (int o = 0; o < nbc && !polls; o++)
			polls = barrier_caller_polls(&bc[o]);
		cr_assert(READ_ONCE(bc[b].returned),
			  "rcu_barrier() (called on CPU %d) never returned after every callback "
			  "had finished: %s (TODO 4)", bc[b].cpu, polls ? polls :
			  "does each CPU's marker callback decrement the count and the last one "
			  "complete()?");
		cr_assert(!bc[b].early,
			  "rcu_barrier() (called on CPU %d) returned before every callback "
			  "queued before it had been invoked", bc[b].cpu);
		barrier_caller_stop(&bc[b]);
	}
}

static void check_slow_started(const char *how)
{
	for (int cpu = 0; cpu < NCPU; cpu++) {
		cr_assert(READ_ONCE(slow[cpu].started),
			  "a callback queued %s on CPU %d was never invoked: call_rcu() must "
			  "queue on the current CPU, and that CPU's kthread invoke it after a "
			  "grace period (TODO 1-3); a queue the kthread took before must have "
			  "been left empty, its tail included (TODO 2)", how, cpu);
		cr_assert_eq(slow[cpu].cpu, cpu, "a callback queued %s on CPU %d ran on CPU %d",
			     how, cpu, slow[cpu].cpu);
	}
}

/* Every CPU's slow callback and the three behind it, fresh, not yet queued. */
static void init_queued_before(void)
{
	rec_cb_reset();
	for (int cpu = 0; cpu < NCPU; cpu++) {
		rec_cb_init(&first[cpu], cpu);
		slow_cb_init(&slow[cpu]);
		for (int i = 0; i < 3; i++)
			rec_cb_init(&after_slow[cpu][i], cpu);
	}
}

/*
 * From the test's task, on every CPU: first one callback, run to the end,
 * so that every queue has been taken and emptied once, as a queue in use
 * has; then the slow callback, and three behind it.
 */
static void queue_from_tasks(void)
{
	init_queued_before();
	for (int cpu = 0; cpu < NCPU; cpu++)
		sim_call_rcu_on(cpu, &first[cpu].rh, rec_cb_func);
	sim_run_until_idle();
	for (int cpu = 0; cpu < NCPU; cpu++)
		cr_assert_eq(READ_ONCE(first[cpu].times), 1, "a callback queued on CPU %d was "
			     "invoked %d times, not once (TODO 1-3)", cpu, first[cpu].times);
	for (int cpu = 0; cpu < NCPU; cpu++) {
		sim_call_rcu_on(cpu, &slow[cpu].rh, slow_cb_func);
		for (int i = 0; i < 3; i++)
			sim_call_rcu_on(cpu, &after_slow[cpu][i].rh, rec_cb_func);
	}
	sim_run_until_idle();
	check_slow_started("from a task");
}

/* One rcu_barrier() on @cpu while every slow callback blocks: it must wait
 * for all of them, and for the callbacks behind them. */
static void one_barrier_waits_for_all(int cpu, const char *how)
{
	static struct barrier_caller bc;

	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = all_done_at_return };
	barrier_caller_start(&bc, cpu);
	sim_run_until_idle();
	release_and_check(&bc, 1, how);
}

/* Every CPU has a blocked callback and three more behind it; the barrier waits for all. */
static void waits_for_every_cpu(void *arg)
{
	(void)arg;
	rcu_callbacks_init();
	queue_from_tasks();
	one_barrier_waits_for_all(0, "from a task");
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(barrier, waits_for_every_callback_on_every_cpu, waits_for_every_cpu)

/* The same, with every callback queued by an interrupt handler. */
static int irq_context_seen[NCPU];

static void queue_from_irq(void *data)
{
	int cpu = smp_processor_id();

	(void)data;
	irq_context_seen[cpu] = in_interrupt();
	call_rcu(&slow[cpu].rh, slow_cb_func);
	for (int i = 0; i < 3; i++)
		call_rcu(&after_slow[cpu][i].rh, rec_cb_func);
}

static void covers_irq_callbacks(void *arg)
{
	(void)arg;
	rcu_callbacks_init();
	init_queued_before();
	for (int cpu = 0; cpu < NCPU; cpu++) {
		irq_context_seen[cpu] = 0;
		raise_irq(cpu, queue_from_irq, NULL, "queue_cbs");
	}
	sim_run_until_idle();
	for (int cpu = 0; cpu < NCPU; cpu++)
		cr_assert(irq_context_seen[cpu], "the interrupt on CPU %d did not run", cpu);
	check_slow_started("from an interrupt");
	/* From the CPU released last: a barrier that forgets its own CPU shows. */
	one_barrier_waits_for_all(release_order[NCPU - 1], "from an interrupt");
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(barrier, covers_callbacks_queued_from_irq_on_every_cpu, covers_irq_callbacks)

/* Three callers on three CPUs at once, each with a callback of its own queued first. */
static struct rec_cb own[NCPU];

static void queue_own(struct barrier_caller *bc)
{
	rec_cb_init(&own[bc->cpu], bc->cpu);
	call_rcu(&own[bc->cpu].rh, rec_cb_func);
}

static void own_and_all_done(struct barrier_caller *bc)
{
	all_done_at_return(bc);
	if (READ_ONCE(own[bc->cpu].times) != 1)
		bc->early = 1;
}

static void concurrent_callers(void *arg)
{
	static struct barrier_caller bc[3];

	(void)arg;
	rcu_callbacks_init();
	queue_from_tasks();
	for (int b = 0; b < 3; b++) {
		bc[b] = (struct barrier_caller){ .do_barrier = rcu_barrier, .before = queue_own,
						 .at_return = own_and_all_done };
		barrier_caller_start(&bc[b], b);
	}
	sim_run_until_idle();
	release_and_check(bc, 3, "from a task");
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(barrier, concurrent_callers_all_return_none_early, concurrent_callers)

/* From an interrupt handler: a BUG, reported before anything sleeps. */
SIM_TEST(barrier, from_irq_context_is_a_bug, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	rcu_callbacks_init();
	sim_expect_student_bug("BUG_ON(in_interrupt())", true);
	sim_call_in_irq(1, rcu_barrier, "barrier_irq");
	cr_assert_fail("rcu_barrier() called from an interrupt handler returned without a "
		       "BUG: it sleeps, which an interrupt handler may not, and nothing at its "
		       "start checked the context (TODO 4, the article's line 3)");
}

/* Lab 3's barrier: one callback on its own CPU. With per-CPU queues it misses the others. */
static void slow2_running_at_return(struct barrier_caller *bc)
{
	bc->early = !READ_ONCE(slow[2].finished);
}

static void lab3_barrier_misses(void *arg)
{
	static struct barrier_caller naive, real;

	(void)arg;
	rcu_callbacks_init();
	slow_cb_init(&slow[2]);
	sim_call_rcu_on(2, &slow[2].rh, slow_cb_func);
	sim_run_until_idle();
	cr_assert(READ_ONCE(slow[2].started),
		  "a callback queued on CPU 2 was never invoked (TODO 1-3)");
	naive = (struct barrier_caller){ .do_barrier = lab3_one_callback_barrier,
					 .at_return = slow2_running_at_return };
	barrier_caller_start(&naive, 0);
	sim_run_until_idle();
	cr_assert(READ_ONCE(naive.returned) && naive.early,
		  "lab 3's one-callback barrier on CPU 0 should have returned while CPU 2's "
		  "earlier callback was still running (per-CPU queues are not one FIFO): is "
		  "call_rcu() queueing on the current CPU's own queue (TODO 1)?");
	barrier_caller_stop(&naive);
	real = (struct barrier_caller){ .do_barrier = rcu_barrier,
					.at_return = slow2_running_at_return };
	barrier_caller_start(&real, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(real.returned),
		  "rcu_barrier() on CPU 0 returned while CPU 2's earlier callback was still "
		  "running (TODO 4)");
	slow_cb_release(&slow[2]);
	sim_run_until_idle();
	cr_assert(READ_ONCE(real.returned) && !real.early,
		  "rcu_barrier() did not return once CPU 2's callback had finished%s%s (TODO 4)",
		  barrier_caller_polls(&real) ? ": " : "",
		  barrier_caller_polls(&real) ? barrier_caller_polls(&real) : "");
	barrier_caller_stop(&real);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(barrier, lab3_one_callback_barrier_no_longer_enough, lab3_barrier_misses)
