/* Interrupts and cross-CPU calls: where they run, when they are held off. */
#include <linux/kthread.h>
#include <linux/interrupt.h>
#include <linux/smp.h>
#include <linux/atomic.h>
#include <sim/test.h>

struct irq_seen {
	int cpu;
	bool in_irq;
	int count;
};

static void note_irq(void *arg)
{
	struct irq_seen *s = arg;

	s->cpu = smp_processor_id();
	s->in_irq = in_interrupt();
	s->count++;
}

SIM_TEST(irq, runs_on_its_cpu_in_irq_context)
{
	struct irq_seen s = { -1, false, 0 };

	sim_boot(NULL);
	raise_irq(3, note_irq, &s, "note");
	sim_run_until_idle();
	cr_assert_eq(s.count, 1, "the IRQ raised on idle CPU 3 must run once");
	cr_assert_eq(s.cpu, 3);
	cr_assert(s.in_irq, "a handler runs with in_interrupt() true");
	cr_assert(!in_interrupt(), "the test's task is not in IRQ context");
}

SIM_TEST(irq, held_off_while_disabled_then_delivered)
{
	struct irq_seen s = { -1, false, 0 };
	unsigned long flags;

	sim_boot(NULL);
	migrate_to_cpu(1);
	local_irq_save(flags);
	raise_irq(1, note_irq, &s, "note");
	for (int i = 0; i < 5; i++)
		sim_sched_point(__FILE__, __LINE__);
	cr_assert_eq(s.count, 0, "an IRQ ran on CPU 1 while its task held interrupts off");
	local_irq_restore(flags);
	cr_assert_eq(s.count, 1, "a pending IRQ must run as soon as interrupts are re-enabled");
	migrate_to_cpu(-1);
}

SIM_TEST(irq, held_by_test_until_released)
{
	struct irq_seen s = { -1, false, 0 };

	sim_boot(NULL);
	sim_hold_irqs(2);
	raise_irq(2, note_irq, &s, "note");
	sim_run_until_idle();
	cr_assert_eq(s.count, 0, "a held CPU must not take its IRQs");
	cr_assert_eq(sim_irqs_pending(2), 1);
	sim_release_irqs(2);
	sim_run_until_idle();
	cr_assert_eq(s.count, 1);
	cr_assert_eq(sim_irqs_pending(2), 0);
}

/* A task that spins on a flag while an IRQ on its own CPU sets it: the IRQ
 * must interrupt the spin at a scheduling point, never run beside it. */
static int flag_set_by_irq;

static void set_flag(void *arg)
{
	(void)arg;
	WRITE_ONCE(flag_set_by_irq, 1);
}

static int spin_for_flag(void *arg)
{
	(void)arg;
	raise_irq(smp_processor_id(), set_flag, NULL, "set_flag");
	while (!READ_ONCE(flag_set_by_irq))
		cpu_relax();
	return 0;
}

SIM_TEST(irq, interrupts_a_spinning_task)
{
	sim_boot(NULL);
	flag_set_by_irq = 0;
	kthread_stop(kthread_run_on_cpu(spin_for_flag, NULL, 1, "spinner"));
	cr_assert(flag_set_by_irq);
}

/* ---- cross-CPU calls ---- */

static atomic_t ran_mask;

static void mark_cpu(void *arg)
{
	(void)arg;
	atomic_add(1 << smp_processor_id(), &ran_mask);
}

static int call_all(void *arg)
{
	int *returned = arg;

	on_each_cpu(mark_cpu, NULL, 1);
	*returned = 1;
	return 0;
}

SIM_TEST(smp, on_each_cpu_runs_everywhere)
{
	int returned = 0;

	sim_boot(NULL);
	atomic_set(&ran_mask, 0);
	kthread_stop(kthread_run_on_cpu(call_all, &returned, 0, "caller"));
	cr_assert_eq(atomic_read(&ran_mask), 0xf, "func must run on all 4 CPUs (mask %#x)",
		     atomic_read(&ran_mask));
}

//! [hold-cross-call]
SIM_TEST(smp, held_cpu_holds_up_waiting_caller)
{
	struct sim_config cfg = sim_default_config();
	int returned = 0;

	cfg.mode = SIM_DETERMINISTIC;	/* run_until_idle() beside a spinning caller */
	sim_boot(&cfg);
	atomic_set(&ran_mask, 0);
	sim_hold_irqs(2);                       /* CPU 2 will not take the cross-call */
	struct task_struct *k = kthread_run_on_cpu(call_all, &returned, 0, "caller");

	sim_run_until_idle();                   /* the caller now spins on CPU 0 */
	cr_assert_eq(atomic_read(&ran_mask), 0xb, "all CPUs but the held CPU 2 ran func");
	cr_assert(!returned, "on_each_cpu(wait=1) returned before CPU 2 ran func");
	cr_assert(!idle_cpu(0), "the waiting caller keeps its CPU (it spins)");
	sim_release_irqs(2);
	sim_run_until_idle();
	cr_assert(returned);
	cr_assert_eq(atomic_read(&ran_mask), 0xf);
	kthread_stop(k);
}
//! [hold-cross-call]

static unsigned long qs_before;

SIM_TEST(smp, sleeping_wait_passes_quiescent_state)
{
	int returned = 0;

	sim_boot(NULL);
	sim_set_ipi_wait_sleeps(true);
	atomic_set(&ran_mask, 0);
	sim_hold_irqs(2);
	qs_before = cpu_quiescent_count(0);
	struct task_struct *k = kthread_run_on_cpu(call_all, &returned, 0, "caller");

	sim_run_until_idle();
	cr_assert(!returned);
	cr_assert(idle_cpu(0), "with the sleeping wait, the caller gives CPU 0 up");
	cr_assert_gt(cpu_quiescent_count(0), qs_before);
	sim_release_irqs(2);
	sim_run_until_idle();
	cr_assert(returned);
	kthread_stop(k);
}

static int call_without_wait(void *arg)
{
	(void)arg;
	on_each_cpu(mark_cpu, NULL, 0);
	return 0;
}

SIM_TEST(smp, no_wait_returns_at_once)
{
	sim_boot(NULL);
	atomic_set(&ran_mask, 0);
	sim_hold_irqs(1);
	kthread_stop(kthread_run_on_cpu(call_without_wait, NULL, 0, "caller"));
	cr_assert_eq(atomic_read(&ran_mask) & 2, 0);
	sim_release_irqs(1);
	sim_run_until_idle();
	cr_assert_eq(atomic_read(&ran_mask), 0xf);
}

static void irq_calls_on_each_cpu(void *arg)
{
	(void)arg;
	on_each_cpu(mark_cpu, NULL, 1);
}

SIM_TEST(smp, from_irq_context_is_a_bug, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("IRQ context");
	raise_irq(1, irq_calls_on_each_cpu, NULL, "bad");
	sim_run_until_idle();
}

/* ---- per-CPU variables ---- */

static DEFINE_PER_CPU(int, hits);

static void bump(void *arg)
{
	(void)arg;
	(*this_cpu_ptr(&hits))++;
}

static int call_bump(void *arg)
{
	(void)arg;
	on_each_cpu(bump, NULL, 1);
	on_each_cpu(bump, NULL, 1);
	return 0;
}

SIM_TEST(percpu, each_cpu_has_its_own_instance)
{
	int cpu;

	sim_boot(NULL);
	for_each_possible_cpu(cpu)
		per_cpu(hits, cpu) = cpu * 10;
	kthread_stop(kthread_run_on_cpu(call_bump, NULL, 1, "caller"));
	for_each_online_cpu(cpu)
		cr_assert_eq(per_cpu(hits, cpu), cpu * 10 + 2, "CPU %d's instance", cpu);
	cr_assert_eq(*per_cpu_ptr(&hits, 3), 32);
}
