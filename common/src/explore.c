/*
 * explore.c - choosing schedules on purpose, and noticing a task that hangs.
 *
 * Rule kept here: every schedule these strategies choose is a function of
 * the seed, or of the choice list printed with a failure, so that the one
 * command printed replays exactly that run; and a task that stops making
 * progress while the rest of the system runs is reported by name, with
 * where it waits, instead of a silent time-out.
 *
 * Strategies (deterministic mode), chosen per boot by sim_config::sched:
 *  - SIM_SCHED_RANDOM: the seeded scheduler of sched.c (the default);
 *  - SIM_SCHED_PCT: Burckhardt et al.'s probabilistic concurrency testing
 *    (ASPLOS 2010): each task gets a random priority >= d, the
 *    highest-priority runnable task always runs, and at d-1 change points,
 *    drawn uniformly among the first pct_steps scheduling decisions, the
 *    running task drops to priority i (< d). A bug of depth d among n tasks
 *    and k steps is found with probability >= 1/(n k^(d-1)) per run. A task
 *    that spins in cpu_relax(), or has run PCT_SLICE decisions in a row,
 *    yields: it drops below every other task (PCT assumes no busy waiting
 *    and one processor; without this a spinner starves the task it waits
 *    for, and a reader looping on its own CPU starves every other CPU);
 *  - SIM_SCHED_EXHAUSTIVE (sim_run_exhaustive()): depth-first over choice
 *    lists; at each decision the choices are "the running task goes on"
 *    then every other runnable task in pid order; a choice that switches
 *    away from a runnable task is a preemption, and runs with more than the
 *    bound are not visited (Musuvathi and Qadeer's iterative context
 *    bounding). A task spinning in cpu_relax() yields to the next runnable
 *    task, which is no choice (busy waiting would otherwise branch forever).
 *    Which of a CPU's buffered stores drain when it is switched out is a
 *    choice too (explore_choose_locked()), never a preemption.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sim/test.h>
#include "internal.h"

/* ---- PCT ---------------------------------------------------------------- */

#define PCT_MAX_TASKS 256
#define PCT_MAX_DEPTH 16

static long pct_prio[PCT_MAX_TASKS];
static long pct_change[PCT_MAX_DEPTH];
static long pct_decisions;
static struct task_struct *pct_last;   /* picked at the previous decision */
static long pct_run;                    /* decisions in a row it was picked */
#define PCT_SLICE 1000                  /* then it yields, as a spinner does */

static void pct_boot_locked(void)
{
	int d = S.cfg.pct_depth < 1 ? 1 : S.cfg.pct_depth;
	long k = S.cfg.pct_steps > 0 ? S.cfg.pct_steps : 1;

	sim_assert_sched_held();
	if (d > PCT_MAX_DEPTH)
		d = PCT_MAX_DEPTH;
	/* A random permutation of d .. d+PCT_MAX_TASKS-1 over pids. */
	for (int i = 0; i < PCT_MAX_TASKS; i++)
		pct_prio[i] = d + i;
	for (int i = PCT_MAX_TASKS - 1; i > 0; i--) {
		int j = (int)(sim_rand_locked() % (uint64_t)(i + 1));
		long x = pct_prio[i];

		pct_prio[i] = pct_prio[j];
		pct_prio[j] = x;
	}
	for (int i = 0; i < PCT_MAX_DEPTH; i++)
		pct_change[i] = i < d - 1 ? 1 + (long)(sim_rand_locked() % (uint64_t)k) : -1;
	pct_decisions = 0;
	pct_last = NULL;
	pct_run = 0;
}

static long *prio_of(struct task_struct *t)
{
	static long none;

	return t->pid < PCT_MAX_TASKS ? &pct_prio[t->pid] : &none;
}

static struct task_struct *pct_pick_locked(struct task_struct *self)
{
	struct task_struct *t, *best = NULL;

	sim_assert_sched_held();
	pct_decisions++;
	for (int i = 0; i < PCT_MAX_DEPTH; i++)
		if (pct_change[i] == pct_decisions && self)
			*prio_of(self) = i + 1;
	/* Spinning, or running a whole slice while others wait: yield. */
	if (self && self == pct_last && ++pct_run >= PCT_SLICE)
		pct_run = 0;
	else if (self != pct_last)
		pct_run = 1;
	if (self && self->state == TS_RUNNING &&
	    (self->relax_streak > 0 || (pct_run == 0 && self == pct_last))) {
		long low = *prio_of(self);

		list_for_each_entry(t, &S.tasks, all_node)
			if (*prio_of(t) < low)
				low = *prio_of(t);
		*prio_of(self) = low - 1;
	}
	list_for_each_entry(t, &S.tasks, all_node)
		if (t->state == TS_RUNNING && (!best || *prio_of(t) > *prio_of(best)))
			best = t;
	pct_last = best;
	return best;
}

/* ---- exhaustive --------------------------------------------------------- */

#define EX_MAX 65536

struct ex_decision {
	unsigned short chosen, n;
	bool preempt;               /* choice != 0 while the running task could go on */
};

static struct ex_decision ex_log[EX_MAX];
static int ex_len;              /* decisions made in this run */
static unsigned short ex_prefix[EX_MAX];
static int ex_prefix_len;
static bool ex_overflow;

/* Choices at a decision: self first if runnable, then the others in pid order. */
static struct task_struct *ex_pick_locked(struct task_struct *self)
{
	struct task_struct *cand[PCT_MAX_TASKS], *t;
	int n = 0;
	bool self_runs = self && self->state == TS_RUNNING;
	/* A task spinning in cpu_relax() yields: the others come first, and
	 * switching away from it is no preemption. */
	bool spins = self_runs && self->relax_streak > 0;

	sim_assert_sched_held();
	if (self_runs && !spins)
		cand[n++] = self;
	list_for_each_entry(t, &S.tasks, all_node)
		if (t->state == TS_RUNNING && t != self && n < PCT_MAX_TASKS)
			cand[n++] = t;
	if (spins)
		cand[n++] = self;
	if (!n)
		return NULL;
	int c = 0;

	if (ex_len < ex_prefix_len)
		c = ex_prefix[ex_len] < n ? ex_prefix[ex_len] : 0;
	if (spins)
		c = 0;  /* a spinner yields to the next task: no branch here */
	if (ex_len < EX_MAX) {
		ex_log[ex_len].chosen = (unsigned short)c;
		ex_log[ex_len].n = (unsigned short)(spins ? 1 : n);
		ex_log[ex_len].preempt = self_runs && !spins;
		ex_len++;
	} else {
		ex_overflow = true;
	}
	return cand[c];
}

/*
 * A choice that is not a task (which of a CPU's buffered stores drain when
 * it is switched out): one more decision of the exhaustive explorer, 0 ..
 * @n-1, never a preemption. -1 when the explorer is not running: the
 * caller draws from the seed.
 */
int explore_choose_locked(int n)
{
	int c = 0;

	sim_assert_sched_held();
	if (!S.det || S.cfg.sched != SIM_SCHED_EXHAUSTIVE || n < 2)
		return -1;
	if (ex_len < ex_prefix_len)
		c = ex_prefix[ex_len] < n ? ex_prefix[ex_len] : 0;
	if (ex_len < EX_MAX) {
		ex_log[ex_len].chosen = (unsigned short)c;
		ex_log[ex_len].n = (unsigned short)n;
		ex_log[ex_len].preempt = false;
		ex_len++;
	} else {
		ex_overflow = true;
	}
	return c;
}

/* The replay form of the current prefix: "i:c,i:c" of the non-zero choices. */
static char ex_replay[4096];

static void ex_format_prefix(void)
{
	size_t o = 0;

	ex_replay[0] = 0;
	for (int i = 0; i < ex_prefix_len && o + 32 < sizeof(ex_replay); i++)
		if (ex_prefix[i])
			o += (size_t)snprintf(ex_replay + o, sizeof(ex_replay) - o, "%s%d:%d",
					      o ? "," : "", i, ex_prefix[i]);
}

static void ex_parse_prefix(const char *s)
{
	ex_prefix_len = 0;
	memset(ex_prefix, 0, sizeof(ex_prefix));
	while (s && *s) {
		char *end;
		long i = strtol(s, &end, 10);

		if (*end != ':' || i < 0 || i >= EX_MAX)
			break;
		long c = strtol(end + 1, &end, 10);

		ex_prefix[i] = (unsigned short)c;
		if (i + 1 > ex_prefix_len)
			ex_prefix_len = (int)i + 1;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
}

/* ---- the hooks sched.c calls -------------------------------------------- */

bool explore_active(void)
{
	return S.det && S.cfg.sched != SIM_SCHED_RANDOM;
}

struct task_struct *explore_pick_locked(void)
{
	struct task_struct *self = sim_current;

	sim_assert_sched_held();
	if (S.cfg.sched == SIM_SCHED_PCT)
		return pct_pick_locked(self);
	if (S.cfg.sched == SIM_SCHED_EXHAUSTIVE)
		return ex_pick_locked(self);
	return NULL;
}

void explore_boot_locked(void)
{
	sim_assert_sched_held();
	if (S.cfg.sched == SIM_SCHED_PCT)
		pct_boot_locked();
	ex_len = 0;
	ex_overflow = false;
}

const char *explore_replay_env(void)
{
	static char buf[4200];

	if (!S.ever_booted || S.cfg.mode != SIM_DETERMINISTIC)
		return "";
	if (S.cfg.sched == SIM_SCHED_PCT) {
		snprintf(buf, sizeof(buf), "WORKBOOK_SCHED=pct WORKBOOK_PCT_DEPTH=%d "
			 "WORKBOOK_PCT_STEPS=%ld ", S.cfg.pct_depth, S.cfg.pct_steps);
		return buf;
	}
	if (S.cfg.sched == SIM_SCHED_EXHAUSTIVE) {
		ex_format_prefix();
		snprintf(buf, sizeof(buf), "WORKBOOK_SCHEDULE='%s' ", ex_replay);
		return buf;
	}
	return "";
}

/* ---- sim_run_exhaustive() ----------------------------------------------- */

/* The next choice list depth-first within @bound preemptions, or false. */
static bool ex_next_prefix(int bound)
{
	int pre[EX_MAX + 1];

	pre[0] = 0;
	for (int i = 0; i < ex_len; i++)
		pre[i + 1] = pre[i] + (ex_log[i].preempt && ex_log[i].chosen ? 1 : 0);
	for (int i = ex_len - 1; i >= 0; i--) {
		int c = ex_log[i].chosen + 1;

		if (c >= ex_log[i].n)
			continue;
		if (pre[i] + (ex_log[i].preempt ? 1 : 0) > bound)
			continue;
		for (int j = 0; j < i; j++)
			ex_prefix[j] = ex_log[j].chosen;
		ex_prefix[i] = (unsigned short)c;
		ex_prefix_len = i + 1;
		return true;
	}
	return false;
}

long sim_run_exhaustive(const struct sim_config *base, sim_scenario_fn fn, void *arg,
			int preemption_bound)
{
	const char *one = getenv("WORKBOOK_SCHEDULE");
	long runs = 0, cap = 20000;
	const char *capenv = getenv("WORKBOOK_EXHAUSTIVE_MAX");

	if (capenv && atol(capenv) > 0)
		cap = atol(capenv);
	ex_parse_prefix(one);
	for (;;) {
		struct sim_config cfg = *base;

		cfg.mode = SIM_DETERMINISTIC;
		cfg.sched = SIM_SCHED_EXHAUSTIVE;
		sim_boot(&cfg);
		fn(arg);
		long leaks = sim_halt();

		runs++;
		ex_format_prefix();
		cr_assert(leaks == 0, "schedule '%s': %ld kmalloc()ed object(s) never kfree()d",
			  ex_replay, leaks);
		if (one || !ex_next_prefix(preemption_bound) || runs >= cap)
			break;
	}
	fprintf(stderr, "exhaustive: %ld interleaving(s) visited within %d preemption(s)%s\n",
		runs, preemption_bound,
		one ? " (one replayed)" : runs >= cap ? " (stopped at WORKBOOK_EXHAUSTIVE_MAX)" : "");
	return runs;
}

/* ---- hung tasks --------------------------------------------------------- */

/* An uninterruptible wait: not a wait_event(), sleep or idle, not a test's hold. */
static bool waits_for_good(const struct task_struct *t)
{
	return t->state == TS_BLOCKED && !t->wakeable && !t->is_idle && !t->held_at &&
	       t != S.quiescer && !t->on_runq;
}

/* The kthread that @t waits for in kthread_stop(), if that is its wait. */
static struct task_struct *stopping_for_locked(const struct task_struct *t)
{
	struct task_struct *k;

	sim_assert_sched_held();
	list_for_each_entry(k, &S.tasks, all_node)
		if (k->stopper == t && !k->exited)
			return k;
	return NULL;
}

/* Where @t polls: its cpu_relax() call, unless a module's (its name may be gone). */
static const char *poll_file(const struct task_struct *t)
{
	return t->relax_file && !module_range_may_hold(t->relax_file) ? t->relax_file : NULL;
}

/*
 * The running task that has polled the longest, if one polls in code under
 * test. A test's own loop that polls (a reader that waits for the writer it
 * races with) is how the test waits, not the cause: it is left out, judged
 * by where its cpu_relax() is, not by its last access (which may be in the
 * student's rcu_read_unlock() it calls between two polls).
 */
static struct task_struct *poller_locked(void)
{
	struct task_struct *k, *best = NULL;

	sim_assert_sched_held();
	list_for_each_entry(k, &S.tasks, all_node)
		if (k->state == TS_RUNNING && !k->is_idle &&
		    k->relax_since_block > POLLER_RELAXES &&
		    !(poll_file(k) && (strstr(poll_file(k), "/tests/") ||
				       strstr(poll_file(k), "/testlib"))) &&
		    (!best || k->relax_since_block > best->relax_since_block))
			best = k;
	return best;
}

/*
 * Last seen in the code under test: not a test's own loop (which may hold
 * its CPU on purpose), nor the kernel's, which cannot tell whose loop
 * called it (in parallel mode a reader's last point is often
 * rcu_read_lock()'s own: no report is better than a wrong one).
 */
static bool in_code_under_test(const struct task_struct *t)
{
	return t->file && !module_range_may_hold(t->file) && !strstr(t->file, "/tests/") &&
	       !strstr(t->file, "/testlib") && !strstr(t->file, "/common/src/");
}

/* @t has neither slept nor yielded for at least half the hung-task time. */
static bool holds_long(const struct task_struct *t, long now_ms)
{
	return S.det ? S.steps - t->blocked_step > S.cfg.hung_steps / 2
		     : now_ms - t->blocked_ms > S.cfg.hung_ms / 2;
}

/*
 * A CPU hog behind a hang: a task of the code under test has held its CPU
 * without sleeping or yielding for at least half the hung-task time, while
 * that CPU is needed: a task waits in its run queue, or a grace period
 * waits for its quiescent state (any context switch there would have been
 * one). The hog, or NULL; *victim is who waits for its CPU.
 */
static struct task_struct *hog_locked(long now_ms, struct task_struct **victim)
{
	struct task_struct *w;

	sim_assert_sched_held();
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct sim_cpu *c = cpu_of(cpu);
		struct task_struct *h = c->curr;

		if (!h || h->is_idle || h->held_at || h->state != TS_RUNNING ||
		    !in_code_under_test(h) || !holds_long(h, now_ms))
			continue;
		if (!list_empty(&c->runq)) {
			*victim = list_first_entry(&c->runq, struct task_struct, runq_node);
			return h;
		}
		list_for_each_entry(w, &cpu_qs_wq.waiters, wait_node)
			if (atomic_load(&c->qs) == w->qs_seen[cpu]) {
				*victim = w;
				return h;
			}
	}
	return NULL;
}

/*
 * A task blocked for good. When a task polls meanwhile (a wait written as a
 * cpu_relax() loop), the poller is the likeliest cause, the kthread that
 * kthread_stop() waits for included: it holds its CPU, so whatever it waits
 * for and whatever needs that CPU may never come. The report stands at its
 * loop. Else, when the blocked task waits in kthread_stop(), the task at
 * fault is the kthread that does not return: the report stands at that
 * kthread's last scheduling point, not at the kthread_stop() call.
 */
static void hung_report_locked(struct task_struct *t, const char *how, long now_ms)
{
	struct task_struct *k = stopping_for_locked(t), *p = poller_locked(), *w = NULL;
	struct task_struct *h = p ? NULL : hog_locked(now_ms, &w);

	/* the kthread kthread_stop() waits for, itself the hog: its loop does
	 * not end at kthread_should_stop(), which says more */
	if (h == k)
		h = NULL;

	sim_assert_sched_held();
	if (p)
		sim_bug_locked(poll_file(p) ? poll_file(p) : p->file ? p->file : "?",
			       poll_file(p) ? p->relax_line : p->line,
			       "hung task: %s (pid %d) blocked in %s %s while %s (pid %d) polled: "
			       "%ld cpu_relax() calls on CPU %d without sleeping once. A task that "
			       "waits by polling keeps its CPU, so what needs that CPU (and what "
			       "waits for the system to go idle) never runs: wait by sleeping "
			       "(wait_for_completion(), wait_event())",
			       t->comm, t->pid, t->blocked_on ? t->blocked_on : "?", how,
			       p->comm, p->pid, p->relax_since_block, p->cpu);

	if (h)
		sim_bug_locked(h->file, h->line,
			       "hung task: %s (pid %d) blocked in %s %s, behind CPU %d: %s (pid %d) "
			       "has held it without sleeping or cond_resched() for %ld %s, while "
			       "%s (pid %d) %s. In a non-preemptible kernel a task gives up its "
			       "CPU only by sleeping or yielding: a loop without either starves "
			       "that CPU's other tasks and holds up every grace period",
			       t->comm, t->pid, t->blocked_on ? t->blocked_on : "?", how, h->cpu,
			       h->comm, h->pid, S.det ? S.steps - h->blocked_step :
			       now_ms - h->blocked_ms, S.det ? "scheduling steps" : "ms", w->comm,
			       w->pid, w->on_runq ? "waits in its run queue" :
			       "waits for a grace period that needs that CPU's quiescent state");
	if (k)
		sim_bug_locked(k->file ? k->file : "?", k->line,
			       "hung task: %s (pid %d) waited in kthread_stop(%s) %s: %s has not "
			       "returned from its thread function since kthread_should_stop() "
			       "became true; it is still %s%s (a loop that does not end when "
			       "kthread_should_stop(), or a wait that never ends, here)",
			       t->comm, t->pid, k->comm, how, k->comm,
			       k->state == TS_BLOCKED ? "asleep in " : "running",
			       k->state == TS_BLOCKED && k->blocked_on ? k->blocked_on : "");
	sim_bug_locked(t->file ? t->file : "?", t->line,
		       "hung task: %s (pid %d) blocked in %s %s while the other tasks ran",
		       t->comm, t->pid, t->blocked_on ? t->blocked_on : "?", how);
}

void explore_note_block_locked(struct task_struct *t)
{
	struct timespec ts;

	sim_assert_sched_held();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->blocked_step = S.steps;
	t->blocked_ms = ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Deterministic mode, every few thousand steps: steps are the clock. */
void explore_hung_check_locked(void)
{
	struct task_struct *t;

	sim_assert_sched_held();
	if (S.cfg.hung_steps <= 0 || (S.steps & 4095))
		return;
	list_for_each_entry(t, &S.tasks, all_node)
		if (waits_for_good(t) && S.steps - t->blocked_step > S.cfg.hung_steps) {
			char how[64];

			snprintf(how, sizeof(how), "for %ld scheduling steps",
				 S.steps - t->blocked_step);
			hung_report_locked(t, how, 0);
		}
}

/*
 * The real-time watchdog's tick (every 100 ms, S.lock held): in parallel
 * mode, a task blocked for good for hung_ms while the others run, and
 * virtual time that moves with real time while CPUs are busy (so msleep()
 * returns under load).
 */
void explore_watchdog_tick_locked(int ms)
{
	struct task_struct *t;
	struct timespec ts;

	sim_assert_sched_held();
	if (S.det || !S.booted)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long now = ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;

	if (S.cfg.hung_ms > 0)
		list_for_each_entry(t, &S.tasks, all_node)
			if (waits_for_good(t) && S.nr_running > 0 &&
			    now - t->blocked_ms > S.cfg.hung_ms) {
				char how[64];

				snprintf(how, sizeof(how), "for %ld ms", now - t->blocked_ms);
				hung_report_locked(t, how, now);
			}
	unsigned long exp;

	if (S.nr_running > 0 && S.cfg.auto_time && timers_next_locked(&exp)) {
		S.now_jiffies += (unsigned long)ms;
		timers_fire_due_locked();
	}
}
