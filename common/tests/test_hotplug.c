/*
 * test_hotplug.c - CPU hotplug: an offline CPU runs no task and takes no
 * interrupt, tick or cross-call; cpu_down() lets the CPU finish what it
 * holds first; its timers move; the hotplug states' callbacks run on a
 * surviving CPU, in process context, with the CPU offline; cpu_up() undoes
 * it all. Also the named point every cross-call's caller passes on return.
 */
#include <errno.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/smp.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <sim/test.h>

/* ---- tasks bound to an offline CPU are parked ---------------------------- */

static DECLARE_WAIT_QUEUE_HEAD(park_wq);
static int park_go, park_runs, park_cpu;

static int parked_fn(void *arg)
{
	(void)arg;
	while (!kthread_should_stop()) {
		wait_event(park_wq, READ_ONCE(park_go) || kthread_should_stop());
		if (READ_ONCE(park_go)) {
			WRITE_ONCE(park_go, 0);
			park_runs++;
			park_cpu = smp_processor_id();
		}
	}
	return 0;
}

SIM_TEST(hotplug, offline_cpu_runs_no_task_until_it_is_up)
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *k;
	int cpu, seen = 0;

	sim_boot(&cfg);
	k = kthread_run_on_cpu(parked_fn, NULL, 2, "parked/%u");
	sim_run_until_idle();
	cr_assert_eq(cpu_down(2), 0);
	cr_assert(!cpu_online(2) && cpu_online(1), "CPU 2 is offline, CPU 1 is not");
	cr_assert_eq(num_online_cpus(), 3u);
	for_each_online_cpu(cpu)
		seen |= 1 << cpu;
	cr_assert_eq(seen, 0xb, "for_each_online_cpu() visits CPUs 0, 1, 3 only (mask %#x)", seen);
	cr_assert(idle_cpu(2), "an offline CPU is idle: a quiescent state");
	WRITE_ONCE(park_go, 1);
	wake_up(&park_wq);
	sim_run_until_idle();
	cr_assert_eq(park_runs, 0, "a kthread bound to offline CPU 2 ran");
	cr_assert_eq(cpu_up(2), 0);
	sim_run_until_idle();
	cr_assert_eq(park_runs, 1, "the kthread parked on CPU 2 did not run after cpu_up(2)");
	cr_assert_eq(park_cpu, 2);
	kthread_stop(k);
}

SIM_TEST(hotplug, errors)
{
	struct sim_config cfg = sim_default_config();

	cfg.nr_cpus = 2;
	sim_boot(&cfg);
	cr_assert_eq(cpu_up(1), -EINVAL, "cpu_up() of an online CPU");
	cr_assert_eq(cpu_down(1), 0);
	cr_assert_eq(cpu_down(1), -EINVAL, "cpu_down() of an offline CPU");
	cr_assert_eq(cpu_down(0), -EBUSY, "cpu_down() of the last online CPU");
	cr_assert_eq(cpu_up(1), 0);
}

/* ---- no cross-call, interrupt or tick on an offline CPU -------------------- */

static int ran_on[4];

static void count_cpu(void *arg)
{
	(void)arg;
	ran_on[smp_processor_id()]++;
}

SIM_TEST(hotplug, cross_call_to_offline_cpu_fails)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	cr_assert_eq(cpu_down(2), 0);
	migrate_to_cpu(0);
	cr_assert_eq(smp_call_function_single(2, count_cpu, NULL, 1), -ENXIO,
		     "smp_call_function_single() to an offline CPU returns -ENXIO, as Linux's");
	cr_assert_eq(ran_on[2], 0, "the function ran on offline CPU 2");
	on_each_cpu(count_cpu, NULL, 1);
	migrate_to_cpu(-1);
	cr_assert(ran_on[0] == 1 && ran_on[1] == 1 && ran_on[3] == 1 && ran_on[2] == 0,
		  "on_each_cpu() runs on the online CPUs only: %d %d %d %d",
		  ran_on[0], ran_on[1], ran_on[2], ran_on[3]);
	cr_assert_eq(cpu_up(2), 0);
}

SIM_TEST(hotplug, raise_irq_to_offline_cpu_is_a_bug, .signal = BUG_SIGNAL)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	cr_assert_eq(cpu_down(3), 0);
	sim_expect_bug("is offline");
	raise_irq(3, count_cpu, NULL, "late");
	cr_assert_fail("raise_irq() to an offline CPU returned");
}

static int ticks[4];

static void tick_hook(int cpu)
{
	ticks[cpu]++;
}

SIM_TEST(hotplug, no_tick_on_an_offline_cpu)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	sim_set_tick_hook(tick_hook);
	cr_assert_eq(cpu_down(1), 0);
	sim_advance_jiffies(3);
	sim_run_until_idle();
	cr_assert(ticks[0] == 3 && ticks[1] == 0 && ticks[2] == 3 && ticks[3] == 3,
		  "ticks per CPU: %d %d %d %d", ticks[0], ticks[1], ticks[2], ticks[3]);
	cr_assert_eq(cpu_up(1), 0);
}

/* ---- its timers move; cpu_down() lets the CPU finish first ---------------- */

static struct timer_list moved_timer;
static int timer_cpu = -1;

static void timer_fn(struct timer_list *t)
{
	(void)t;
	timer_cpu = smp_processor_id();
}

static int arm_timer(void *arg)
{
	(void)arg;
	timer_setup(&moved_timer, timer_fn, 0);
	mod_timer(&moved_timer, jiffies + 5);
	return 0;
}

SIM_TEST(hotplug, timers_of_a_dead_cpu_fire_on_the_control_cpu)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	kthread_stop(kthread_run_on_cpu(arm_timer, NULL, 2, "armer"));
	cr_assert_eq(cpu_down(2), 0);
	sim_advance_jiffies(5);
	sim_run_until_idle();
	cr_assert_eq(timer_cpu, 0, "a timer armed on CPU 2 fired on CPU %d after CPU 2 went "
		     "down (expected CPU 0, the control CPU of the test's cpu_down())", timer_cpu);
	cr_assert_eq(cpu_up(2), 0);
}

SIM_TEST(hotplug, timer_armed_off_cpu_fires_on_an_online_cpu)
{
	sim_boot(NULL);
	cr_assert_eq(cpu_down(0), 0);
	timer_cpu = -1;
	timer_setup(&moved_timer, timer_fn, 0);
	mod_timer(&moved_timer, jiffies + 2);   /* the test runs on no CPU */
	sim_advance_jiffies(2);
	sim_run_until_idle();
	cr_assert_eq(timer_cpu, 1, "a timer the test armed while CPU 0 was offline fired on CPU "
		     "%d (expected CPU 1, the first online CPU)", timer_cpu);
	cr_assert_eq(cpu_up(0), 0);
}

static int holder_fn(void *arg)
{
	(void)arg;
	sim_point("holder");
	return 0;
}

static int irq_saw_online = -1;

static void note_online(void *arg)
{
	(void)arg;
	irq_saw_online = cpu_online(1);
}

static int down_ret = 1;

static int downer_fn(void *arg)
{
	down_ret = cpu_down((unsigned int)(long)arg);
	return 0;
}

SIM_TEST(hotplug, cpu_down_lets_the_holder_and_pending_irqs_finish)
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *holder, *downer;

	sim_boot(&cfg);
	sim_hold_point("holder");
	holder = kthread_run_on_cpu(holder_fn, NULL, 1, "holder");
	sim_run_until_idle();
	raise_irq(1, note_online, NULL, "pending");
	downer = kthread_run_on_cpu(downer_fn, (void *)1L, 0, "downer");
	sim_run_until_idle();
	cr_assert(cpu_online(1) && down_ret == 1,
		  "CPU 1 went offline while a task held it (held at a point)");
	cr_assert_eq(irq_saw_online, -1, "CPU 1 took an interrupt while its holder was held");
	sim_release_point("holder");
	sim_run_until_idle();
	cr_assert_eq(down_ret, 0, "cpu_down(1) did not return once CPU 1 was idle");
	cr_assert_eq(irq_saw_online, 1, "the interrupt pending on CPU 1 must run before it goes "
		     "(saw online: %d)", irq_saw_online);
	cr_assert(!cpu_online(1));
	kthread_stop(downer);
	kthread_stop(holder);
	cr_assert_eq(cpu_up(1), 0);
}

/* ---- hotplug states -------------------------------------------------------- */

struct cb_seen {
	int calls, cpu_arg, ran_on, online, irq;
	long order;
};

static struct cb_seen dead_a, dead_b, up_a;
static long cb_order;

static void note_cb(struct cb_seen *s, unsigned int cpu)
{
	s->calls++;
	s->cpu_arg = (int)cpu;
	s->ran_on = smp_processor_id();
	s->online = cpu_online(cpu);
	s->irq = in_interrupt();
	s->order = ++cb_order;
}

static int teardown_a(unsigned int cpu)
{
	note_cb(&dead_a, cpu);
	return 0;
}

static int teardown_b(unsigned int cpu)
{
	note_cb(&dead_b, cpu);
	return 0;
}

static int startup_a(unsigned int cpu)
{
	note_cb(&up_a, cpu);
	return 0;
}

SIM_TEST(hotplug, dead_callbacks_run_on_a_surviving_cpu_after_it_is_offline)
{
	struct sim_config cfg = sim_default_config();
	int dyn;

	sim_boot(&cfg);
	cr_assert_eq(cpuhp_setup_state_nocalls(CPUHP_RCUTREE_PREP, "test:a", startup_a,
					       teardown_a), 0);
	dyn = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "test:b", NULL, teardown_b);
	cr_assert(dyn >= CPUHP_BP_PREPARE_DYN && dyn < CPUHP_BP_PREPARE_DYN_END);
	sim_hold_point(CPUHP_DEAD_POINT);
	kthread_run_on_cpu(downer_fn, (void *)3L, 1, "downer");
	sim_run_until_idle();
	cr_assert(!cpu_online(3), "CPU 3 is offline at " CPUHP_DEAD_POINT);
	cr_assert_eq(dead_a.calls + dead_b.calls, 0, "a teardown ran before " CPUHP_DEAD_POINT);
	sim_release_point(CPUHP_DEAD_POINT);
	sim_run_until_idle();
	cr_assert_eq(down_ret, 0);
	cr_assert(dead_a.calls == 1 && dead_b.calls == 1);
	cr_assert(dead_a.cpu_arg == 3 && dead_a.ran_on == 1 && !dead_a.online && !dead_a.irq,
		  "teardown: for CPU %d, ran on CPU %d (the caller's), online %d, irq %d",
		  dead_a.cpu_arg, dead_a.ran_on, dead_a.online, dead_a.irq);
	cr_assert_gt(dead_a.order, dead_b.order, "the later state is torn down first");
	cr_assert_eq(cpu_up(3), 0);
	cr_assert(up_a.calls == 1 && up_a.cpu_arg == 3 && !up_a.online && up_a.ran_on != 3,
		  "startup runs once, for CPU 3, before it is online, on another CPU");
	cpuhp_remove_state_nocalls(CPUHP_RCUTREE_PREP);
	cpuhp_remove_state_nocalls((enum cpuhp_state)dyn);
	cr_assert_eq(cpu_down(3), 0);
	cr_assert_eq(dead_a.calls, 1, "a removed state's teardown ran");
	cr_assert_eq(cpu_up(3), 0);
}

SIM_TEST(hotplug, kthread_stop_on_an_offline_cpu_is_a_bug, .signal = BUG_SIGNAL)
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *k;

	sim_boot(&cfg);
	k = kthread_run_on_cpu(parked_fn, NULL, 2, "parked/%u");
	sim_run_until_idle();
	cr_assert_eq(cpu_down(2), 0);
	sim_expect_bug("is offline");
	kthread_stop(k);
	cr_assert_fail("kthread_stop() of a kthread parked on an offline CPU returned");
}

/* ---- the caller of a cross-call, stopped the moment it returns ------------ */

static int calls_returned;

static int caller_fn(void *arg)
{
	(void)arg;
	smp_call_function_single(2, count_cpu, NULL, 1);
	calls_returned++;
	return 0;
}

SIM_TEST(smp, caller_held_at_the_return_point_keeps_its_cpu)
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *k;

	sim_boot(&cfg);
	sim_hold_point(SMP_CALL_RETURN_POINT);
	k = kthread_run_on_cpu(caller_fn, NULL, 1, "caller");
	sim_run_until_idle();
	cr_assert_eq(ran_on[2], 1, "the cross-call ran before the caller stopped");
	cr_assert_eq(sim_tasks_at_point(SMP_CALL_RETURN_POINT), 1);
	cr_assert(!calls_returned && !idle_cpu(1), "the held caller keeps CPU 1");
	sim_release_point(SMP_CALL_RETURN_POINT);
	kthread_stop(k);
	cr_assert_eq(calls_returned, 1);
}
