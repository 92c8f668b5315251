/*
 * timer.c - virtual time, timers, and the sleeps built on them
 * (schedule_timeout(), msleep()).
 *
 * Rule kept here: jiffies move only under S.lock, by the test's hand or by
 * the scheduler when nothing else can run; a timer's function runs in IRQ
 * context on the timer's CPU, through that CPU's "timer" interrupt, which
 * looks the timer up on the armed list, never through a stale pointer. A
 * sleep is a timer that wakes its task: it never returns early unless
 * wake_up_process() ends it, and it always disarms its timer before return.
 */
#include <string.h>
#include <linux/timer.h>
#include <linux/sched.h>
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include "internal.h"

unsigned long sim_jiffies(void)
{
	return SIM_LOCKED(unsigned long, S.now_jiffies);
}

static void (*tick_hook)(int cpu);
/* The timer whose function each CPU's timer interrupt is running now. */
static struct timer_list *running_timer[NR_CPUS];

void timers_reset(void)
{
	INIT_LIST_HEAD(&S.timers);
	tick_hook = NULL;
	memset(running_timer, 0, sizeof(running_timer));
}

static bool in_range(const void *p, uintptr_t start, uintptr_t end)
{
	return (uintptr_t)p >= start && (uintptr_t)p < end;
}

/*
 * For rmmod(), before it unmaps [start, end): an armed or running timer
 * whose timer_list or function lies there would walk the kernel into
 * unmapped memory (the armed list links through the timer_list itself).
 */
struct timer_list *timer_in_range_locked(uintptr_t start, uintptr_t end, bool *running)
{
	struct timer_list *t;

	sim_assert_sched_held();
	for (int cpu = 0; cpu < NR_CPUS; cpu++) {
		t = running_timer[cpu];
		if (t && (in_range(t, start, end) ||
			  in_range((const void *)(uintptr_t)t->function, start, end))) {
			*running = true;
			return t;
		}
	}
	list_for_each_entry(t, &S.timers, entry)
		if (in_range(t, start, end) ||
		    in_range((const void *)(uintptr_t)t->function, start, end)) {
			*running = false;
			return t;
		}
	return NULL;
}

/* Without S.lock: only @cpu's own interrupt asks, and only it sets its slot. */
timer_fn_t timer_fn_running_on(int cpu)
{
	struct timer_list *t = running_timer[cpu];

	return t ? t->function : NULL;
}

/* A timer whose function went away with its module: name it before the fault. */
static void check_not_unloaded(const void *fn, const char *what)
{
	bool unloaded = false;
	const char *mod = module_of_address(fn, &unloaded);

	if (mod && unloaded && S.cfg.check_module_callbacks)
		sim_bug(__FILE__, __LINE__, "%s into unloaded module %s", what, mod);
}

static void run_timers(void *arg)
{
	int cpu = (int)(long)arg;

	SIM_LOCK();
	for (;;) {
		struct timer_list *t, *due = NULL;

		list_for_each_entry(t, &S.timers, entry)
			if (t->cpu == cpu && t->expires <= S.now_jiffies) {
				due = t;
				break;
			}
		if (!due)
			break;
		list_del_init(&due->entry);
		due->pending = false;
		due->running++;
		running_timer[cpu] = due;
		SIM_UNLOCK();
		check_not_unloaded((const void *)(uintptr_t)due->function, "timer");
		due->function(due);
		SIM_LOCK();
		running_timer[cpu] = NULL;
		due->running--;
	}
	SIM_UNLOCK();
}

void timers_fire_due_locked(void)
{
	bool raised[NR_CPUS] = { false };
	struct timer_list *t;

	sim_assert_sched_held();
	list_for_each_entry(t, &S.timers, entry)
		if (t->expires <= S.now_jiffies && !raised[t->cpu]) {
			raised[t->cpu] = true;
			raise_irq_locked(t->cpu, run_timers, (void *)(long)t->cpu, "timer");
		}
}

bool timers_next_locked(unsigned long *expires)
{
	struct timer_list *t;
	bool any = false;

	sim_assert_sched_held();
	list_for_each_entry(t, &S.timers, entry)
		if (!any || t->expires < *expires) {
			*expires = t->expires;
			any = true;
		}
	return any;
}

/* As Linux's timers_dead_cpu(): a dead CPU's timers fire on the control CPU. */
void timers_migrate_locked(int from, int to)
{
	struct timer_list *t;

	sim_assert_sched_held();
	list_for_each_entry(t, &S.timers, entry)
		if (t->cpu == from)
			t->cpu = to;
}

void timer_setup(struct timer_list *t, timer_func_t fn, unsigned int flags)
{
	(void)flags;
	INIT_LIST_HEAD(&t->entry);
	t->function = fn;
	t->expires = 0;
	t->cpu = 0;
	t->pending = false;
	t->running = 0;
}

/* Where a timer armed now fires: the arming task's CPU or, for a task on
 * no CPU (the test), the first online one (never a CPU that is offline). */
static int timer_cpu_locked(const struct task_struct *cur)
{
	int cpu = 0;

	sim_assert_sched_held();
	if (cur && cur->cpu >= 0)
		return cur->cpu;
	while (cpu < nr_cpu_ids - 1 && atomic_load(&cpu_of(cpu)->offline))
		cpu++;
	return cpu;
}

int mod_timer(struct timer_list *t, unsigned long expires)
{
	struct task_struct *cur = sim_current;

	SIM_LOCK();
	int was = t->pending;

	if (was)
		list_del_init(&t->entry);
	t->expires = expires;
	t->cpu = timer_cpu_locked(cur);
	t->pending = true;
	list_add_tail(&t->entry, &S.timers);
	if (expires <= S.now_jiffies)
		timers_fire_due_locked();
	SIM_UNLOCK();
	sim_sched_point(__FILE__, __LINE__);
	return was;
}

int del_timer(struct timer_list *t)
{
	SIM_LOCK();
	int was = t->pending;

	if (was) {
		list_del_init(&t->entry);
		t->pending = false;
	}
	SIM_UNLOCK();
	return was;
}

int del_timer_sync(struct timer_list *t)
{
	int was = 0;

	if (in_irq())
		sim_bug(__FILE__, __LINE__, "del_timer_sync() from IRQ context "
			"(from the timer's own function it would wait for itself)");
	for (;;) {
		was |= del_timer(t);
		SIM_LOCK();
		int running = t->running;

		SIM_UNLOCK();
		if (!running)
			break;
		cpu_relax();
	}
	return was;
}

bool timer_pending(const struct timer_list *t)
{
	return SIM_LOCKED(bool, t->pending);
}

/* The scheduling-clock interrupt: what the kernel's tick does for RCU. */
static void tick_irq(void *arg)
{
	SIM_LOCK();
	void (*hook)(int) = tick_hook;

	SIM_UNLOCK();
	if (hook)
		hook((int)(long)arg);
}

void sim_set_tick_hook(void (*hook)(int cpu))
{
	SIM_LOCK();
	tick_hook = hook;
	SIM_UNLOCK();
}

void sim_advance_jiffies(unsigned long n)
{
	while (n--) {
		SIM_LOCK();
		S.now_jiffies++;
		for (int cpu = 0; cpu < nr_cpu_ids; cpu++)
			if (!atomic_load(&cpu_of(cpu)->offline)) /* no tick offline */
				raise_irq_locked(cpu, tick_irq, (void *)(long)cpu, "tick");
		timers_fire_due_locked();
		SIM_UNLOCK();
		sim_sched_point(__FILE__, __LINE__);
	}
}

void sim_tick(void)
{
	sim_advance_jiffies(1);
}

/* ---- delays: schedule_timeout() and msleep() sleep on a timer ----------- */

struct sleeper {
	struct timer_list timer;
	struct task_struct *task;
};

static void sleeper_fire(struct timer_list *tl)
{
	struct sleeper *s = container_of(tl, struct sleeper, timer);

	wake_up_process(s->task);
}

long sim_schedule_timeout(long timeout, const char *file, int line)
{
	struct task_struct *t = sim_current;
	struct sleeper s = { .task = t };
	unsigned long expires;

	sim_might_sleep(file, line);
	if (!t)
		return 0;
	file = kcsan_intern_file(file);         /* a module's name dies at rmmod */
	expires = sim_jiffies() + (unsigned long)timeout;
	timer_setup(&s.timer, sleeper_fire, 0);
	mod_timer(&s.timer, expires);
	SIM_LOCK();
	t->file = file;         /* where it sleeps: the caller's line, not this one */
	t->line = line;
	if (S.now_jiffies < expires)
		sched_block_locked(t, "schedule_timeout()", true);
	SIM_UNLOCK();
	del_timer_sync(&s.timer);
	unsigned long now = sim_jiffies();

	return now >= expires ? 0 : (long)(expires - now);
}

void sim_msleep(unsigned int ms, const char *file, int line)
{
	unsigned long until = sim_jiffies() + ms;

	while (sim_jiffies() < until)
		sim_schedule_timeout((long)(until - sim_jiffies()), file, line);
}
