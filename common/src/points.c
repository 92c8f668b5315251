/*
 * points.c - named points: where a test holds, steps or counts tasks;
 * sim_run_until_idle(), the test's way to let every other task run out; and
 * rcu_cb_pass_begin(), the one point every lab's callback kthread passes.
 *
 * Rule kept here: a named point is a scheduling point with a name and nothing
 * else; holding one only stops tasks that reach it, never changes what they
 * do once let go, and every hold, release and pass happens under S.lock, so
 * a forced schedule replays exactly from its seed.
 */
#include <stdio.h>
#include <string.h>
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/sched.h>
#include "internal.h"

static struct sim_pointhold *point_find_locked(const char *name, bool create)
{
	sim_assert_sched_held();
	for (int i = 0; i < MAX_POINTS; i++) {
		struct sim_pointhold *p = &S.points[i];

		if (p->name && !strcmp(p->name, name))
			return p;
		if (!p->name && create) {
			p->name = name;
			return p;
		}
	}
	return NULL;
}

/* Stop the current task at @name if a test holds it; count the pass. S.lock held. */
static void point_pass_locked(struct task_struct *t, const char *name, const char *file,
			      int line)
{
	struct sim_pointhold *p = point_find_locked(name, true);

	sim_assert_sched_held();
	if (p && p->held) {
		if (p->permits > 0) {
			p->permits--;
		} else {
			t->file = file;
			t->line = line;
			t->held_at = p->name;
			p->waiting++;
			trace_emit(t->cpu, t, TR_HOLD, p->name, 0);
			sched_block_keep_cpu_locked(t, p->name);
		}
	}
	if (p)
		p->passes++;
}

/*
 * A named point the kernel passes on a path every lab takes (a cross-call's
 * send): it stops a task only while a test holds it, and is no scheduling
 * point otherwise, so that adding it changed no seed's schedule.
 */
void sim_point_quiet(const char *name, const char *file, int line)
{
	struct task_struct *t = sim_current;

	if (!t || !S.booted)
		return;
	SIM_LOCK();
	point_pass_locked(t, name, file, line);
	SIM_UNLOCK();
}

void sim_point_at(const char *name, const char *file, int line)
{
	if (!sim_current || !S.booted)
		return;
	sim_point_quiet(name, file, line);
	sched_point(file, line, false);
}

void sim_hold_point(const char *name)
{
	SIM_LOCK();
	struct sim_pointhold *p = point_find_locked(name, true);

	if (!p)
		sim_bug_locked(__FILE__, __LINE__, "too many named points (max %d)", MAX_POINTS);
	p->held = true;
	p->permits = 0;
	SIM_UNLOCK();
}

static void point_let_go_locked(struct sim_pointhold *p, int n)
{
	struct task_struct *t;

	sim_assert_sched_held();
	list_for_each_entry(t, &S.tasks, all_node) {
		if (n == 0)
			break;
		if (t->held_at && !strcmp(t->held_at, p->name)) {
			t->held_at = NULL;
			p->waiting--;
			sched_wake_locked(t);
			n--;
		}
	}
	if (n > 0)
		p->permits += n;
}

void sim_release_point(const char *name)
{
	SIM_LOCK();
	struct sim_pointhold *p = point_find_locked(name, false);

	if (p) {
		p->held = false;
		p->permits = 0;
		point_let_go_locked(p, p->waiting);
	}
	SIM_UNLOCK();
	sched_point(__FILE__, __LINE__, false);
}

void sim_step_point(const char *name, int n)
{
	SIM_LOCK();
	struct sim_pointhold *p = point_find_locked(name, true);

	if (p)
		point_let_go_locked(p, n);
	SIM_UNLOCK();
	sched_point(__FILE__, __LINE__, false);
}

/* A copy of point @name's counters, taken under S.lock; all zero if unknown. */
static struct sim_pointhold point_snapshot(const char *name)
{
	struct sim_pointhold copy = { 0 };

	SIM_LOCK();
	struct sim_pointhold *p = point_find_locked(name, false);

	if (p)
		copy = *p;
	SIM_UNLOCK();
	return copy;
}

int sim_tasks_at_point(const char *name)
{
	return point_snapshot(name).waiting;
}

long sim_point_passes(const char *name)
{
	return point_snapshot(name).passes;
}

void sim_run_until_idle(void)
{
	struct task_struct *t = sim_current;

	if (!t)
		return;
	if (t->cpu >= 0)
		might_sleep();
	SIM_LOCK();
	S.quiescer = t;
	t->state = TS_BLOCKED;
	t->blocked_on = "sim_run_until_idle()";
	S.nr_running--;
	cpu_release_locked(t);
	sched_wait_locked(t);
	S.quiescer = NULL;
	SIM_UNLOCK();
}

/* "rcu_cb_pass/N": point names are kept by pointer, so they live here. */
static char cb_pass_names[NR_CPUS][24];

/* Is point @name held by a test? S.lock held. */
static bool point_held_locked(const char *name)
{
	struct sim_pointhold *p = point_find_locked(name, false);

	sim_assert_sched_held();
	return p && p->held;
}

/*
 * Parallel mode, neither pass point held and nobody waiting for the CPU: the
 * pass steps off and back in place (cpu_step_off_in_place_locked()), and is
 * counted at both points, as the full round trip would be. A callback batch
 * then costs no thread hand-over per pass (issue 30: most of a full
 * rcu_barrier()'s time went to those).
 */
static bool cb_pass_in_place(struct task_struct *t, int cpu)
{
	bool done = false;

	if (S.det)
		return false;
	might_sleep();
	SIM_LOCK();
	if (!point_held_locked("rcu_cb_pass") && !point_held_locked(cb_pass_names[cpu]) &&
	    cpu_step_off_in_place_locked(t)) {
		point_pass_locked(t, "rcu_cb_pass", __FILE__, __LINE__);
		point_pass_locked(t, cb_pass_names[cpu], __FILE__, __LINE__);
		done = true;
	}
	SIM_UNLOCK();
	if (done)
		sched_point(__FILE__, __LINE__, false);
	return done;
}

void rcu_cb_pass_begin(void)
{
	struct task_struct *t = sim_current;
	int cpu = t ? t->cpu : -1;

	if (cpu < 0)
		sim_bug(__FILE__, __LINE__, "rcu_cb_pass_begin() from a task that holds no CPU");
	if (!cb_pass_names[cpu][0])
		snprintf(cb_pass_names[cpu], sizeof(cb_pass_names[cpu]), "rcu_cb_pass/%d", cpu);
	if (cb_pass_in_place(t, cpu))
		return;
	migrate_to_cpu(-1);
	sim_point_at("rcu_cb_pass", __FILE__, __LINE__);
	sim_point_at(cb_pass_names[cpu], __FILE__, __LINE__);
	migrate_to_cpu(cpu);
}
