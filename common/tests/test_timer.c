/* Virtual time: timers fire only when time moves, in IRQ context, on their CPU. */
#include <linux/kthread.h>
#include <linux/timer.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/smp.h>
#include <sim/test.h>

static int fired, fired_cpu, fired_in_irq;

static void on_timer(struct timer_list *t)
{
	(void)t;
	fired++;
	fired_cpu = smp_processor_id();
	fired_in_irq = in_interrupt();
}

SIM_TEST(timer, fires_when_time_reaches_expiry)
{
	struct sim_config cfg = sim_default_config();
	struct timer_list t;

	cfg.auto_time = false;
	sim_boot(&cfg);
	fired = 0;
	migrate_to_cpu(2);
	timer_setup(&t, on_timer, 0);
	mod_timer(&t, jiffies + 5);
	migrate_to_cpu(-1);
	sim_advance_jiffies(4);
	sim_run_until_idle();
	cr_assert_eq(fired, 0, "a timer fired before its expiry");
	cr_assert(timer_pending(&t));
	sim_tick();
	sim_run_until_idle();
	cr_assert_eq(fired, 1);
	cr_assert_eq(fired_cpu, 2, "a timer fires on the CPU that armed it");
	cr_assert(fired_in_irq);
	cr_assert(!timer_pending(&t));
}

SIM_TEST(timer, del_timer_sync_disarms)
{
	struct timer_list t;

	sim_boot(NULL);
	fired = 0;
	timer_setup(&t, on_timer, 0);
	mod_timer(&t, jiffies + 3);
	cr_assert_eq(del_timer_sync(&t), 1);
	sim_advance_jiffies(10);
	sim_run_until_idle();
	cr_assert_eq(fired, 0);
}

static int sleeper(void *arg)
{
	unsigned long *woke_at = arg;

	msleep(20);
	*woke_at = jiffies;
	return 0;
}

SIM_TEST(timer, msleep_jumps_virtual_time_when_all_block)
{
	unsigned long woke_at = 0;

	sim_boot(NULL);
	kthread_stop(kthread_run_on_cpu(sleeper, &woke_at, 1, "sleeper"));
	cr_assert_eq(woke_at, 20, "msleep(20) from time 0 wakes at jiffy 20, not %lu", woke_at);
}

static int ticks_seen[4];

static void count_tick(int cpu)
{
	if (in_interrupt())
		ticks_seen[cpu]++;
}

SIM_TEST(timer, tick_runs_on_every_cpu_each_jiffy)
{
	sim_boot(NULL);
	sim_set_tick_hook(count_tick);
	sim_advance_jiffies(3);
	sim_run_until_idle();
	for (int cpu = 0; cpu < 4; cpu++)
		cr_assert_eq(ticks_seen[cpu], 3, "CPU %d saw %d ticks in IRQ context, not 3",
			     cpu, ticks_seen[cpu]);
}
