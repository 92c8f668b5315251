/*
 * hotplug.c - CPU hotplug: cpu_down(), cpu_up() and the hotplug states.
 *
 * Rule kept here: a CPU is marked offline only when nothing runs there and
 * no interrupt waits for it, under S.lock in the same step that checks it,
 * so that a cross-call is either refused (-ENXIO) or taken before the CPU
 * goes; from then on the scheduler gives it to nobody (sched.c) and nothing
 * raises an interrupt there (irq.c, timer.c). What the CPU owned is handed
 * on afterwards by the hotplug states' callbacks, in process context, on a
 * surviving CPU, one hotplug operation at a time (cpu_hotplug_lock).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include "internal.h"

/* One registered hotplug state (Linux's struct cpuhp_step, prepare section only). */
struct cpuhp_step {
	const char *name;
	int (*startup)(unsigned int cpu);
	int (*teardown)(unsigned int cpu);
	bool used;
};

static struct cpuhp_step cpuhp_steps[CPUHP_BRINGUP_CPU];
/* One hotplug operation (and registration change) at a time. */
static struct mutex cpu_hotplug_lock;
/* The task in cpu_down() waiting for its CPU to drain (S.lock). */
static struct task_struct *drain_waiter;

void hotplug_reset_locked(void)
{
	sim_assert_sched_held();
	memset(cpuhp_steps, 0, sizeof(cpuhp_steps));
	mutex_init(&cpu_hotplug_lock);
	cpu_hotplug_lock.name = "cpu_hotplug_lock";
	drain_waiter = NULL;
}

/* Every CPU back online, its parked tasks running: sim_halt() stops them. */
void hotplug_halt_locked(void)
{
	sim_assert_sched_held();
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct sim_cpu *c = cpu_of(cpu);

		atomic_store(&c->offline, false);
		c->parked = false;
		if (!c->curr)
			cpu_run_next_locked(c);
	}
}

void hotplug_cpu_released_locked(struct sim_cpu *c)
{
	sim_assert_sched_held();
	(void)c;
	if (drain_waiter)
		sched_wake_locked(drain_waiter);
}

bool cpu_online(unsigned int cpu)
{
	return cpu < (unsigned int)nr_cpu_ids && !atomic_load(&cpu_of((int)cpu)->offline);
}

unsigned int num_online_cpus(void)
{
	unsigned int n = 0;
	int cpu;

	for_each_online_cpu(cpu)
		n++;
	return n;
}

/* ---- hotplug states ------------------------------------------------------ */

static void cpuhp_check_state(enum cpuhp_state state, const char *what)
{
	if (state <= CPUHP_OFFLINE || state >= CPUHP_BRINGUP_CPU)
		sim_bug(__FILE__, __LINE__, "%s(%d): only the prepare states (CPUHP_RCUTREE_PREP "
			".. CPUHP_BP_PREPARE_DYN_END) are simulated", what, (int)state);
}

/*
 * A free dynamic state. "Locked" here means cpu_hotplug_lock, a mutex, not
 * S.lock: asserting S.lock passed only in deterministic mode, where the
 * token counts as holding it, and stopped every parallel run here.
 */
static int cpuhp_dyn_state_locked(void)
{
	BUG_ON(!mutex_is_locked(&cpu_hotplug_lock));
	for (int s = CPUHP_BP_PREPARE_DYN; s < CPUHP_BP_PREPARE_DYN_END; s++)
		if (!cpuhp_steps[s].used)
			return s;
	sim_bug(__FILE__, __LINE__, "cpuhp_setup_state_nocalls(): no dynamic state left");
	return CPUHP_INVALID;
}

int cpuhp_setup_state_nocalls(enum cpuhp_state state, const char *name,
			      int (*startup)(unsigned int cpu),
			      int (*teardown)(unsigned int cpu))
{
	int s = (int)state, ret = 0;

	might_sleep();
	cpuhp_check_state(state, "cpuhp_setup_state_nocalls");
	mutex_lock(&cpu_hotplug_lock);
	if (state == CPUHP_BP_PREPARE_DYN)
		s = ret = cpuhp_dyn_state_locked();
	else if (cpuhp_steps[s].used)
		sim_bug(__FILE__, __LINE__, "cpuhp_setup_state_nocalls(%d, \"%s\"): taken by "
			"\"%s\"", s, name, cpuhp_steps[s].name);
	cpuhp_steps[s] = (struct cpuhp_step){ name, startup, teardown, true };
	mutex_unlock(&cpu_hotplug_lock);
	return ret;
}

void cpuhp_remove_state_nocalls(enum cpuhp_state state)
{
	might_sleep();
	cpuhp_check_state(state, "cpuhp_remove_state_nocalls");
	mutex_lock(&cpu_hotplug_lock);
	if (!cpuhp_steps[state].used)
		sim_bug(__FILE__, __LINE__, "cpuhp_remove_state_nocalls(%d): not registered",
			(int)state);
	cpuhp_steps[state].used = false;
	mutex_unlock(&cpu_hotplug_lock);
}

/* Linux warns when a callback fails; the operation goes on. */
static void cpuhp_call(int (*fn)(unsigned int), unsigned int cpu, const struct cpuhp_step *st,
		       const char *what)
{
	int ret = fn(cpu);

	if (ret)
		sim_warn(__FILE__, __LINE__, "cpuhp: %s callback of \"%s\" for CPU %u failed: %d",
			 what, st->name, cpu, ret);
}

/* Startup callbacks, first state first; teardown ones, last state first. */
static void cpuhp_run(unsigned int cpu, bool up)
{
	for (int i = 0; i < CPUHP_BRINGUP_CPU; i++) {
		int s = up ? i : CPUHP_BRINGUP_CPU - 1 - i;
		struct cpuhp_step st = cpuhp_steps[s];

		if (st.used && up && st.startup)
			cpuhp_call(st.startup, cpu, &st, "startup");
		else if (st.used && !up && st.teardown)
			cpuhp_call(st.teardown, cpu, &st, "teardown");
	}
}

/* ---- taking a CPU down and bringing it up -------------------------------- */

static void check_cpu(unsigned int cpu, const char *what)
{
	if (!S.booted || cpu >= (unsigned int)nr_cpu_ids)
		sim_bug(__FILE__, __LINE__, "%s(%u): no such CPU", what, cpu);
	if (!current)
		sim_bug(__FILE__, __LINE__, "%s(%u) from a thread that is not a task", what, cpu);
}

/* The CPU the hotplug callbacks run on: the caller's, else the first other online one. */
static int control_cpu(unsigned int cpu)
{
	int mine = task_cpu(current), c;

	if (mine >= 0 && mine != (int)cpu)
		return mine;
	for_each_online_cpu(c)
		if (c != (int)cpu)
			return c;
	return -1;
}

/* A mark on the timeline, in that CPU's own lane (the trace copies the name). */
static void hotplug_mark(int cpu, const char *what)
{
	char name[32];

	snprintf(name, sizeof(name), "CPU %d %s", cpu, what);
	trace_emit(cpu, NULL, TR_MARK, name, cpu);
}

/* Bind the current task to @cpu (or to no CPU, -1), unless it is there already. */
static void move_to(int cpu)
{
	if (task_cpu(current) != cpu || current_task()->home != cpu)
		migrate_to_cpu(cpu);
}

/*
 * Park @cpu, then sleep until its holder has let it go and its pending
 * interrupts have been taken; then mark it offline (cross-calls refused)
 * and give its timers to @control, all in one step under S.lock.
 */
static void cpu_park_drain_offline(int cpu, int control)
{
	struct task_struct *t = current;
	struct sim_cpu *c = cpu_of(cpu);

	SIM_LOCK();
	if (c->irq_held && c->irq_len)
		sim_bug_locked(__FILE__, __LINE__, "cpu_down(%d) while the CPU's interrupts are "
			       "held (sim_hold_irqs()): they could never be taken", cpu);
	c->parked = true;
	while (c->curr || c->irq_len) {
		if (!c->curr && irq_deliverable_locked(c))
			sched_wake_locked(c->idle);
		drain_waiter = t;
		sched_block_locked(t, "cpu_down(): the CPU to go idle", false);
		drain_waiter = NULL;
	}
	atomic_store(&c->offline, true);
	timers_migrate_locked(cpu, control);
	hotplug_mark(cpu, "offline");
	sched_note_progress_locked();
	SIM_UNLOCK();
}

/* cpu_down()'s steps, from the control CPU: offline, the dead point, the teardowns. */
static void cpu_take_down(int cpu, int control)
{
	cpu_park_drain_offline(cpu, control);
	/* Off every CPU: a held test may keep it here as long as it likes. */
	move_to(-1);
	sim_point(CPUHP_DEAD_POINT);
	move_to(control);
	cpuhp_run((unsigned int)cpu, false);
}

/* cpu_up()'s steps, from the control CPU: the startups, then online, its parked tasks run. */
static void cpu_bring_up(int cpu)
{
	struct sim_cpu *c = cpu_of(cpu);

	cpuhp_run((unsigned int)cpu, true);
	SIM_LOCK();
	atomic_store(&c->offline, false);
	c->parked = false;
	hotplug_mark(cpu, "online");
	cpu_run_next_locked(c);
	sched_note_progress_locked();
	SIM_UNLOCK();
}

/* Bound back to @home afterwards, or to @control if @home is gone. */
static void cpuhp_return_home(int home, int control)
{
	if (home >= 0 && !cpu_online((unsigned int)home))
		home = control;
	move_to(home);
}

static int current_home(void)
{
	struct task_struct *t = current;

	return t ? t->home : -1;
}

/*
 * One hotplug operation, @up or down: under cpu_hotplug_lock, on the control
 * CPU, and back where the caller was bound afterwards. -EINVAL when @cpu is
 * already in the state asked for; -EBUSY when no other CPU is online.
 */
static int cpuhp_do(unsigned int cpu, bool up)
{
	int home = current_home(), control, ret = 0;

	might_sleep();
	check_cpu(cpu, up ? "cpu_up" : "cpu_down");
	mutex_lock(&cpu_hotplug_lock);
	control = control_cpu(cpu);
	if (cpu_online(cpu) == up)
		ret = -EINVAL;
	else if (control < 0)
		ret = -EBUSY;
	if (!ret) {
		move_to(control);
		if (up)
			cpu_bring_up((int)cpu);
		else
			cpu_take_down((int)cpu, control);
		cpuhp_return_home(home, control);
	}
	mutex_unlock(&cpu_hotplug_lock);
	return ret;
}

int cpu_down(unsigned int cpu)
{
	return cpuhp_do(cpu, false);
}

int cpu_up(unsigned int cpu)
{
	return cpuhp_do(cpu, true);
}
