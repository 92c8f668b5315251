/*
 * irq.c - simulated interrupts and cross-CPU calls.
 *
 * Rule kept here: an interrupt is taken only by the thread that holds its
 * CPU, at a scheduling point or an interrupt-enabling call, with interrupts
 * enabled and no interrupt already running there; it is taken in the order
 * raised, and only those pending when the window opened are taken in it, so
 * a handler that raises another cannot starve the task it interrupted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/smp.h>
#include <linux/interrupt.h>
#include "internal.h"

bool irq_deliverable_locked(struct sim_cpu *c)
{
	sim_assert_sched_held();
	return c->irq_len > 0 && !c->irq_held && !c->irqs_off && c->hardirq == 0;
}

void raise_irq_locked(int cpu, irq_handler_t fn, void *data, const char *name)
{
	struct sim_cpu *c = cpu_of(cpu);

	sim_assert_sched_held();
	if (c->irq_len == c->irq_cap) {
		int cap = c->irq_cap ? 2 * c->irq_cap : 16;
		struct sim_irq *n = malloc(sizeof(*n) * (size_t)cap);

		if (!n)
			sim_bug_locked(__FILE__, __LINE__, "out of memory raising an IRQ");
		for (int i = 0; i < c->irq_len; i++)
			n[i] = c->irqs[(c->irq_head + i) % c->irq_cap];
		free(c->irqs);
		c->irqs = n;
		c->irq_head = 0;
		c->irq_cap = cap;
	}
	c->irqs[(c->irq_head + c->irq_len) % c->irq_cap] =
		(struct sim_irq){ fn, data, name };
	c->irq_len++;
	atomic_store(&c->nr_irqs, c->irq_len);
	sched_note_progress_locked();
	if (!c->curr && irq_deliverable_locked(c))
		sched_wake_locked(c->idle);
}

void raise_irq(int cpu, irq_handler_t handler, void *data, const char *name)
{
	if (!S.booted || cpu < 0 || cpu >= nr_cpu_ids)
		sim_bug(__FILE__, __LINE__, "raise_irq(%d): no such CPU", cpu);
	if (!cpu_online((unsigned int)cpu))
		sim_bug(__FILE__, __LINE__, "raise_irq(%d): CPU %d is offline: it takes no "
			"interrupt", cpu, cpu);
	kcsan_fence(); /* sending an interrupt orders the sender's stores before it */
	SIM_LOCK();
	raise_irq_locked(cpu, handler, data, name ? name : "irq");
	SIM_UNLOCK();
	sim_sched_point(__FILE__, __LINE__);
}

void deliver_irqs(struct task_struct *t)
{
	SIM_LOCK();
	if (t->cpu < 0) {
		SIM_UNLOCK();
		return;
	}
	struct sim_cpu *c = cpu_of(t->cpu);

	views_sync(c->id);    /* a handler sees what its sender made visible */
	for (int n = c->irq_len; n > 0 && irq_deliverable_locked(c); n--) {
		struct sim_irq irq = c->irqs[c->irq_head];

		c->irq_head = (c->irq_head + 1) % c->irq_cap;
		c->irq_len--;
		atomic_store(&c->nr_irqs, c->irq_len);
		c->hardirq++;
		c->irqs_off = true;
		sched_note_progress_locked();
		SIM_UNLOCK();
		trace_emit(c->id, t, TR_IRQ_ENTER, irq.name, 0);
		irq.fn(irq.data);
		trace_emit(c->id, t, TR_IRQ_EXIT, irq.name, 0);
		SIM_LOCK();
		c->hardirq--;
		c->irqs_off = false;
	}
	SIM_UNLOCK();
}

static struct sim_cpu *this_cpu_or_bug(const char *what)
{
	struct task_struct *t = sim_current;

	if (!t || t->cpu < 0)
		sim_bug(__FILE__, __LINE__, "%s by task %s, which holds no CPU "
			"(call migrate_to_cpu() first)", what, task_comm(t));
	return cpu_of(t->cpu);
}

bool in_irq(void)
{
	struct task_struct *t = sim_current;

	return t && t->cpu >= 0 && cpu_of(t->cpu)->hardirq > 0;
}

bool in_interrupt(void)
{
	return in_irq();
}

bool irqs_disabled(void)
{
	struct task_struct *t = sim_current;

	return t && t->cpu >= 0 && cpu_of(t->cpu)->irqs_off;
}

void local_irq_disable(void)
{
	this_cpu_or_bug("local_irq_disable()")->irqs_off = true;
}

void local_irq_enable(void)
{
	struct sim_cpu *c = this_cpu_or_bug("local_irq_enable()");

	c->irqs_off = false;
	if (c->hardirq == 0 && atomic_load(&c->nr_irqs))
		deliver_irqs(sim_current);
}

unsigned long sim_local_irq_save(void)
{
	struct sim_cpu *c = this_cpu_or_bug("local_irq_save()");
	unsigned long was_off = c->irqs_off;

	c->irqs_off = true;
	return was_off;
}

void local_irq_restore(unsigned long flags)
{
	if (flags)
		this_cpu_or_bug("local_irq_restore()")->irqs_off = true;
	else
		local_irq_enable();
}

void sim_hold_irqs(int cpu)
{
	SIM_LOCK();
	cpu_of(cpu)->irq_held = true;
	SIM_UNLOCK();
}

void sim_release_irqs(int cpu)
{
	SIM_LOCK();
	struct sim_cpu *c = cpu_of(cpu);

	c->irq_held = false;
	sched_note_progress_locked();
	if (!c->curr && irq_deliverable_locked(c))
		sched_wake_locked(c->idle);
	SIM_UNLOCK();
	sim_sched_point(__FILE__, __LINE__);
}

int sim_irqs_pending(int cpu)
{
	return atomic_load(&cpu_of(cpu)->nr_irqs);
}

/* ---- cross-CPU calls --------------------------------------------------- */

struct call_data {
	smp_call_func_t func;
	void *info;
	int pending;               /* targets that have not finished */
	int refs;                  /* holders: targets not yet done, and a waiting caller */
	struct task_struct *sleeper; /* caller asleep until pending == 0 */
};

static void call_put_locked(struct call_data *cd)
{
	sim_assert_sched_held();
	if (--cd->refs == 0)
		free(cd);
}

static void ipi_handler(void *p)
{
	struct call_data *cd = p;

	cd->func(cd->info);
	kcsan_fence();   /* done is a release: the caller sees what @func stored */
	SIM_LOCK();
	if (--cd->pending == 0 && cd->sleeper)
		sched_wake_locked(cd->sleeper);
	call_put_locked(cd);
	SIM_UNLOCK();
}

static int call_pending(struct call_data *cd)
{
	return SIM_LOCKED(int, cd->pending);
}

static void call_wait(struct call_data *cd)
{
	if (!S.cfg.ipi_wait_sleeps) {
		/* The kernel's way: spin, CPU held, preemption off, IRQs on. */
		while (call_pending(cd))
			cpu_relax();
		views_sync(sim_current->cpu);   /* an acquire: what the handlers stored */
		return;
	}
	/* The sleeping variant: this CPU passes a quiescent state meanwhile. */
	int saved = sim_current->preempt;

	sim_current->preempt = 0;
	SIM_LOCK();
	while (cd->pending) {
		cd->sleeper = sim_current;
		sched_block_locked(sim_current, "on_each_cpu() wait", false);
	}
	cd->sleeper = NULL;
	SIM_UNLOCK();
	sim_current->preempt = saved;
	views_sync(sim_current->cpu);
}

/* -ENXIO when the one target is offline; cross-calls skip offline CPUs. */
static int smp_call(int target, smp_call_func_t func, void *info, int wait,
		    const char *caller)
{
	struct sim_cpu *me = this_cpu_or_bug(caller);
	unsigned long flags;

	if (me->hardirq || me->irqs_off)
		sim_bug(__FILE__, __LINE__, "%s with interrupts disabled or from IRQ "
			"context: two CPUs doing so would deadlock", caller);
	/* A test may stop the caller here, before it looks whether the target is online. */
	sim_point_quiet(SMP_CALL_SEND_POINT, __FILE__, __LINE__);
	preempt_disable();
	struct call_data *cd = calloc(1, sizeof(*cd));

	if (!cd)
		sim_bug(__FILE__, __LINE__, "out of memory in %s", caller);
	cd->func = func;
	cd->info = info;
	kcsan_fence(); /* sending an interrupt orders the sender's stores before it */
	SIM_LOCK();
	if (target >= 0 && target != me->id && atomic_load(&cpu_of(target)->offline)) {
		/* Linux's generic_exec_single(): no call to an offline CPU. */
		SIM_UNLOCK();
		free(cd);
		preempt_enable();
		return -ENXIO;
	}
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (cpu == me->id || (target >= 0 && cpu != target) ||
		    atomic_load(&cpu_of(cpu)->offline))
			continue;
		cd->pending++;
		cd->refs++;
		trace_emit(me->id, sim_current, TR_IPI_SEND, "IPI", cpu);
		raise_irq_locked(cpu, ipi_handler, cd, "IPI");
	}
	cd->refs++; /* the caller's */
	SIM_UNLOCK();
	if (target < 0 || target == me->id) {
		local_irq_save(flags);
		func(info);
		local_irq_restore(flags);
	}
	if (wait)
		call_wait(cd);
	SIM_LOCK();
	call_put_locked(cd);
	SIM_UNLOCK();
	preempt_enable();
	/* A test may stop the caller here, as if preempted the moment the call returned. */
	sim_point_at(SMP_CALL_RETURN_POINT, __FILE__, __LINE__);
	return 0;
}

void on_each_cpu(smp_call_func_t func, void *info, int wait)
{
	smp_call(-1, func, info, wait, "on_each_cpu()");
}

int smp_call_function_single(int cpu, smp_call_func_t func, void *info, int wait)
{
	if (cpu < 0 || cpu >= nr_cpu_ids)
		sim_bug(__FILE__, __LINE__, "smp_call_function_single(%d): no such CPU", cpu);
	return smp_call(cpu, func, info, wait, "smp_call_function_single()");
}

void sim_set_ipi_wait_sleeps(bool sleeps)
{
	SIM_LOCK();
	S.cfg.ipi_wait_sleeps = sleeps;
	SIM_UNLOCK();
}
