/*
 * Lab 2's interrupt tests: call_rcu() from IRQ context, and interrupts
 * inside call_rcu()'s own critical section.
 *
 * Rule kept here (every lab 2 test file): every schedule that matters is
 * forced (held points, held CPUs, a task that keeps its CPU), so each failure
 * shows on every seed; the seed sweep only adds interleavings on top. CPU 0
 * belongs to rcuo/0: tests put readers, updaters and interrupts on CPUs 1-3.
 * Nothing is timed: callback passes are counted at the named point
 * "rcu_cb_pass".
 */
#include <string.h>
#include <linux/compiler.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <sim/test.h>
#include <sim/testlib.h>
#include "rculist.h"
#include "lab2.h"

/* ---- interrupts ---------------------------------------------------------- */

static int irq_ran, irq_was_in_interrupt, irq_cpu;

/* The article's IRQ-context deletion: list_del_rcu(p); call_rcu(&p->rcu, ...). */
static void delete_in_irq(void *data)
{
	struct foo *p = data;

	irq_was_in_interrupt = in_interrupt();
	irq_cpu = smp_processor_id();
	WRITE_ONCE(gp, NULL);
	call_rcu(&p->rcu, foo_reclaim);
	irq_ran++;
}

static void scenario_call_rcu_in_irq(void *arg)
{
	struct task_struct *r;
	struct foo *p;

	(void)arg;
	scenario_start();
	irq_ran = irq_was_in_interrupt = 0;
	irq_cpu = -1;
	p = foo_new(7);
	r = reader_inside_on(3, p);
	raise_irq(2, delete_in_irq, p, "delete_irq");
	sim_run_until_idle();
	cr_assert_eq(irq_ran, 1, "seed %llu: the IRQ handler on CPU 2 did not return "
		     "(ran %d times)", seed(), irq_ran);
	cr_assert(irq_was_in_interrupt && irq_cpu == 2,
		  "seed %llu: test setup: the handler should run on CPU 2 in IRQ "
		  "context", seed());
	cr_assert_eq(nr_reclaimed, 0,
		     "seed %llu: the callback queued from IRQ context ran while an "
		     "older reader (CPU 3) was still inside", seed());

	reader_leaves(r, "the callback queued by call_rcu() in an IRQ handler");
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(irq, call_rcu_from_irq_on_another_cpu, scenario_call_rcu_in_irq,
	       .description = "call_rcu() from an IRQ handler on CPU 2 works and waits "
			      "for a reader on CPU 3")

SIM_TEST(irq, synchronize_rcu_in_irq_is_a_bug, .signal = BUG_SIGNAL,
	 .description = "call_rcu() works in an IRQ handler; synchronize_rcu() there "
			"is reported as sleeping in invalid context")
{
	sim_boot(NULL);
	scenario_start();
	raise_irq(2, delete_in_irq, foo_new(3), "delete_irq");
	sim_run_until_idle();
	cr_assert(irq_ran == 1 && nr_reclaimed == 1,
		  "call_rcu() from an IRQ handler must work first (handler ran %d "
		  "times, callback invoked %d times, expected 1 and 1): it is the way "
		  "to free from IRQ context, since synchronize_rcu() sleeps",
		  irq_ran, nr_reclaimed);
	sim_expect_bug("sleeping function called from invalid context");
	sim_call_in_irq(2, synchronize_rcu, "sync_irq");   /* it sleeps: a BUG there */
	cr_assert_fail("synchronize_rcu() in an IRQ handler was not reported as a bug");
}

/*
 * An interrupt storm on CPU 1 while CPU 1's own task calls call_rcu(): the
 * handler calls call_rcu() and raises itself again while storm_on is set, so
 * an interrupt is pending at every scheduling point of the task's call_rcu(),
 * the one just before spin_unlock() releases the lock included.
 */
static int storm_on, storm_calls, storm_not_in_irq;

static void storm_irq(void *data)
{
	struct foo *p = foo_new(-1);

	(void)data;
	if (!in_interrupt())
		storm_not_in_irq++;
	call_rcu(&p->rcu, foo_reclaim);
	storm_calls++;
	if (READ_ONCE(storm_on))
		raise_irq(1, storm_irq, NULL, "storm");
}

#define STORM_CALLS 50

static void scenario_storm(void *arg)
{
	(void)arg;
	scenario_start();
	storm_on = storm_calls = storm_not_in_irq = 0;
	migrate_to_cpu(1);
	WRITE_ONCE(storm_on, 1);
	raise_irq(1, storm_irq, NULL, "storm");
	for (int i = 0; i < STORM_CALLS; i++) {
		struct foo *p = foo_new(i);

		call_rcu(&p->rcu, foo_reclaim);
	}
	WRITE_ONCE(storm_on, 0);
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(storm_not_in_irq, 0, "seed %llu: test setup: the storm ran outside "
		     "IRQ context", seed());
	cr_assert_geq(storm_calls, STORM_CALLS,
		      "seed %llu: test setup: only %d interrupts landed during %d "
		      "call_rcu() calls", seed(), storm_calls, STORM_CALLS);
	cr_assert_eq(nr_reclaimed, STORM_CALLS + storm_calls,
		     "seed %llu: %d callbacks queued (%d by the task, %d by interrupts), "
		     "%d invoked: the queue lost or duplicated callbacks when an "
		     "interrupt called call_rcu() inside another call_rcu()", seed(),
		     STORM_CALLS + storm_calls, STORM_CALLS, storm_calls, nr_reclaimed);
	cr_assert_eq(bad_container, 0, "seed %llu: a callback got a corrupted rcu_head",
		     seed());
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(irq, irq_inside_call_rcu_critical_section, scenario_storm,
	       .description = "an IRQ that calls call_rcu() on the CPU whose task is inside "
			      "call_rcu()'s critical section neither deadlocks nor loses a "
			      "callback")


/* ---- irq/call_rcu_keeps_interrupts_off ----------------------------------- */

struct irqs_off_caller {
	struct foo *p;
	int off_after;  /* irqs_disabled() right after call_rcu() returned */
	int done;
};

/* A task that calls call_rcu() with interrupts off, as a spin_lock_irqsave() holder does. */
static int call_rcu_irqs_off(void *arg)
{
	struct irqs_off_caller *c = arg;
	unsigned long flags;

	local_irq_save(flags);
	call_rcu(&c->p->rcu, foo_reclaim);
	c->off_after = irqs_disabled();
	local_irq_restore(flags);
	WRITE_ONCE(c->done, 1);
	return 0;
}

SIM_TEST(irq, call_rcu_keeps_interrupts_off,
	 .description = "call_rcu() called with interrupts off returns with them still off")
{
	struct irqs_off_caller c = { 0 };

	sim_boot(NULL);
	scenario_start();
	c.p = foo_new(1);
	kthread_stop(kthread_run_on_cpu(call_rcu_irqs_off, &c, 2, "irqs-off"));
	sim_run_until_idle();
	cr_assert(READ_ONCE(c.done), "the caller did not finish");
	cr_assert(c.off_after,
		  "call_rcu() was called with interrupts off (from an IRQ handler or under "
		  "spin_lock_irqsave()) and returned with them on: the way call_rcu() takes "
		  "and releases rcu_cb_lock does not restore the caller's state (TODO 3)");
	cr_assert_eq(nr_reclaimed, 1, "the callback was invoked %d times, not once",
		     nr_reclaimed);
	rcu_callbacks_exit();
}


/* ---- irq/irq_at_every_access_on_every_cpu -------------------------------- */

/*
 * On each CPU in turn (CPU 0 included: rcuo/0 runs there and takes
 * rcu_cb_lock), a task queues one callback while an interrupt that queues
 * another is raised before that CPU's k-th student access, for k = 1, 2, ...
 * until it no longer comes: inside call_rcu(), inside the kthread's lock
 * sections, inside synchronize_rcu(). Both callbacks must run, once each.
 */
struct sweep_run {
	struct foo *task_p, *irq_p;
	int irq_ran;
};

static void sweep_irq(void *arg)
{
	struct sweep_run *s = arg;

	s->irq_ran = 1;
	call_rcu(&s->irq_p->rcu, foo_reclaim);
}

static int sweep_task(void *arg)
{
	struct sweep_run *s = arg;

	call_rcu(&s->task_p->rcu, foo_reclaim);
	return 0;
}

/* False once the interrupt no longer comes. */
static bool irq_at_access_on(int cpu, long k)
{
	struct sweep_run s = { 0 };

	sim_boot(NULL);
	scenario_start();
	s.task_p = foo_new(1);
	s.irq_p = foo_new(2);
	sim_irq_at_access(cpu, k, sweep_irq, &s, "call_rcu_irq");
	kthread_stop(kthread_run_on_cpu(sweep_task, &s, cpu, "poster"));
	sim_run_until_idle();
	if (!s.irq_ran) {
		rcu_callbacks_exit();
		kfree(s.irq_p);      /* never queued */
		cr_assert_eq(nr_reclaimed, 1, "CPU %d: the task's callback ran %d times, "
			     "not once", cpu, nr_reclaimed);
		sim_halt();
		return false;
	}
	cr_assert_eq(nr_reclaimed, 2,
		     "an interrupt on CPU %d before that CPU's student access %ld called "
		     "call_rcu() while a task there queued a callback too: %d of the 2 "
		     "callbacks ran: the interrupt came inside a section of rcu_cb_lock, or of "
		     "the queue, that interrupts could still enter (call_rcu(), TODO 3; the "
		     "kthread's helpers, TODOs 4, 5), or a list helper left a tail pointing "
		     "into another list (TODOs 1, 2)", cpu, k, nr_reclaimed);
	rcu_callbacks_exit();
	cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
	return true;
}

SIM_TEST(irq, irq_at_every_access_on_every_cpu, .timeout = 120,
	 .description = "an interrupt that calls call_rcu() at any access of any CPU, "
			"the lock holder's included, loses and deadlocks nothing")
{
	for (int cpu = 0; cpu < 4; cpu++)
		for (long k = 1; k < 5000 && irq_at_access_on(cpu, k); k++)
			;
}
