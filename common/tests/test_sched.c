/* Tests of CPUs, tasks, scheduling points and the controller's holds. */
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/smp.h>
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
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	init_completion(&done);
	struct task_struct *k = kthread_run_on_cpu(record_cpu, NULL, 2, "worker");

	wait_for_completion(&done);
	cr_assert_eq(ran_on, 2);
	cr_assert_eq(kthread_stop(k), 7);
}
