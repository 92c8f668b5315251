/*
 * torture_ops.h - what the student's torture test (torture.c) and the
 * workbook's checks share: the RCU under test as an ops table (rcutorture's
 * struct rcu_torture_ops and its cur_ops), the run's parameters and what the
 * run reports.
 *
 * Rule kept here: the torture reaches the RCU only through the ops table, so
 * that the same torture runs on the reference RCU and on broken ones; and it
 * reports what it saw in struct torture_result, never by failing itself.
 */
#ifndef TORTURE_OPS_H
#define TORTURE_OPS_H

#include <stdbool.h>
#include <linux/types.h>

/* Ages 0 .. TORTURE_PIPE_LEN-1 are counted as they are; older ones in the last slot. */
#define TORTURE_PIPE_LEN 4

/* The RCU flavour under test (rcutorture's struct rcu_torture_ops). */
struct rcu_torture_ops {
	const char *name;
	void (*readlock)(void);
	void (*readunlock)(void);
	/* Called inside a read-side section: a reader that lingers (may be a no-op). */
	void (*read_delay)(void);
	/* Wait for a grace period (synchronize_rcu()). */
	void (*sync)(void);
	/* Queue a callback for after a grace period (call_rcu()). */
	void (*call)(struct rcu_head *head, rcu_callback_t func);
	/* Wait for every callback queued before it (rcu_barrier()). */
	void (*cb_barrier)(void);
	/* Start and stop the callback machinery (the check calls these around the run). */
	void (*cb_init)(void);
	void (*cb_exit)(void);
};

/*
 * RCU_TORTURE_OPS() - the ops table of the RCU whose primitives go by the
 * kernel's own names (the workbook's reference, or Linux's own in a real
 * run), named "rcu": @read_delay lingers in a reader, @cb_init and @cb_exit
 * start and stop its callbacks.
 */
#define RCU_TORTURE_OPS(read_delay_fn, cb_init_fn, cb_exit_fn)                  \
	{                                                                     \
		.name = "rcu", .readlock = rcu_read_lock,                     \
		.readunlock = rcu_read_unlock, .read_delay = (read_delay_fn), \
		.sync = synchronize_rcu, .call = call_rcu,                    \
		.cb_barrier = rcu_barrier, .cb_init = (cb_init_fn),           \
		.cb_exit = (cb_exit_fn),                                      \
	}

/* How long and how hard to torture. Counts, never time. */
struct torture_params {
	int n_updates;      /* elements the writer replaces, then it stops */
	int n_fakewriters;  /* kthreads that only wait for grace periods */
	bool use_call;      /* retire every other element through ops->call */
	int n_barrier_rounds; /* rounds of the barrier check (one callback per CPU, then barrier) */
};

/* What one run saw. The torture fills it; the checks read it. */
struct torture_result {
	bool ran;                          /* the torture really ran (set at its start) */
	long reads;                        /* read-side sections that saw an element */
	long pipe[TORTURE_PIPE_LEN + 1];   /* rcutorture's "Reader Pipe": reads per age seen */
	long updates;                      /* elements the writer replaced */
	long grace_periods;                /* ops->sync() calls that returned, fake writers' included */
	long callbacks;                    /* torture callbacks invoked */
	long barrier_rounds;               /* barrier checks done */
	long age_errors;                   /* reads that saw an age >= 2 */
	long free_errors;                  /* reads that saw a freed (poisoned) element */
	long barrier_errors;               /* barriers that returned before their callbacks had run */
	bool success;                      /* SUCCESS: no error of any kind */
};

/*
 * rcu_torture_run() - the student's torture (torture.c): run it on @ops with
 * @p, fill @res (zeroed by the caller). Called in a task on CPU 0 after
 * ops->cb_init(); must stop every kthread it started and leave no callback
 * queued and no element allocated when it returns. Returns 0.
 */
int rcu_torture_run(const struct rcu_torture_ops *ops, const struct torture_params *p,
		    struct torture_result *res);

/* The reference flavour: labs 1 and 4's RCU (torture_check.c). */
extern const struct rcu_torture_ops rcu_ops;

/*
 * A broken flavour, stated as the reference "except" what it breaks:
 * @except sets its name and only the members it changes (see
 * torture_flavour()); @bug says in words what is broken, for the failure
 * message of a torture that misses it.
 */
struct broken_flavour {
	struct rcu_torture_ops except;
	const char *bug;
};

/*
 * torture_flavour() - the whole ops table of a broken flavour, as the
 * torture sees it: every member that @except leaves NULL is the
 * reference's (rcu_ops), but a NULL cb_exit is torture_ref_cb_exit(),
 * which first lets every queued callback run, so that a flavour that
 * delays or loses callbacks leaks nothing by itself.
 */
struct rcu_torture_ops torture_flavour(const struct rcu_torture_ops *except);

/* The parameters the checks use. */
struct torture_params torture_default_params(void);

/* Errors of every kind in @res. */
long torture_errors(const struct torture_result *res);

/*
 * torture_expect_clean() - run the torture on @ops in deterministic mode,
 * once per seed: every run must really run and report no error.
 * torture_expect_clean_parallel() - the same on real threads, a few runs.
 */
void torture_expect_clean(const struct rcu_torture_ops *ops);
void torture_expect_clean_parallel(const struct rcu_torture_ops *ops);

/*
 * torture_expect_caught() - run the torture on the broken flavour @f in
 * deterministic mode: every seed's run must report an error.
 * torture_expect_caught_parallel() - on real threads: an error within a few
 * longer runs.
 * torture_expect_caught_at_cleanup() - as torture_expect_caught(), with no
 * barrier rounds: only the cleanup's last look at what is still in flight
 * can see the bug, and the report must not say SUCCESS after it.
 */
void torture_expect_caught(const struct broken_flavour *f);
void torture_expect_caught_parallel(const struct broken_flavour *f);
void torture_expect_caught_at_cleanup(const struct broken_flavour *f);

/*
 * TORTURE_CATCHES() - declare the test @suite/@name: the torture must
 * catch the broken flavour @name##_flavour (a struct broken_flavour defined
 * before it) on every seed, in deterministic mode. @what ends the test's
 * description, "the torture catches <what>".
 */
#define TORTURE_CATCHES(suite, name, what)                                    \
	SIM_TEST(suite, name, .timeout = 120,                                 \
		 .description = "the torture catches " what)                  \
	{                                                                     \
		torture_expect_caught(&name##_flavour);                       \
	}

/* The reference's cb_exit for a broken flavour: every queued callback runs
 * first (a flavour that names its own cb_exit calls it last). */
void torture_ref_cb_exit(void);

/* For a flavour that holds callbacks back: hand the list from @first on
 * (linked by ->next, each with its ->func) to the reference's call_rcu(),
 * in list order. */
void torture_call_rcu_list(struct rcu_head *first);

#endif
