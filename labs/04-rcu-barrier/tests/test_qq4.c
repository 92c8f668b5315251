/*
 * test_qq4.c - Quick Quiz #4: can rcu_barrier() return before a CPU has
 * queued its marker? With on_each_cpu() spinning (2007) no; with a wait that
 * sleeps, the article's count-from-zero barrier does; the student's barrier
 * must not, however on_each_cpu() waits.
 *
 * Set QQ4_SVG_DIR=dir (with WORKBOOK_SEED=N) to write the timelines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/rcupdate.h>
#include <sim/test.h>
#include "qq4_scenario.h"

/*
 * Quick Quiz #4's schedule with @r's barrier and wait; with QQ4_SVG_DIR
 * set and an @svg_name, its timeline is drawn there as @svg_name.svg.
 * CPU 1's earlier callback must have started, or there is nothing to judge.
 */
static void run_qq4(struct qq4_run *r, const char *svg_name)
{
	const char *dir = getenv("QQ4_SVG_DIR");
	char path[512];

	r->svg_path = NULL;
	if (dir && *dir && svg_name) {
		snprintf(path, sizeof(path), "%s/%s.svg", dir, svg_name);
		r->svg_path = path;
	}
	qq4_scenario(r);
	r->svg_path = NULL;
	cr_assert(r->slow_started,
		  "a callback queued on CPU 1 was never invoked: call_rcu() must queue on the "
		  "current CPU and CPU 1's kthread \"rcuo/1\" must invoke it after a grace period "
		  "(TODO 1-3)");
}

/* The article's 2007 barrier (count from 0): early with a sleeping wait, safe with a spinning one. */
static void qq4_article(void *arg)
{
	bool sleeps = *(bool *)arg;
	struct qq4_run r = { .do_barrier = article_rcu_barrier, .ipi_wait_sleeps = sleeps,
			     .svg_title = "QQ4: count from 0, on_each_cpu() wait sleeps" };

	run_qq4(&r, sleeps ? "qq4-count-from-zero-sleeping-wait" : NULL);
	if (sleeps) {
		cr_assert(r.returned_while_blocked,
			  "the article's count-from-zero rcu_barrier() should return early here "
			  "(CPU 0's marker ran and the count hit zero before CPU 1 counted "
			  "itself), but it did not: is call_rcu() queueing on the current CPU "
			  "only, and each CPU's batch waiting for a grace period?");
		return;
	}
	cr_assert(!r.returned_before_ipi && !r.returned_while_blocked,
		  "the 2007 barrier returned early although on_each_cpu() waited by spinning: "
		  "CPU 0 must not pass a quiescent state while it spins");
	cr_assert(r.returned_at_end && r.blocked_done_at_return,
		  "the 2007 barrier never returned, or returned before CPU 1's earlier callback "
		  "finished, with a spinning on_each_cpu() wait");
}

static void qq4_student(void *arg)
{
	bool sleeps = *(bool *)arg;
	struct qq4_run r = { .do_barrier = rcu_barrier, .ipi_wait_sleeps = sleeps,
			     .svg_title = sleeps ? "QQ4: your rcu_barrier(), wait sleeps"
						 : "QQ4: your rcu_barrier(), wait spins" };

	run_qq4(&r, sleeps ? "qq4-count-from-one-sleeping-wait"
			   : "qq4-count-from-one-spinning-wait");
	cr_assert(!r.returned_before_ipi,
		  "rcu_barrier() returned before CPU 1 had even taken its cross-call, so CPU 1's "
		  "marker was not queued yet: the barrier did not wait for on_each_cpu() to run "
		  "rcu_barrier_func() on every CPU (TODO 4: the call to on_each_cpu() and its "
		  "wait argument)");
	cr_assert(!r.returned_while_blocked,
		  "rcu_barrier() returned while a callback queued on CPU 1 before it was still "
		  "running: with on_each_cpu() waiting by %s, CPU 0's marker ran and the count "
		  "reached zero before CPU 1 counted itself, and the barrier took zero for 'every "
		  "marker has run' (Quick Quiz #4's schedule: read the timeline, then TODO 4)",
		  sleeps ? "sleeping" : "spinning");
	cr_assert(r.returned_at_end,
		  "rcu_barrier() never returned after every callback was released: %s (TODO 4%s)",
		  r.polls ? r.polls : "the count never reached zero, or nothing called complete() "
		  "when it did", r.polls ? "" : ": rcu_barrier_func() and the marker's callback");
	cr_assert(r.blocked_done_at_return,
		  "rcu_barrier() returned before CPU 1's earlier callback had finished");
}

/* Quick Quiz #4's schedule forced on every seed, its on_each_cpu() wait sleeping or not. */
static void qq4_seeds(sim_scenario_fn scenario, bool sleeps)
{
	struct sim_config cfg = sim_forced_config();

	sim_run_seeds(&cfg, scenario, &sleeps);
}

/*
 * One Quick Quiz #4 test: @scenario's barrier, with a sleeping or a spinning
 * wait. The article's 2007 barrier returns early when the wait sleeps (the
 * premature return the quiz asks about) and is safe when it spins (the 2007
 * answer); yours must be safe with both.
 */
#define QQ4_TEST(name, scenario, sleeps)                                      \
	SIM_TEST(qq4, name) { qq4_seeds(scenario, sleeps); }

QQ4_TEST(article_count_from_zero_returns_early_when_wait_sleeps, qq4_article, true)
QQ4_TEST(article_count_from_zero_safe_when_wait_spins, qq4_article, false)
QQ4_TEST(rcu_barrier_when_wait_sleeps, qq4_student, true)
QQ4_TEST(rcu_barrier_when_wait_spins, qq4_student, false)
