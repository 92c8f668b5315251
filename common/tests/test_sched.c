/* CPUs and tasks: holding a CPU, context switches as quiescent states, sleeping checks. */
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/smp.h>
#include <linux/wait.h>
#include <sim/test.h>

static struct completion done;
static int ran_on;

static int record_cpu(void *arg)
{
	(void)arg;
	ran_on = smp_processor_id();
	complete(&done);
	return 7;
}

SIM_TEST(sched, kthread_runs_on_its_cpu)
{
	sim_boot(NULL);
	init_completion(&done);
	struct task_struct *k = kthread_run_on_cpu(record_cpu, NULL, 2, "worker");

	wait_for_completion(&done);
	cr_assert_eq(ran_on, 2, "a kthread bound to CPU 2 ran on CPU %d", ran_on);
	cr_assert_eq(kthread_stop(k), 7, "kthread_stop() must return the thread's value");
}

/* Two tasks on one CPU: the second runs only when the first gives the CPU up. */
static int order[4], norder;

static int hog(void *arg)
{
	(void)arg;
	order[norder++] = 1;
	sim_point("hog-holds-cpu");
	order[norder++] = 2;
	return 0;
}

static int second(void *arg)
{
	(void)arg;
	order[norder++] = 3;
	return 0;
}

SIM_TEST(sched, one_task_per_cpu_nonpreemptible)
{
	sim_boot(NULL);
	norder = 0;
	struct task_struct *a = sim_kthread_run_held("hog-holds-cpu", hog, NULL, 1, "hog");

	struct task_struct *b = kthread_run_on_cpu(second, NULL, 1, "second");

	sim_run_until_idle();
	cr_assert_eq(norder, 1, "a second task ran on CPU 1 while the first still held it");
	cr_assert(!idle_cpu(1), "CPU 1 is held by a task, so it is not idle");
	sim_release_point("hog-holds-cpu");
	sim_run_until_idle();
	cr_assert_eq(norder, 3);
	cr_assert_eq(order[2], 3, "the second task must run after the first gave CPU 1 up");
	kthread_stop(a);
	kthread_stop(b);
}

static int yielder(void *arg)
{
	(void)arg;
	while (!kthread_should_stop())
		schedule();
	return 0;
}

SIM_TEST(sched, context_switch_is_quiescent_state)
{
	sim_boot(NULL);
	unsigned long before = cpu_quiescent_count(3);

	cr_assert(idle_cpu(3), "a CPU nobody holds is idle");
	struct task_struct *k = kthread_run_on_cpu(yielder, NULL, 3, "yielder");

	/* Sleep until CPU 3 has passed a few quiescent states (no time involved). */
	wait_event(cpu_qs_wq, cpu_quiescent_count(3) > before + 2);
	kthread_stop(k);
	cr_assert_gt(cpu_quiescent_count(3), before + 1,
		     "schedule() on CPU 3 must count quiescent states there");
	cr_assert(idle_cpu(3));
}

static int cond_resched_calls(void *arg)
{
	unsigned long *seen = arg;
	unsigned long c0 = cpu_quiescent_count(smp_processor_id());

	cond_resched();
	*seen = cpu_quiescent_count(smp_processor_id()) - c0;
	return 0;
}

SIM_TEST(sched, cond_resched_reports_quiescent_state)
{
	unsigned long seen = 0;

	sim_boot(NULL);
	kthread_stop(kthread_run_on_cpu(cond_resched_calls, &seen, 1, "cr"));
	cr_assert_eq(seen, 1, "cond_resched() with nobody waiting counts one quiescent state");
}

SIM_TEST(sched, migrate_moves_the_test_task)
{
	sim_boot(NULL);
	migrate_to_cpu(2);
	cr_assert_eq(smp_processor_id(), 2);
	cr_assert(!idle_cpu(2));
	migrate_to_cpu(-1);
	cr_assert(idle_cpu(2));
}

/* Boot, and expect the report of might_sleep() that the test then provokes. */
static void boot_expecting_might_sleep_bug(void)
{
	sim_boot(NULL);
	sim_expect_bug("sleeping function called from invalid context");
}

SIM_TEST(sched, sleeping_in_rcu_reader_is_a_bug, .signal = BUG_SIGNAL)
{
	boot_expecting_might_sleep_bug();
	migrate_to_cpu(0);
	rcu_lock_acquire();
	schedule();
}

SIM_TEST(sched, sleeping_with_preemption_off_is_a_bug, .signal = BUG_SIGNAL)
{
	boot_expecting_might_sleep_bug();
	migrate_to_cpu(1);
	preempt_disable();
	migrate_to_cpu(2);
}

SIM_TEST(sched, sleeping_in_irq_is_a_bug, .signal = BUG_SIGNAL)
{
	boot_expecting_might_sleep_bug();
	sim_call_in_irq(1, schedule, "sleepy");
}

SIM_TEST(sched, smp_processor_id_without_cpu_is_a_bug, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("holds no CPU");
	(void)smp_processor_id();
}

SIM_TEST(sched, a_different_bug_is_not_the_expected_one, .signal = SIGABRT)
{
	sim_boot(NULL);
	sim_expect_bug("sleeping function");
	(void)smp_processor_id();
}
