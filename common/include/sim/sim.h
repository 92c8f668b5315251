/**
 * @file sim.h
 * @brief Booting the simulated kernel and steering it from a test.
 *
 * Rule kept here: a test forces a schedule only through these controls, never
 * by sleeping. Holding something (a CPU's interrupts, a named point) stops it
 * where it stands; sim_run_until_idle() lets everything else run until
 * nothing can; releasing lets the held thing go on. In deterministic mode
 * only one task runs at a time and every choice comes from the seed, so a
 * run replays exactly; in parallel mode the CPUs run for real.
 * @ingroup control
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>

/** @addtogroup control
 * @{ */

/** How the simulated CPUs run. */
enum sim_mode {
	SIM_DETERMINISTIC, /**< one task at a time, choices from the seed */
	SIM_PARALLEL,      /**< CPUs run on real threads at once */
};

/** How the deterministic scheduler chooses the next task. */
enum sim_sched {
	SIM_SCHED_RANDOM,     /**< uniformly among runnable tasks, from the seed (default) */
	SIM_SCHED_PCT,        /**< PCT: random priorities, pct_depth-1 change points (WORKBOOK_SCHED=pct) */
	SIM_SCHED_EXHAUSTIVE, /**< depth-first over choice lists: set by sim_run_exhaustive() */
};

/** Boot settings. Start from sim_default_config(). */
struct sim_config {
	int nr_cpus;                 /**< 1 .. NR_CPUS; default 4 */
	enum sim_mode mode;          /**< default SIM_DETERMINISTIC */
	uint64_t seed;               /**< schedule seed (deterministic mode) */
	bool auto_time;              /**< jump to the next timer when all tasks block; default true */
	bool check_module_callbacks; /**< rcu_invoke_callback() checks for unloaded modules; default true */
	bool ipi_wait_sleeps;        /**< on_each_cpu(wait=1) sleeps instead of spinning; default false */
	bool trace;                  /**< record the trace; default true */
	long max_steps;              /**< deterministic mode: scheduling points before a livelock report; default 2000000 */
	int spin_limit;              /**< deterministic mode: cpu_relax() calls in a row by one task before a livelock report; default 20000 */
	int livelock_ms;             /**< real-time watchdog: no scheduling point for this long is a livelock; default 10000 */
	bool kcsan;                  /**< accesses of instrumented student code are scheduling points (see sim_kcsan_enabled()); default true */
	bool weak_memory;            /**< deterministic mode: student code's plain stores sit in a store buffer until a barrier, release, context switch or function end; default true (WORKBOOK_WEAK_MEMORY=0 turns it off) */
	int access_preempt;          /**< deterministic mode: 1 in this many student accesses may switch tasks (0: never); default 2 */
	bool races;                  /**< deterministic mode: an access of student code to bytes another CPU's student code stored plainly and still buffers is a BUG "KCSAN: data-race" (needs weak_memory, whose buffer is the watchpoint); default true */
	bool race_watch;             /**< deterministic mode: a plain access of student code is in progress while its task is switched out at it, and another task's conflicting access meanwhile is a BUG "KCSAN: data-race" with both accesses (KCSAN's watchpoints: a plain read against WRITE_ONCE() or rcu_assign_pointer() included); default: what the lab's manifest says ("race_watch"), or WORKBOOK_RACE_WATCH=0|1 */
	bool late_stores;            /**< deterministic mode, with weak_memory: a plain store of student code outlives the function that made it, draining by itself after 1 to 8 more accesses of its CPU (drawn from the seed) unless a barrier, release, lock release or context switch comes first; default: the lab's manifest ("late_stores"), or WORKBOOK_LATE_STORES=0|1 */
	int late_store_delay;         /**< with late_stores: the accesses of its CPU a plain store outlives its function by; 0 (the default): 1 to 8, drawn from the seed. A test that must find a store still buffered where a function returned sets it high (a store buffer may keep a store that long: LKMM bounds no delay); barriers, releases, lock releases and context switches drain it as ever */
	bool early_loads;            /**< deterministic mode: a load of student code may return an older value of its location than memory holds, within what coherence and the CPU's barriers allow (common/src/views.c); default: the lab's manifest ("early_loads"), or WORKBOOK_EARLY_LOADS=0|1 */
	enum sim_sched sched;        /**< deterministic mode's strategy; default SIM_SCHED_RANDOM, or WORKBOOK_SCHED=pct */
	int pct_depth;               /**< PCT: the bug depth d aimed at (d-1 priority change points); default 3 (WORKBOOK_PCT_DEPTH) */
	long pct_steps;              /**< PCT: change points fall among the first this many decisions; default 5000 (WORKBOOK_PCT_STEPS) */
	long hung_steps;             /**< deterministic mode: a task blocked in a completion, mutex or kthread_stop() this many steps while others run is a BUG "hung task"; default 1000000 (0: off) */
	int hung_ms;                 /**< parallel mode: the same in real milliseconds; default in a test a third of its time-out (WORKBOOK_HUNG_MS sets it, 0 is off): a task blocked for good that long is reported with its line, before Criterion's kill would say only "timed out"; a torture that legitimately keeps one task blocked longer needs a longer time-out */
};

/**
 * sim_default_config() - the defaults, with mode and seed taken from the
 * environment: WORKBOOK_MODE=parallel|deterministic, WORKBOOK_SEED=N.
 */
struct sim_config sim_default_config(void);

/**
 * sim_forced_config() - sim_default_config() for a scenario that forces its
 * schedule: one that holds a task at an access (sim_hold_access()) or lets
 * everything else run (sim_run_until_idle()) while a task spins, say in a
 * cross-call's wait. Deterministic mode whatever WORKBOOK_MODE says: on real
 * threads nothing holds a running CPU at a chosen instant, and a spinning
 * task never lets the rest become idle. Does not pin the scheduler's
 * strategy: WORKBOOK_SCHED=pct still applies.
 */
struct sim_config sim_forced_config(void);

/**
 * sim_boot() - start the simulated kernel with @p cfg (NULL:
 * sim_default_config()): its CPUs, their idle tasks, and the calling thread as
 * the task "test". The test's task holds no CPU: it is the controller, which
 * may raise interrupts, hold and release things and call sleeping kernel
 * functions, but must migrate_to_cpu() before it does anything that needs a
 * CPU (rcu_read_lock(), smp_processor_id(), local_irq_save()). Call it inside
 * the test (Criterion forks each test; threads do not survive a fork).
 * WORKBOOK_MODE=deterministic in the environment overrides a @p cfg that asks
 * for parallel mode: that is how a parallel test's failure is re-run
 * replayably (it does not promise the same failure: a parallel run's schedule
 * was the host's).
 */
void sim_boot(const struct sim_config *cfg);

/**
 * sim_halt() - stop every kthread still running (kthread_stop()), stop the
 * CPUs, join every thread, and free the kernel's memory. The caller must be
 * the task that booted. Returns the number of kmalloc() objects still live
 * (leaks), each also printed.
 */
long sim_halt(void);

/** sim_booted() - true between sim_boot() and sim_halt(). */
bool sim_booted(void);
/** The configuration of the running kernel. */
const struct sim_config *sim_config(void);
/** The seed of the running kernel's schedule. */
uint64_t sim_seed(void);

/**
 * sim_run_until_idle() - let every other task and pending interrupt run
 * until none can: every task blocked (or held at a point) and no interrupt
 * deliverable, or, in deterministic mode, the only runnable tasks spinning in
 * cpu_relax() on something nothing else will change (a held CPU, a flag the
 * test owns). The caller gives up its CPU meanwhile (a context switch).
 * Virtual time does not advance. In parallel mode a spinning task makes this
 * wait until the livelock watchdog fires: tests that leave a task spinning
 * pin cfg.mode = SIM_DETERMINISTIC.
 */
void sim_run_until_idle(void);

/**
 * sim_hold_irqs() - hold interrupts (cross-calls included) for @p cpu: they
 * stay pending, in order, until sim_release_irqs(). Tasks still run there.
 * Used to hold a CPU just before it takes a cross-call.
 */
void sim_hold_irqs(int cpu);
/** sim_release_irqs() - deliver @p cpu's held interrupts from its next window on. */
void sim_release_irqs(int cpu);
/** sim_irqs_pending() - interrupts waiting for @p cpu. */
int sim_irqs_pending(int cpu);

/**
 * sim_point() - a named point that a test can hold a task at. If the test
 * holds @p name, the task stops here, keeping its CPU (as if that CPU
 * stalled: no context switch, no quiescent state, its stores not drained)
 * until released or stepped. Otherwise just a scheduling point.
 */
#define sim_point(name) sim_point_at((name), __FILE__, __LINE__)
/** Implementation of sim_point(). */
void sim_point_at(const char *name, const char *file, int line);
/** sim_hold_point() - from now on, stop tasks that reach sim_point(@p name). */
void sim_hold_point(const char *name);
/** sim_release_point() - let every task held at @p name go, and stop holding it. */
void sim_release_point(const char *name);
/**
 * sim_step_point() - let @p n tasks through @p name (those waiting first)
 * while still holding it for the rest.
 */
void sim_step_point(const char *name, int n);
/** sim_tasks_at_point() - how many tasks wait at @p name now. */
int sim_tasks_at_point(const char *name);
/** sim_point_passes() - how many times tasks have passed @p name since boot. */
long sim_point_passes(const char *name);

/**
 * sim_advance_jiffies() - move virtual time on @p n ticks. Each tick raises
 * the scheduling-clock interrupt on every CPU (which calls the tick hook, if
 * set) and fires the timers that are due. (The automatic jump of
 * sim_config::auto_time fires timers only, without ticks.)
 */
void sim_advance_jiffies(unsigned long n);
/** sim_tick() - one tick on every CPU: advance virtual time by one jiffy. */
void sim_tick(void);
/**
 * sim_set_tick_hook() - call @p hook(cpu) in IRQ context from every tick on
 * every CPU (as the kernel's tick calls into RCU); NULL removes it. Reset at
 * each boot.
 */
void sim_set_tick_hook(void (*hook)(int cpu));

/**
 * sim_set_ipi_wait_sleeps() - switch how on_each_cpu(wait=1) waits: false,
 * spinning with preemption off (the kernel's way); true, sleeping, so the
 * caller's CPU passes a quiescent state meanwhile (Quick Quiz #4's world).
 */
void sim_set_ipi_wait_sleeps(bool sleeps);
/** sim_set_check_module_callbacks() - switch the unloaded-module check of rcu_invoke_callback(). */
void sim_set_check_module_callbacks(bool on);

/**
 * sim_store() - a store that this CPU's store buffer holds back: other CPUs
 * see it only after this CPU's next barrier (smp_wmb(), smp_store_release(),
 * smp_mb(), a lock release or a context switch). Tests use it to play a
 * weakly-ordered CPU, so that a publication without a release barrier is
 * caught every time. The storing CPU does not see it either until drained.
 */
#define sim_store(p, v) sim_store_buffered((p), (long)(v), sizeof(*(p)))
/** Implementation of sim_store(). */
void sim_store_buffered(void *p, long v, size_t size);

/*
 * Student code, seen access by access. The lab's student files (and student
 * code that a header expands in a test, such as rculist.h's macros) are
 * compiled with -fsanitize=thread
 * against the simulated kernel's own runtime: each load, store and atomic of
 * student code is then a scheduling point (deterministic mode: the seeded
 * scheduler may switch tasks there; pending interrupts are taken there when
 * interrupts are on), and, with sim_config::weak_memory, a plain store
 * waits in its CPU's store buffer until a release, a barrier, a lock
 * release, a wake-up, an interrupt sent, a context switch or the end of the
 * function. With sim_config::race_watch, a plain access is also watched
 * while its task is switched out at it, as the kernel's KCSAN watches a
 * delayed access: another task's conflicting access meanwhile (a write
 * against a plain read, marked or not) is a BUG "KCSAN: data-race" naming
 * both. The tests' own code is never interleaved, buffered or watched.
 */
/**
 * sim_cpu_in_atomic() - true when the task holding @p cpu has preemption
 * disabled: it holds a spinlock (or called preempt_disable()). A test that
 * stops a task at each of its accesses in turn asks this to leave out the
 * stops where another CPU would spin on the stopped task's lock for ever.
 * False for a free CPU. Says nothing of interrupts (local_irq_save()).
 */
bool sim_cpu_in_atomic(int cpu);
struct task_struct;
/**
 * sim_task_sleeps_on_timer() - true while @p t is asleep in
 * schedule_timeout() (msleep() sleeps there): it waits for virtual time to
 * pass, not for an event. A test that waited for @p t in vain asks this to
 * say why: while the test holds or waits, no jiffy passes by itself. Where
 * @p file and @p line are not NULL they get the line that called msleep()
 * or schedule_timeout(). A snapshot: @p t may wake as soon as it returns.
 */
bool sim_task_sleeps_on_timer(const struct task_struct *t, const char **file, int *line);
/**
 * sim_task_polls() - the cpu_relax() calls @p t has made since it last
 * slept, while it runs and has made more than a few (a wait written as a
 * polling loop), else 0. Where @p file and @p line are not NULL they get
 * its last cpu_relax() call (NULL for a module's code). A polling task keeps
 * its CPU: in this non-preemptible kernel nothing else runs there, a
 * callback it waits for included. A snapshot, as above.
 */
long sim_task_polls(const struct task_struct *t, const char **file, int *line);
/** The named point (see sim_point()) where sim_hold_access() stops a task. */
#define SIM_ACCESS_POINT "student-access"
/**
 * sim_kcsan_enabled() - true when this binary's student code is
 * instrumented (not under the asan and tsan presets, nor without libdw).
 * Tests of the instrumentation skip themselves when false.
 */
bool sim_kcsan_enabled(void);
/**
 * sim_access_count() - accesses of student code made on @p cpu since boot.
 * An access is a load, a store or an atomic of student code, or the end of
 * a student function that leaves stores in the buffer (a point where they
 * may become visible out of order).
 */
long sim_access_count(int cpu);
/**
 * sim_hold_access() - the task that makes @p cpu's @p k-th student access
 * from now on stops just before it, as at a held sim_point(SIM_ACCESS_POINT):
 * it keeps its CPU and its store buffer. Let it go with
 * sim_release_point(SIM_ACCESS_POINT). Deterministic mode only. One hold
 * per CPU at a time; does not promise the access ever comes.
 */
void sim_hold_access(int cpu, long k);
/**
 * sim_buffered_stores() - how many stores of student code the task that
 * holds @p cpu keeps in its store buffer, not yet visible to other CPUs
 * (deterministic mode; 0 when none, when nobody holds the CPU, or when the
 * caller itself holds it).
 */
int sim_buffered_stores(int cpu);
/**
 * sim_commit_store() - make the @p i-th newest of those stores (0: the
 * newest) visible to every other CPU now, with the older stores to the
 * same bytes, as a weakly-ordered CPU may drain its buffer out of order.
 * Meant for a task the test holds (sim_hold_access(), a held sim_point()):
 * a held task's buffer changes only this way, so the test chooses which of
 * its stores another CPU sees. A barrier between two stores orders them
 * because the first is gone by the time the second is made: this never
 * reorders across one. @return false when there is no such store.
 */
bool sim_commit_store(int cpu, int i);
/**
 * sim_stale_load() - with sim_config::early_loads, the load that is
 * @p cpu's @p k-th student access from now returns the oldest value that
 * CPU may still see there (what coherence and its barriers allow), not the
 * newest: the test chooses which load is satisfied early. An access that is
 * no load, or a location with only one value to see, reads as usual.
 * Deterministic mode only; one per CPU at a time.
 */
void sim_stale_load(int cpu, long k);
/**
 * sim_irq_at_access() - raise the interrupt @p fn(@p data) on @p cpu just
 * before @p cpu's @p k-th student access from now on; it is taken there if
 * interrupts are on (else at the next window). Deterministic mode only.
 */
void sim_irq_at_access(int cpu, long k, void (*fn)(void *data), void *data, const char *name);

/** sim_warn_count() - warnings (WARN_ON()) since boot. */
int sim_warn_count(void);

/**
 * sim_likely_cause() - what a test knows a crash or BUG from here on would
 * most likely mean: from now until the next boot (or a call with NULL), any
 * BUG report or crash of the run adds the line "likely cause: " and the
 * text formatted from @p fmt, and the workbook's report shows it and sends
 * the student to the TODOs it names. For a mistake whose damage surfaces in
 * another function than the one that made it: a list corrupted by one TODO
 * that crashes in another's walk. It does not make anything fail; it
 * explains a failure that happens anyway, and it is a guess the test makes,
 * said as one.
 */
void sim_likely_cause(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * sim_expect_bug() - the next BUG must be the kernel's own detection (raised
 * by the simulated kernel or the tests, not by student code) and contain
 * @p substring in its headline; any other BUG then aborts (SIGABRT) instead
 * of raising ::BUG_SIGNAL, so a test that expects one bug is not passed by
 * another, nor by a BUG() the student's code raises itself.
 *
 * Without any expectation a BUG of the kernel still raises ::BUG_SIGNAL,
 * but one raised by student code aborts: it never passes a test.
 */
void sim_expect_bug(const char *substring);

/**
 * sim_expect_student_bug() - the next BUG must be a check the student's
 * code makes itself (a BUG_ON() the lab asks for), contain @p substring,
 * and, when @p in_irq, be raised in interrupt context. Whose BUG it is comes
 * from the address that called sim_bug() (the line table), not from the
 * file name it passes. Without the instrumentation (the asan and tsan
 * presets) nobody can tell whose it is, and either kind is accepted.
 */
void sim_expect_student_bug(const char *substring, bool in_irq);

/** @} */
#endif
