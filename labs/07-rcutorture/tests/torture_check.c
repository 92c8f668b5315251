/*
 * torture_check.c - the workbook's side of lab 7: the reference flavour's
 * ops table, and the checks that run the student's torture on a flavour and
 * judge its report.
 *
 * Rule kept here: the student's torture is judged only by what it reports
 * (struct torture_result) and by the kernel's own end-of-test checks (no
 * leak, no warning): a run on the reference must really run and report no
 * error; a run on a broken flavour must report one. The torture runs in a
 * kthread on CPU 0; counts bound every run, never time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <sim/test.h>
#include "torture_ops.h"

/* Parallel runs a broken flavour gets to show its bug. */
#define PARALLEL_TRIES 4
/* A parallel run is cheap but its windows are narrow: a longer one. */
#define PARALLEL_UPDATES 1000

/* The reference's readers do not linger on purpose: the torture's own do. */
static void ref_read_delay(void)
{
}

void torture_ref_cb_exit(void)
{
	/* a torture callback re-queues itself up to TORTURE_PIPE_LEN times */
	for (int i = 0; i <= TORTURE_PIPE_LEN; i++)
		rcu_barrier();
	rcu_callbacks_exit();
}

void torture_call_rcu_list(struct rcu_head *first)
{
	while (first) {
		struct rcu_head *next = first->next;

		call_rcu(first, first->func);
		first = next;
	}
}

/* cb_exit is the reference's own: a torture that leaves a callback queued leaks. */
const struct rcu_torture_ops rcu_ops =
	RCU_TORTURE_OPS(ref_read_delay, rcu_callbacks_init, rcu_callbacks_exit);

/* @member of @except, or the reference's when @except leaves it NULL. */
#define EXCEPT_OR_REF(except, member) ((except)->member ? (except)->member : rcu_ops.member)

struct rcu_torture_ops torture_flavour(const struct rcu_torture_ops *except)
{
	return (struct rcu_torture_ops){
		.name = except->name,
		.readlock = EXCEPT_OR_REF(except, readlock),
		.readunlock = EXCEPT_OR_REF(except, readunlock),
		.read_delay = EXCEPT_OR_REF(except, read_delay),
		.sync = EXCEPT_OR_REF(except, sync),
		.call = EXCEPT_OR_REF(except, call),
		.cb_barrier = EXCEPT_OR_REF(except, cb_barrier),
		.cb_init = EXCEPT_OR_REF(except, cb_init),
		.cb_exit = except->cb_exit ? except->cb_exit : torture_ref_cb_exit,
	};
}

struct torture_params torture_default_params(void)
{
	return (struct torture_params){
		.n_updates = 200,
		.n_fakewriters = 1,
		.use_call = true,
		.n_barrier_rounds = 16,
	};
}

long torture_errors(const struct torture_result *res)
{
	return res->age_errors + res->free_errors + res->barrier_errors;
}

struct torture_job {
	struct rcu_torture_ops ops;
	struct torture_params p;
	struct torture_result res;
};

static int torture_main(void *arg)
{
	struct torture_job *j = arg;

	j->ops.cb_init();
	rcu_torture_run(&j->ops, &j->p, &j->res);
	j->ops.cb_exit();
	return 0;
}

/* The flavour's ops->sync(), counted by run_once(): what res->grace_periods
 * must say (checked by clean_scenario()).
 * Counted with the compiler's atomic, not the kernel's atomic_inc(): the
 * count must not add a scheduling point, or the run's schedule would differ
 * from what the flavours' tests were written against. */
static void (*flavour_sync)(void);
static long syncs_returned;

static void counted_sync(void)
{
	flavour_sync();
	__atomic_fetch_add(&syncs_returned, 1, __ATOMIC_RELAXED);
}

/* One booted run: the flavour's callbacks around the student's torture. */
static void run_once(struct torture_job *j)
{
	struct task_struct *k;

	j->res = (struct torture_result){ 0 };
	flavour_sync = j->ops.sync;
	j->ops.sync = counted_sync;
	__atomic_store_n(&syncs_returned, 0, __ATOMIC_RELAXED);
	k = kthread_run_on_cpu(torture_main, j, 0, "torture");
	kthread_stop(k);
	j->ops.sync = flavour_sync;
	cr_assert_eq(kmem_live_objects(), 0,
		     "%s: %ld object(s) still allocated after rcu_torture_run() returned: "
		     "elements left on the pipe or as the current one, or held by callbacks "
		     "still queued or re-posting (the cleanup sets fullstop, stops every "
		     "kthread, then waits with ops->cb_barrier(); TODOs 3, 6)",
		     j->ops.name, kmem_live_objects());
}

static void assert_really_ran(const struct torture_job *j, const char *how)
{
	const struct torture_result *r = &j->res;
	long sum = 0;

	if (getenv("TORTURE_DEBUG"))
		fprintf(stderr, "%s %s: reads %ld pipe %ld %ld %ld %ld %ld upd %ld gp %ld cb %ld "
			"br %ld err %ld/%ld/%ld\n", j->ops.name, how, r->reads, r->pipe[0],
			r->pipe[1], r->pipe[2], r->pipe[3], r->pipe[4], r->updates,
			r->grace_periods, r->callbacks, r->barrier_rounds, r->age_errors,
			r->free_errors, r->barrier_errors);

	cr_assert(r->ran, "%s (%s): rcu_torture_run() did not run (res->ran is false: TODO 6)",
		  j->ops.name, how);
	cr_assert_eq(r->updates, j->p.n_updates,
		     "%s (%s): the writer replaced %ld elements, not the %d asked (TODO 2)",
		     j->ops.name, how, r->updates, j->p.n_updates);
	cr_assert_gt(r->reads, 0, "%s (%s): no reader saw an element (TODO 1)", j->ops.name, how);
	cr_assert_gt(r->grace_periods, 0, "%s (%s): no grace period was counted (TODOs 2, 4)",
		     j->ops.name, how);
	cr_assert_gt(r->callbacks, 0, "%s (%s): no torture callback was counted (TODO 3)",
		     j->ops.name, how);
	cr_assert_eq(r->barrier_rounds, j->p.n_barrier_rounds,
		     "%s (%s): %ld barrier rounds, not the %d asked (TODO 5)",
		     j->ops.name, how, r->barrier_rounds, j->p.n_barrier_rounds);
	for (int i = 0; i <= TORTURE_PIPE_LEN; i++)
		sum += r->pipe[i];
	cr_assert_eq(sum, r->reads, "%s (%s): the Reader Pipe histogram holds %ld reads, not "
		     "the %ld counted (TODO 1)", j->ops.name, how, sum, r->reads);
}

static void clean_scenario(void *arg)
{
	struct torture_job *j = arg;
	const struct torture_result *r = &j->res;

	run_once(j);
	assert_really_ran(j, "deterministic");
	/* Checked here alone: a count is worth this test's points, not the lab's. */
	cr_assert_eq(r->grace_periods, syncs_returned,
		     "%s: the report counts %ld grace periods, but ops->sync() returned %ld "
		     "times: each return counts one, the writer's (TODO 2) and every fake "
		     "writer's (TODO 4), read once every kthread has stopped (TODO 6)",
		     j->ops.name, r->grace_periods, syncs_returned);
	cr_assert_eq(torture_errors(r), 0,
		     "false alarm on the reference RCU: %ld age, %ld freed-element, %ld barrier "
		     "error(s); Reader Pipe %ld %ld %ld %ld %ld. An age >= 2 on a correct RCU "
		     "means the torture ages an element before its grace period, or frees one "
		     "itself (TODOs 2, 3); a freed element, that it frees one itself, or that a "
		     "reader got an element before its magic number was visible: is the element "
		     "filled in first and then published with rcu_assign_pointer() (TODO 2)? A "
		     "barrier error, that it counts callbacks before the barrier (TODO 5)",
		     r->age_errors, r->free_errors, r->barrier_errors,
		     r->pipe[0], r->pipe[1], r->pipe[2], r->pipe[3], r->pipe[4]);
	cr_assert(r->success, "%s: no error, yet the torture did not report SUCCESS (TODO 6)",
		  j->ops.name);
}

void torture_expect_clean(const struct rcu_torture_ops *ops)
{
	static struct torture_job j;
	struct sim_config cfg = sim_default_config();

	j = (struct torture_job){ .ops = *ops, .p = torture_default_params() };
	cfg.mode = SIM_DETERMINISTIC;
	sim_run_seeds(&cfg, clean_scenario, &j);
}

void torture_expect_clean_parallel(const struct rcu_torture_ops *ops)
{
	static struct torture_job j;
	struct sim_config cfg = sim_default_config();

	j = (struct torture_job){ .ops = *ops, .p = torture_default_params() };
	cfg.mode = SIM_PARALLEL;
	for (int i = 0; i < PARALLEL_TRIES; i++) {
		sim_boot(&cfg);
		run_once(&j);
		sim_halt();
		assert_really_ran(&j, "parallel");
		cr_assert_eq(torture_errors(&j.res), 0,
			     "false alarm on the reference RCU in parallel run %d: %ld age, %ld "
			     "freed-element, %ld barrier error(s) (TODOs 2, 3, 5)", i + 1,
			     j.res.age_errors, j.res.free_errors, j.res.barrier_errors);
	}
}

struct caught_job {
	struct torture_job j;
	const char *bug;
};

/* A run of the broken flavour @f: the reference, completed by torture_flavour(). */
static struct caught_job caught_job(const struct broken_flavour *f)
{
	return (struct caught_job){
		.j = { .ops = torture_flavour(&f->except), .p = torture_default_params() },
		.bug = f->bug,
	};
}

static void caught_scenario(void *arg)
{
	struct caught_job *c = arg;

	run_once(&c->j);
	assert_really_ran(&c->j, "caught?");
	cr_assert(c->j.res.ran, "%s: rcu_torture_run() did not run (res->ran is false: TODO 6)",
		  c->j.ops.name);
	cr_assert_gt(torture_errors(&c->j.res), 0,
		     "the torture missed a broken RCU (%s: %s) in a deterministic run: "
		     "%ld reads, %ld updates, %ld grace periods, %ld callbacks, %ld barrier "
		     "rounds, and no error; Reader Pipe %ld %ld %ld %ld %ld",
		     c->j.ops.name, c->bug, c->j.res.reads, c->j.res.updates,
		     c->j.res.grace_periods, c->j.res.callbacks, c->j.res.barrier_rounds,
		     c->j.res.pipe[0], c->j.res.pipe[1], c->j.res.pipe[2], c->j.res.pipe[3],
		     c->j.res.pipe[4]);
	cr_assert(!c->j.res.success, "%s: errors were counted, yet the torture reported "
		  "SUCCESS (TODO 6%s)", c->j.ops.name, c->j.p.n_barrier_rounds ? "" :
		  ": with no barrier rounds, only the cleanup's last look at the callbacks "
		  "still in flight counts the error; SUCCESS is decided after it");
}

static void exercise_scenario(void *arg)
{
	struct caught_job *c = arg;

	run_once(&c->j);
	cr_assert(c->j.res.ran, "%s: rcu_torture_run() did not run (res->ran is false: TODO 6)",
		  c->j.ops.name);
}

static void expect_caught(const struct broken_flavour *f, int barrier_rounds)
{
	static struct caught_job c;
	struct sim_config cfg = sim_default_config();

	c = caught_job(f);
	if (barrier_rounds >= 0)
		c.j.p.n_barrier_rounds = barrier_rounds;
	cfg.mode = SIM_DETERMINISTIC;
	/*
	 * "Caught on every seed" is a promise about the default scheduler,
	 * which switches tasks at a student access with probability 1/2. PCT
	 * (WORKBOOK_SCHED=pct) runs one task for long stretches on purpose and
	 * promises a depth-d bug only with probability 1/(n k^(d-1)) a run: a
	 * torture's reader may not overlap a broken grace period in a given seed.
	 */
	cfg.sched = SIM_SCHED_RANDOM;
	/*
	 * Without the access-level scheduler (a build without KCSAN's
	 * instrumentation: the asan and tsan checker presets) the deterministic
	 * kernel switches tasks only at scheduling points, so a reader's
	 * section runs in one piece and no grace period can end inside it;
	 * real threads without the instrumentation's slowness give a window of
	 * nanoseconds. There the run only exercises the code for the checker;
	 * catching is judged on the instrumented build (the default and the
	 * grader's).
	 */
	if (!sim_kcsan_enabled()) {
		sim_run_seeds(&cfg, exercise_scenario, &c);
		return;
	}
	sim_run_seeds(&cfg, caught_scenario, &c);
}

void torture_expect_caught(const struct broken_flavour *f)
{
	expect_caught(f, -1);
}

void torture_expect_caught_at_cleanup(const struct broken_flavour *f)
{
	expect_caught(f, 0);
}

void torture_expect_caught_parallel(const struct broken_flavour *f)
{
	static struct caught_job c;
	struct sim_config cfg = sim_default_config();
	int tries = 0;

	c = caught_job(f);
	c.j.p.n_updates = PARALLEL_UPDATES;
	cfg.mode = SIM_PARALLEL;
	do {
		sim_boot(&cfg);
		run_once(&c.j);
		sim_halt();
		if (getenv("TORTURE_DEBUG"))
			assert_really_ran(&c.j, "parallel caught?");
	} while (torture_errors(&c.j.res) == 0 && ++tries < PARALLEL_TRIES);
	cr_assert(c.j.res.ran, "%s: rcu_torture_run() did not run (res->ran is false: TODO 6)",
		  c.j.ops.name);
	cr_assert_gt(torture_errors(&c.j.res), 0,
		     "the torture missed a broken RCU (%s: %s) in %d parallel runs: %ld reads, "
		     "%ld grace periods, %ld callbacks, %ld barrier rounds, no error", c.j.ops.name,
		     c.bug, PARALLEL_TRIES, c.j.res.reads, c.j.res.grace_periods, c.j.res.callbacks,
		     c.j.res.barrier_rounds);
}

SIM_TEST(reference, no_false_alarm, .timeout = 120,
	 .description = "the torture on the reference RCU really runs and reports no error")
{
	torture_expect_clean(&rcu_ops);
}

SIM_TEST(reference, parallel_no_false_alarm, .timeout = 120,
	 .description = "the same on real threads")
{
	torture_expect_clean_parallel(&rcu_ops);
}

/*
 * A lazy RCU (Linux has lazy callbacks too: call_rcu() on a quiet system
 * may wait for a batch): callbacks wait on a list of the flavour's own
 * until LAZY_BATCH of them are there or someone calls the barrier, which
 * hands them to call_rcu() and then waits for them. A correct RCU: every
 * callback runs after a grace period, and the barrier waits for every one
 * queued before it. But only a barrier makes a callback run before its
 * batch fills, so callbacks are surely in flight when a torture's cleanup
 * starts, whatever the schedule.
 */
#define LAZY_BATCH 16

static spinlock_t lazy_lock;
static struct rcu_head *lazy_first, **lazy_last;
static int lazy_len;

static void lazy_init(void)
{
	spin_lock_init(&lazy_lock);
	lazy_first = NULL;
	lazy_last = &lazy_first;
	lazy_len = 0;
	rcu_callbacks_init();
}

/* Hand every waiting callback to call_rcu(), oldest first. */
static void lazy_flush(void)
{
	unsigned long flags;
	struct rcu_head *h;

	spin_lock_irqsave(&lazy_lock, flags);
	h = lazy_first;
	lazy_first = NULL;
	lazy_last = &lazy_first;
	lazy_len = 0;
	spin_unlock_irqrestore(&lazy_lock, flags);
	torture_call_rcu_list(h);
}

static void lazy_call(struct rcu_head *head, rcu_callback_t func)
{
	unsigned long flags;
	bool full;

	head->func = func;
	head->next = NULL;
	spin_lock_irqsave(&lazy_lock, flags);
	*lazy_last = head;
	lazy_last = &head->next;
	full = ++lazy_len >= LAZY_BATCH;
	spin_unlock_irqrestore(&lazy_lock, flags);
	if (full)
		lazy_flush();
}

static void lazy_barrier(void)
{
	lazy_flush();
	rcu_barrier();
}

/* The reference but for its callbacks (torture_flavour() completes it). */
static const struct rcu_torture_ops lazy_except = {
	.name = "rcu_lazy",
	.call = lazy_call,
	.cb_barrier = lazy_barrier,
	.cb_init = lazy_init,
	/* only stops the kthread: whatever is still queued or waiting leaks */
	.cb_exit = rcu_callbacks_exit,
};

/*
 * The cleanup's own lesson, on the lazy RCU: the writer's last elements
 * are still waiting in their callbacks when the cleanup starts. A torture
 * that stops what posts (fullstop, then every kthread) and then waits
 * (ops->cb_barrier(), twice: lab 3's Quick Quiz 3.10) returns with nothing
 * queued; one without the barrier, with it before fullstop, or with
 * callbacks that ignore fullstop, returns while they still hold elements
 * (run_once() counts them).
 */
static void in_flight_scenario(void *arg)
{
	struct torture_job *j = arg;

	run_once(j);
	cr_assert(j->res.ran, "rcu_torture_run() did not run (res->ran is false: TODO 6)");
	cr_assert_eq(torture_errors(&j->res), 0,
		     "false alarm on a lazy but correct RCU, whose callbacks run only in batches "
		     "of %d or at a barrier: %ld age, %ld freed-element, %ld barrier error(s) "
		     "(TODOs 3, 5, 6)", LAZY_BATCH, j->res.age_errors, j->res.free_errors,
		     j->res.barrier_errors);
}

SIM_TEST(reference, cleanup_waits_for_callbacks_in_flight, .timeout = 120,
	 .description = "on a lazy RCU, callbacks still waiting when the cleanup starts have "
			"all run when rcu_torture_run() returns")
{
	static struct torture_job j;
	struct sim_config cfg = sim_default_config();

	j = (struct torture_job){ .ops = torture_flavour(&lazy_except),
				  .p = torture_default_params() };
	j.p.n_updates = 40;
	j.p.n_barrier_rounds = 0;      /* no barrier before the cleanup's own */
	cfg.mode = SIM_DETERMINISTIC;
	sim_run_seeds(&cfg, in_flight_scenario, &j);
}
