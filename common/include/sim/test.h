/**
 * @file test.h
 * @brief How the workbook's Criterion tests boot, sweep seeds and end.
 *
 * Rule kept here: a test passes only by reaching its end. SIM_TEST() wraps
 * the body so that it ends with sim_test_end(), which halts the kernel and
 * asserts no leak, no warning and (under Valgrind or LeakSanitizer) no memory
 * error; a test that exits early, or whose tested code calls exit(), fails.
 * On any failure the seed, the command that replays it and the timeline's
 * path are printed.
 * @ingroup control
 */
#ifndef SIM_TEST_H
#define SIM_TEST_H

#ifdef WORKBOOK_SHIM
#include <sim/criterion_shim.h>
#else
#include <criterion/criterion.h>
#endif
#include <sim/sim.h>
#include <sim/trace.h>
#include <linux/bug.h>
#include <linux/kthread.h>

/** @addtogroup control
 * @{ */

/** Seconds a test may run before it is failed as hung (unless it sets .timeout). */
#define SIM_TEST_TIMEOUT 60

#ifndef WORKBOOK_LAB
/** The lab a test binary belongs to (its folder name); CMake sets it. */
#define WORKBOOK_LAB "common"
#endif

/** Names the running test, for the replay command and the timeline's file. */
void sim_test_begin(const char *lab, const char *suite, const char *name);
/** Criterion .init of every SIM_TEST(): resets per-test state. */
void sim_test_setup(void);
/** Criterion .fini of every SIM_TEST(): on failure, prints seed, replay command and timeline. */
void sim_test_teardown(void);
/**
 * sim_test_end() - the last step of every SIM_TEST(): halt the kernel if
 * booted and assert that nothing leaked and no warning or memory error
 * happened. Marks the test as having reached its end.
 */
void sim_test_end(void);

/**
 * SIM_TEST() - declare a test: `SIM_TEST(suite, name, .description = "...") { ... }`.
 * Extra Criterion options (.signal, .timeout, .description) may follow.
 */
#define SIM_TEST(suite, name, ...)                                          \
	static void suite##__##name##__body(void);                           \
	_Pragma("GCC diagnostic push")                                        \
	_Pragma("GCC diagnostic ignored \"-Woverride-init\"")                 \
	Test(suite, name, .init = sim_test_setup, .fini = sim_test_teardown,  \
	     .timeout = SIM_TEST_TIMEOUT, ##__VA_ARGS__)                      \
	{                                                                     \
		sim_test_begin(WORKBOOK_LAB, #suite, #name);                  \
		suite##__##name##__body();                                    \
		sim_test_end();                                               \
	}                                                                     \
	_Pragma("GCC diagnostic pop")                                         \
	static void suite##__##name##__body(void)

#ifndef SIM_NO_RETURN_MARKS
#include <linux/rcupdate.h>
#include <linux/sched.h>
/**
 * sim_synchronize_rcu_marked() - synchronize_rcu(), then a trace mark
 * "synchronize_rcu() returned": in a test's timeline, the moment the call
 * under test returned. Tests get it by calling synchronize_rcu() (a macro
 * here, which test files see and student files do not); define
 * SIM_NO_RETURN_MARKS before including this header to call it unmarked.
 */
static inline void sim_synchronize_rcu_marked(void)
{
	synchronize_rcu();
	trace_mark("synchronize_rcu() returned");
}

/** sim_rcu_barrier_marked() - rcu_barrier(), then the mark "rcu_barrier() returned". */
static inline void sim_rcu_barrier_marked(void)
{
	rcu_barrier();
	trace_mark("rcu_barrier() returned");
}
/** In tests: synchronize_rcu() marks its return on the timeline. */
#define synchronize_rcu() sim_synchronize_rcu_marked()
/** In tests: rcu_barrier() marks its return on the timeline. */
#define rcu_barrier() sim_rcu_barrier_marked()

#include <linux/srcu.h>
/*
 * SRCU readers and grace periods on the timeline (lab 5): the student's
 * srcu.c cannot report them (its counters are all there is), so the tests'
 * own calls do. A reader is drawn from its srcu_read_lock() to its
 * srcu_read_unlock(), wherever it sleeps or migrates between; a grace
 * period from the call of synchronize_srcu() to its return. Grace periods
 * that call_srcu()'s kthreads wait for are student code's own calls: not
 * drawn.
 */
/** sim_srcu_domain() - how a timeline names @p ssp: its name, or "srcu". */
static inline const char *sim_srcu_domain(const struct srcu_struct *ssp)
{
	return ssp->name ? ssp->name : "srcu";
}

/** sim_srcu_read_lock_traced() - srcu_read_lock(), drawn on the timeline. */
static inline int sim_srcu_read_lock_traced(struct srcu_struct *ssp)
{
	int idx = srcu_read_lock(ssp);

	trace_event(TR_SRCU_LOCK, sim_srcu_domain(ssp), idx);
	return idx;
}

/** sim_srcu_read_unlock_traced() - srcu_read_unlock(), drawn on the timeline. */
static inline void sim_srcu_read_unlock_traced(struct srcu_struct *ssp, int idx)
{
	trace_event(TR_SRCU_UNLOCK, sim_srcu_domain(ssp), idx);
	srcu_read_unlock(ssp, idx);
}

/** sim_synchronize_srcu_traced() - synchronize_srcu(), its wait drawn on the timeline. */
static inline void sim_synchronize_srcu_traced(struct srcu_struct *ssp)
{
	trace_event(TR_SRCU_GP_START, sim_srcu_domain(ssp), 0);
	synchronize_srcu(ssp);
	trace_event(TR_SRCU_GP_END, sim_srcu_domain(ssp), 0);
}

/** sim_srcu_barrier_marked() - srcu_barrier(), then the mark "srcu_barrier() returned". */
static inline void sim_srcu_barrier_marked(struct srcu_struct *ssp)
{
	srcu_barrier(ssp);
	trace_mark("srcu_barrier() returned");
}
/** In tests: an SRCU reader is drawn on the timeline. */
#define srcu_read_lock(ssp) sim_srcu_read_lock_traced(ssp)
/** In tests: an SRCU reader ends on the timeline. */
#define srcu_read_unlock(ssp, idx) sim_srcu_read_unlock_traced(ssp, idx)
/** In tests: synchronize_srcu() is drawn as an SRCU grace period. */
#define synchronize_srcu(ssp) sim_synchronize_srcu_traced(ssp)
/** In tests: srcu_barrier() marks its return on the timeline. */
#define srcu_barrier(ssp) sim_srcu_barrier_marked(ssp)
#endif

#include <linux/rcupdate.h>
#include <linux/sched.h>
/**
 * sim_call_rcu_on() - from the test's own task, which holds no CPU between
 * steps: take @p cpu, call_rcu(@p head, @p func) there, and give the CPU up
 * again. call_rcu() needs a CPU (its queue is that CPU's, its lock is taken
 * with interrupts off there). It waits for nothing: the callback runs after
 * a grace period, like any other, and @p head must stay valid until then.
 * Giving the CPU up is a context switch, so a grace period may end before
 * this returns.
 */
static inline void sim_call_rcu_on(int cpu, struct rcu_head *head, rcu_callback_t func)
{
	migrate_to_cpu(cpu);
	call_rcu(head, func);
	migrate_to_cpu(-1);
}

/**
 * sim_kthread_run_held() - how a test stops a task where it wants it: hold
 * @p point (sim_hold_point()), start @p threadfn(@p data) as the kthread
 * @p name on @p cpu (kthread_run_on_cpu()), and let everything run until
 * idle (sim_run_until_idle()). A task that reaches sim_point(@p point) then
 * waits there, keeping its CPU, until the test releases or steps the point.
 * It does not check that the task got there (sim_tasks_at_point() says),
 * and any other task that reaches the point stops there too.
 * @return the task, for kthread_stop().
 */
static inline struct task_struct *sim_kthread_run_held(const char *point,
							int (*threadfn)(void *), void *data,
							unsigned int cpu, const char *name)
{
	struct task_struct *k;

	sim_hold_point(point);
	k = kthread_run_on_cpu(threadfn, data, cpu, name);
	sim_run_until_idle();
	return k;
}

/**
 * sim_call_in_irq() - call @p fn() from an interrupt handler on @p cpu
 * (raise_irq(), named @p name in the trace) and let everything run until
 * idle: how a test shows that a function may not be called in IRQ context
 * (it should BUG: sim_expect_bug() first). The handler runs at @p cpu's next
 * interrupt window: if that CPU's interrupts are held (sim_hold_irqs()), only
 * once they are released, after this has returned. One call may be pending
 * per CPU: a second one on the same CPU before the first has run makes both
 * call the second's @p fn.
 */
void sim_call_in_irq(int cpu, void (*fn)(void), const char *name);

/** A scenario run once per seed by sim_run_seeds(). */
typedef void (*sim_scenario_fn)(void *arg);

/**
 * SIM_TEST_SEEDS() - declare a test that runs @p scenario (a
 * ::sim_scenario_fn, given NULL) once per seed on a kernel booted with the
 * defaults, as sim_run_seeds(NULL, scenario, NULL):
 * `SIM_TEST_SEEDS(suite, name, scenario, .description = "...")`. Criterion
 * options follow as in SIM_TEST(). A scenario that needs an argument or its
 * own configuration calls sim_run_seeds() from a SIM_TEST() instead.
 */
#define SIM_TEST_SEEDS(suite, name, scenario, ...)                          \
	SIM_TEST(suite, name, ##__VA_ARGS__)                                  \
	{                                                                     \
		sim_run_seeds(NULL, (scenario), NULL);                        \
	}

/**
 * SIM_TEST_SEEDS_ON() - SIM_TEST_SEEDS() on a kernel of @p ncpus CPUs, its
 * other settings the defaults: for a scenario whose bug shows only with more
 * CPUs than the default four (a loop that forgets the CPUs above some
 * number), or with fewer (two, to keep a forced schedule short).
 * `SIM_TEST_SEEDS_ON(suite, name, scenario, 8, .description = "...")`.
 */
#define SIM_TEST_SEEDS_ON(suite, name, scenario, ncpus, ...)                \
	SIM_TEST(suite, name, ##__VA_ARGS__)                                  \
	{                                                                     \
		struct sim_config cfg = sim_default_config();                 \
									      \
		cfg.nr_cpus = (ncpus);                                        \
		sim_run_seeds(&cfg, (scenario), NULL);                        \
	}

/**
 * sim_run_seeds() - boot with @p base (NULL: sim_default_config()), run
 * @p fn, halt; once per seed.
 *
 * Seeds are 1 .. WORKBOOK_SEEDS (default 20), or just WORKBOOK_SEED when
 * set; in parallel mode (base->mode or WORKBOOK_MODE) the scenario runs
 * WORKBOOK_SEEDS times on real threads. A failing run names its seed and the
 * command that replays it. Each run must leave no leak. It does not promise
 * that a seed's schedule stays the same when the scenario or the code it
 * runs changes: a seed replays one build, not a history.
 */
void sim_run_seeds(const struct sim_config *base, sim_scenario_fn fn, void *arg);

/**
 * sim_run_exhaustive() - run @p fn once per schedule, depth-first over every
 * choice of the deterministic scheduler (which runnable task goes on at each
 * scheduling point, student accesses included) that needs at most
 * @p preemption_bound preemptions (switching away from a task that could go
 * on), and print how many it visited. For small scenarios: the count grows
 * as (decisions)^bound. Stops after WORKBOOK_EXHAUSTIVE_MAX runs (default
 * 20000). A failing run prints WORKBOOK_SCHEDULE='...', which replays just
 * that schedule. Returns the number of runs. Does not vary anything else
 * (the seed stays @p base's).
 */
long sim_run_exhaustive(const struct sim_config *base, sim_scenario_fn fn, void *arg,
			int preemption_bound);

/** sim_seeds_count() - how many seeds sim_run_seeds() runs. */
int sim_seeds_count(void);

/** @} */
#endif
