/* Deterministic mode: a seed fixes the interleaving; livelocks are reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/interrupt.h>
#include <linux/smp.h>
#include <sim/test.h>

static DEFINE_MUTEX(m);
static int shared;

static void tick_irq(void *arg)
{
	(void)arg;
	shared++;
}

static int busy(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < 30; i++) {
		mutex_lock(&m);
		shared++;
		mutex_unlock(&m);
		if (i % 7 == 0)
			raise_irq((int)((id + 1) % 4), tick_irq, NULL, "poke");
		cond_resched();
	}
	return 0;
}

/* Run the scenario under @seed; return its trace as text (caller frees). */
static char *trace_of(uint64_t seed)
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *k[3];
	char *buf = NULL;
	size_t len = 0;

	cfg.seed = seed;
	cfg.mode = SIM_DETERMINISTIC;
	/* The traces are compared for what the default scheduler does, in every mode. */
	cfg.sched = SIM_SCHED_RANDOM;
	sim_boot(&cfg);
	shared = 0;
	for (long i = 0; i < 3; i++)
		k[i] = kthread_run_on_cpu(busy, (void *)i, (int)i, "busy/%u");
	for (int i = 0; i < 3; i++)
		kthread_stop(k[i]);
	sim_run_until_idle();
	FILE *f = open_memstream(&buf, &len);

	trace_write_text(f);
	fclose(f);
	cr_assert_eq(sim_halt(), 0);
	return buf;
}

//! [same-seed]
SIM_TEST(determinism, same_seed_same_trace_other_seed_other_trace)
{
	char *a = trace_of(42), *b = trace_of(42), *c = trace_of(43);

	cr_assert_gt(strlen(a), 1000, "the scenario must leave a substantial trace");
	cr_assert_str_eq(a, b, "seed 42 twice must give byte-identical traces");
	cr_assert_str_neq(a, c, "seeds 42 and 43 must interleave differently");
	free(a);
	free(b);
	free(c);
}
//! [same-seed]

static int flag_nobody_sets;

static int spin_forever(void *arg)
{
	(void)arg;
	while (!READ_ONCE(flag_nobody_sets))
		cpu_relax();
	return 0;
}

SIM_TEST(determinism, livelock_is_reported_not_hung, .signal = BUG_SIGNAL, .timeout = 30)
{
	struct sim_config cfg = sim_default_config();

	cfg.livelock_ms = 2000;	/* parallel mode: the watchdog reports it */
	sim_boot(&cfg);
	sim_expect_bug("livelock");
	kthread_stop(kthread_run_on_cpu(spin_forever, NULL, 1, "spinner"));
}

SIM_TEST(determinism, run_until_idle_returns_beside_a_spinner)
{
	struct sim_config cfg = sim_default_config();

	cfg.mode = SIM_DETERMINISTIC;	/* spinners are recognised only here */
	sim_boot(&cfg);
	flag_nobody_sets = 0;
	struct task_struct *k = kthread_run_on_cpu(spin_forever, NULL, 1, "spinner");

	sim_run_until_idle();   /* returns: the only runnable task spins on our flag */
	cr_assert(!idle_cpu(1));
	WRITE_ONCE(flag_nobody_sets, 1);
	kthread_stop(k);
}

SIM_TEST(trace, json_and_svg_are_written)
{
	char *t = trace_of(7);
	char json[] = "/tmp/rculabs-trace-XXXXXX", svg[] = "/tmp/rculabs-svg-XXXXXX";
	int fj = mkstemp(json), fs = mkstemp(svg);

	free(t);
	cr_assert_eq(trace_write_json(json), 0);
	cr_assert_eq(trace_write_svg(svg, "test"), 0);
	FILE *f = fopen(json, "r");
	char head[64] = "";

	cr_assert(fgets(head, sizeof(head), f));
	fclose(f);
	cr_assert(strstr(head, "traceEvents"), "Chrome trace-event JSON starts with traceEvents");
	f = fopen(svg, "r");
	cr_assert(fgets(head, sizeof(head), f));
	fclose(f);
	cr_assert(!strncmp(head, "<svg", 4));
	cr_assert_gt(trace_count(TR_SWITCH), 10);
	close(fj);
	close(fs);
	unlink(json);
	unlink(svg);
}
