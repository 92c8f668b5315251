/*
 * qq4_scenario.h - Quick Quiz #4 as a forced schedule, reusable by tests and
 * by the docs (which draw its two timelines).
 *
 * The schedule, on every seed:
 *  1. a callback queued on CPU 1 starts and blocks until released (its CPU
 *     stays free to pass quiescent states);
 *  2. CPU 1 holds its interrupts, so it will take rcu_barrier()'s
 *     cross-call late; a kthread on CPU 0 calls the barrier under test: CPU
 *     0's and CPUs 2-3's markers are queued, and (if on_each_cpu() waits by
 *     sleeping) a grace period ends and they are invoked -- the article's
 *     count is back at zero while CPU 1 has not yet counted itself;
 *  3. CPU 1 takes the cross-call and queues its marker behind the blocked
 *     callback: on_each_cpu() returns;
 *  4. the blocked callback is released; everything finishes.
 * A correct barrier returns only in step 4, after the blocked callback.
 */
#ifndef QQ4_SCENARIO_H
#define QQ4_SCENARIO_H

#include <stdbool.h>

struct qq4_run {
	/* inputs */
	void (*do_barrier)(void);  /* rcu_barrier, or article_rcu_barrier() */
	bool ipi_wait_sleeps;   /* on_each_cpu(wait=1) sleeps (QQ4's world) or spins (2007) */
	const char *svg_path;   /* write the timeline here when not NULL */
	const char *svg_title;
	/* results */
	bool slow_started;             /* step 1 happened (callbacks work at all) */
	bool returned_before_ipi;      /* returned before CPU 1 took its cross-call */
	bool returned_while_blocked;   /* returned while CPU 1's earlier callback was still running */
	bool returned_at_end;          /* returned once everything was released */
	bool blocked_done_at_return;   /* the earlier callback had finished when it returned */
	const char *polls;             /* not returned at the end: it sleeps in msleep() (why), or NULL */
};

/* Run the schedule once in a booted kernel; records into @r. Starts and
 * stops the callback machinery itself. */
void qq4_scenario(struct qq4_run *r);

/*
 * article_rcu_barrier() - the 2007 listing, count from zero, kept in the
 * tests (never in the student's file) to show Quick Quiz #4's failure. Uses
 * the student's call_rcu() for its per-CPU markers.
 */
void article_rcu_barrier(void);
/* Reset article_rcu_barrier()'s state; call once per boot. */
void article_rcu_barrier_init(void);

#endif
