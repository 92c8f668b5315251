/*
 * internal.h - the simulated kernel's private state.
 *
 * Rule kept here: this is the one home of the kernel's private state and of
 * every prototype that one file of common/src gives another; no .c file
 * declares another file's function by hand. Every field of struct sim_state
 * and of the tasks and CPUs that another task may change is guarded by S.lock,
 * the scheduler's lock; the fields marked "atomic" are also read without it on
 * fast paths. Nothing here is part of the API.
 *
 * The locks, and the order in which they nest (take the left one first):
 *
 *   mod_lock (module.c) -> S.lock (here) -> trace_lock (trace.c)
 *   mod_lock, S.lock -> kc_lock (kcsan_classify.c): callback_name() looks up
 *   a static function's name in the debug information under it;
 *   kcsan_classify.c takes no other lock while it holds kc_lock
 *   slab_lock (slab.c): a leaf, nothing is taken while it is held
 *   name_lock (module.c, callback_name()'s cache): a leaf too
 *
 * As the code stands: S.lock -> trace_lock is the common case (the scheduler
 * and bug reports trace with S.lock held; a BUG report draws the SVG, which
 * collects the rings under trace_lock). mod_lock -> S.lock happens only on one
 * path, module_unmap()'s sim_bug() when a dlclose()d object stays mapped;
 * otherwise module.c drops mod_lock before it calls anything that schedules or
 * traces. Nothing takes mod_lock or S.lock while holding trace_lock, and
 * nothing takes mod_lock while holding S.lock.
 *
 * S.lock, mod_lock and kc_lock are taken with sim_lock_take(), and every
 * function whose name ends in _locked checks that its caller holds the lock
 * it needs (sim_assert_held(), lockdep.c).
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/interrupt.h>
#include <linux/timer.h>
#include <linux/rcupdate.h>
#include <sim/sim.h>
#include <sim/trace.h>

enum task_state { TS_RUNNING, TS_BLOCKED, TS_DEAD };

struct task_struct {
	char comm[TASK_COMM_LEN];
	int pid;
	pthread_t thread;
	bool has_thread;
	_Atomic uint32_t wake;      /* its thread's doorbell (a futex word, sched.c) */
	enum task_state state;
	const char *blocked_on;     /* what it waits for, for reports */
	const char *file;           /* where it last reached a scheduling point */
	int line;
	int cpu;                    /* CPU held, or -1 */
	int home;                   /* CPU it runs on when runnable, or -1 */
	bool on_runq;
	struct list_head runq_node; /* on a CPU's run queue */
	struct list_head wait_node; /* on a mutex, completion or wait queue */
	bool wakeable;              /* wake_up_process()/kthread_stop() may end the wait */
	bool granted;               /* a completion or mutex was handed to it */
	struct list_head all_node;
	int preempt;
	int rcu_depth;
	bool is_idle;
	/* kthreads */
	int (*fn)(void *);
	void *data;
	_Atomic bool should_stop;   /* read without S.lock by kthread_should_stop() (atomic) */
	bool exited;
	bool exited_unasked;        /* its function returned before kthread_stop() asked */
	bool stopped;               /* kthread_stop() was called */
	int ret;
	struct task_struct *stopper;
	/* livelock detection */
	long relax_streak;
	long relax_since_block;     /* cpu_relax() calls since it last blocked: a poller */
	const char *relax_file;     /* where it last called cpu_relax(): where it polls */
	int relax_line;
	const char *held_at;        /* named point it is held at */
	/* deterministic mode: CPUs not idle when it last prepared to wait on cpu_qs_wq */
	uint64_t qs_busy;
	/* hung-task watchdog (explore.c): when it last blocked */
	long blocked_step;
	long blocked_ms;
	/*
	 * Parallel mode, waiting on cpu_qs_wq: the CPUs whose quiescent states
	 * its condition read since sim_wait_prepare() (cpu_quiescent_count(),
	 * idle_cpu()), and every CPU's count at sim_wait_prepare(); written by
	 * the task itself. qs_watch: the CPUs it is registered with (sim_cpu.qs_watchers)
	 * while it sleeps, under S.lock.
	 */
	uint64_t qs_read;
	uint64_t qs_watch;
	unsigned long qs_seen[NR_CPUS];
};

struct sim_irq {
	irq_handler_t fn;
	void *data;
	const char *name;
};

#define SB_MAX 64
/* Fields written by different CPUs in parallel mode go on different lines. */
#define SIM_CACHE_LINE 64

/* Aligned: one CPU's fast-path fields never share a line with another's. */
struct __attribute__((aligned(SIM_CACHE_LINE))) sim_cpu {
	int id;
	struct task_struct *curr;   /* holder; NULL when idle */
	struct task_struct *idle;   /* takes interrupts while nobody holds the CPU */
	struct list_head runq;      /* tasks waiting for this CPU, FIFO */
	_Atomic unsigned long qs;   /* quiescent states (atomic) */
	_Atomic int qs_watchers;    /* parallel mode: tasks asleep on cpu_qs_wq that
	                               wait for this CPU to move (atomic) */
	_Atomic int qs_want;        /* parallel mode: a count was read since this
	                               CPU last counted; its next cond_resched()
	                               counts (atomic; sched.c) */
	_Atomic int nr_queued;      /* length of runq, for cond_resched()'s fast
	                               path (atomic; written under S.lock) */
	bool irqs_off;
	int hardirq;
	struct sim_irq *irqs;       /* pending interrupts, a ring */
	int irq_head, irq_len, irq_cap;
	_Atomic int nr_irqs;        /* irq_len, for the fast path (atomic) */
	_Atomic long progress;      /* parallel mode: scheduling points of this CPU's
	                               holder, its only writer (atomic) */
	bool irq_held;
	bool parked;                /* hotplug: no task but its idle task may take it */
	_Atomic bool offline;       /* hotplug: off (cpu_online() false); read lock-free */
	struct { void *p; long v, old; size_t size; } sb[SB_MAX];
	int sb_len;
};

struct sim_pointhold {
	const char *name;
	bool held;
	int permits;
	int waiting;
	long passes;
};

#define MAX_POINTS 32

struct sim_state {
	pthread_mutex_t lock;       /* S.lock: after mod_lock, before trace_lock */
	/*
	 * From here on a line of its own: every read-side hook reads cfg.trace,
	 * booted and det, which change only at boot, while the lock's line
	 * moves to whichever CPU takes it (parallel mode: many times per grace
	 * period). Sharing the line made each rcu_read_lock() a cache miss.
	 */
	struct sim_config cfg __attribute__((aligned(SIM_CACHE_LINE)));
	bool booted;
	bool ever_booted;           /* a kernel ran in this process: reports name its seed */
	bool det;
	struct sim_cpu cpus[NR_CPUS];
	struct list_head tasks;     /* every task, in pid order */
	int next_pid;
	int next_kthread_cpu;
	int nr_running;
	struct task_struct *token;  /* deterministic mode: the one task that runs */
	struct task_struct *boot_task;
	struct task_struct *quiescer;
	uint64_t rng;
	long steps;
	long relax_streak;          /* scheduling points in a row that were cpu_relax() */
	_Atomic long progress;      /* non-relax scheduling points (atomic) */
	unsigned long now_jiffies;
	struct list_head timers;
	struct sim_pointhold points[MAX_POINTS];
	int warns;
	const char *expect_bug;
	bool expect_student_bug;    /* the BUG expected is the student's own check */
	bool expect_bug_in_irq;     /* ... raised in interrupt context */
	char likely_cause[400];     /* sim_likely_cause(): said with any BUG or crash */
	pthread_t watchdog;
	bool watchdog_run;
	pthread_cond_t watchdog_cv;
};

extern struct sim_state S;
extern _Thread_local struct task_struct *sim_current;

static inline struct sim_cpu *cpu_of(int cpu) { return &S.cpus[cpu]; }

/* sched.c: all called with S.lock held */
void sched_wake_locked(struct task_struct *t);
void sched_block_locked(struct task_struct *t, const char *what, bool wakeable);
void sched_block_keep_cpu_locked(struct task_struct *t, const char *what);
void sim_point_quiet(const char *name, const char *file, int line);
struct task_struct *task_create_locked(const char *name, int home, bool idle,
				       int (*fn)(void *), void *data);
void sched_note_progress_locked(void);
uint64_t sim_rand_locked(void);
void cpu_release_locked(struct task_struct *t);
bool cpu_step_off_in_place_locked(struct task_struct *t);
void sched_wait_locked(struct task_struct *t);
/* Parallel mode: @t no longer waits for any CPU on cpu_qs_wq (sim_cpu.qs_watchers). */
void qs_unwatch_locked(struct task_struct *t);
/* A scheduling point: called without S.lock (points.c passes through it). */
void sched_point(const char *file, int line, bool relax);

/* irq.c */
void deliver_irqs(struct task_struct *t);
bool irq_deliverable_locked(struct sim_cpu *c);
void raise_irq_locked(int cpu, irq_handler_t fn, void *data, const char *name);

/* storebuf.c: called with S.lock held */
void sb_drain(struct sim_cpu *c);
void storebuf_reset(void);

/* hotplug.c */
/* sim_boot(): every CPU online, no hotplug state registered (S.lock held). */
void hotplug_reset_locked(void);
/* sim_halt(): bring every CPU back, so that its parked tasks can be stopped. */
void hotplug_halt_locked(void);
/* sched.c, from cpu_release_locked(): a parked CPU was let go; wake cpu_down(). */
void hotplug_cpu_released_locked(struct sim_cpu *c);
/* sched.c: hand @c to the first task waiting in its run queue; false if none. */
bool cpu_run_next_locked(struct sim_cpu *c);

/* watchdog.c: called without S.lock, from sim_boot() and sim_halt() */
void watchdog_start(void);
void watchdog_stop(void);

/* kcsan.c: the runtime of instrumented student code */
void kcsan_boot(uint64_t seed);
void kcsan_halt(void);
void kcsan_swap_out(void);
void kcsan_swap_in(void);
void kcsan_drain(void);
void kcsan_fence(void);
void kcsan_fence_point(uintptr_t pc);
void kcsan_forget_range(const void *p, size_t n);
bool kcsan_store_buffered(void *p, long v, size_t size);
/* kcsan_classify.c: which code is the student's, and where a PC is */
int kcsan_pc_is_student(uintptr_t pc);
void kcsan_modules_changed(void);
void kcsan_split_pc(uintptr_t pc, char *fn, size_t fn_n, char *where, size_t where_n);
bool kcsan_split_pc_nowait(uintptr_t pc, char *fn, size_t fn_n, char *where, size_t where_n);
const char *kcsan_intern_file(const char *f);
/* watch.c: data races, KCSAN's way (kcsan.c calls it at each student access) */
enum { WATCH_WRITE = 1, WATCH_MARKED = 2 };
void watch_boot(void);
void watch_check(struct task_struct *t, uintptr_t pc, const void *p, size_t size, int type);
int watch_begin(struct task_struct *t, uintptr_t pc, const void *p, size_t size, int type);
void watch_end(int slot);
/* One access of a data race, for watch_report(). */
struct race_access {
	struct task_struct *task;
	int cpu;
	const void *p;
	size_t size;
	int type;                   /* WATCH_WRITE, WATCH_MARKED */
	uintptr_t pc;
};
__attribute__((noreturn)) void watch_report(const struct race_access *a, const char *note,
					    const struct race_access *b, bool at_first);
/* views.c: loads that may be early (kcsan.c calls it) */
void views_boot(uint64_t seed);
void views_commit(int cpu, const void *p, size_t size);
void views_before_store(const void *p, size_t size);
uint64_t views_load(int cpu, void *p, size_t size, bool marked);
void views_settle(void);
void views_sync(int cpu);
void views_rmb(int cpu);
void views_acquire(int cpu, uint64_t t);
void views_forget(const void *p, size_t n);
/* sched.c, for kcsan.c: an access of student code may switch tasks */
void sched_access_point(struct task_struct *t);

/* explore.c: PCT, exhaustive search, hung tasks */
bool explore_active(void);
struct task_struct *explore_pick_locked(void);
int explore_choose_locked(int n);
void explore_boot_locked(void);
void explore_note_block_locked(struct task_struct *t);
void explore_hung_check_locked(void);
void explore_watchdog_tick_locked(int ms);
const char *explore_replay_env(void);

/* timer.c */
void timers_fire_due_locked(void);
bool timers_next_locked(unsigned long *expires);
/* hotplug: the armed timers of CPU @from fire on CPU @to from now on. */
void timers_migrate_locked(int from, int to);
void timers_reset(void);
/* An armed or running timer (S.lock held) whose timer_list or function lies in [start, end). */
struct timer_list *timer_in_range_locked(uintptr_t start, uintptr_t end, bool *running);
/* The function of the timer @cpu's timer interrupt is running now, or NULL;
 * asked from that interrupt only (no lock). */
typedef void (*timer_fn_t)(struct timer_list *);
timer_fn_t timer_fn_running_on(int cpu);

/* trace.c: trace_emit() takes trace_lock, so it may be called with S.lock held */
void trace_reset(int nr_cpus);
void trace_free(void);
void trace_emit(int cpu, const struct task_struct *t, enum trace_type type,
		const char *name, long arg);
/* One event as the rings keep it: names and a logical time, never addresses. */
struct trace_ev {
	unsigned long seq;
	int cpu;
	int type;
	long arg;
	char task[TASK_COMM_LEN];
	char name[32];
};
/* What a trace writer works from: the kept events in order, and its open file. */
struct trace_dump {
	struct trace_ev *ev;
	size_t n;
	int nr_rings;               /* CPUs + 1: the last ring is the off-CPU lane */
	FILE *f;
};
/* Collect the events and open path for writing: 0, or -errno with nothing held. */
int trace_dump_open(struct trace_dump *d, const char *path);
/* Free the events and close the file: 0, or -errno if the file did not close. */
int trace_dump_close(struct trace_dump *d);
const char *trace_type_name(int type);
/* On any failure: print the seed and replay command, draw the SVG. Never takes S.lock. */
void sim_failure_report(const char *why);
/* The timeline of the current run, named by the test; its path on stderr. */
void sim_write_timeline(const char *why);
/* A real crash (signal handler): who was running, the tasks, the replay. */
void sim_report_crash(void);
/* A poller: a task that runs and has called cpu_relax() this often since it last slept. */
#define POLLER_RELAXES 1000
/*
 * "  called from FILE:LINE in fn()" lines on @f for the lab's frames (the
 * student's, the tests') on the current stack, FILE:LINE itself left out: a
 * BUG the kernel raises names the lab's call that led to it. Nothing where
 * the platform gives no backtrace.
 */
void sim_report_lab_callers(FILE *f, const char *file, int line);
/* The test's sim_likely_cause(), if it gave one: "  likely cause: ..." on stderr. */
void sim_report_likely_cause(void);
/* Set by the test harness (test.c): how to replay the current run, and a file tag. */
extern char sim_replay_cmd[1024];
extern char sim_failure_tag[256];
/* test.c: record for the grader that the running test ended as KIND says (end, bug, abort, fault). */
void sim_test_proof(const char *kind);
/* What failed (BUG headline, assertion message), for the timeline's red line. */
extern char sim_failure_what[512];

/* test.c */
int harness_hung_ms(void);
/* slab.c */
struct kmem_free_site {
	uintptr_t caller;       /* the return address into kfree()'s caller */
	int cpu;
	char comm[TASK_COMM_LEN];
	const char *last_file;  /* the freeing task's last scheduling point */
	int last_line;
};
bool kmem_freed_site(uintptr_t addr, uintptr_t *base, struct kmem_free_site *out);
bool kmem_freed_site_nowait(uintptr_t addr, uintptr_t *base, struct kmem_free_site *out);
bool module_range_may_hold(const void *addr);
void slab_reset(void);
long slab_halt(void);

/* module.c */
void modules_halt(void);
/* The name a trace gives a callback: its symbol, else its module's name. */
const char *callback_name(rcu_callback_t fn);
/* module_counts(): a module's callback was queued (who queued it is kept for
 * the BUG if it runs after its module was unloaded); all back to 0 at boot. */
void module_note_queued(const struct rcu_head *head);
void modules_reset_counts(void);

/* bug.c */
__attribute__((noreturn)) void sim_bug_locked(const char *file, int line, const char *fmt, ...);
void sim_report_tasks(FILE *f);
void sim_report_hang(const char *test, double after_s);

/*
 * The kernel's own locks (S.lock, mod_lock, ...: pthread mutexes, not the
 * simulated spinlocks of <linux/spinlock.h>), taken so that each thread
 * knows which it holds (lockdep.c says why). At most SIM_HELD_MAX at once.
 */
#define SIM_HELD_MAX 4
extern _Thread_local pthread_mutex_t *sim_held[SIM_HELD_MAX];
extern _Thread_local int sim_nheld;
__attribute__((noreturn)) void sim_lock_bug(const char *fn, const char *lock, const char *what);

static inline bool sim_lock_held(const pthread_mutex_t *m)
{
	for (int i = 0; i < sim_nheld; i++)
		if (sim_held[i] == m)
			return true;
	return false;
}

/* Note @m as held by this thread, once it has been taken. */
static inline void sim_lock_taken(pthread_mutex_t *m)
{
	if (sim_nheld == SIM_HELD_MAX)
		sim_lock_bug(__func__, "a lock", "taken with too many held already");
	sim_held[sim_nheld++] = m;
}

static inline void sim_lock_take(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	sim_lock_taken(m);
}

/* Like pthread_mutex_trylock(): true if taken. */
static inline bool sim_lock_try(pthread_mutex_t *m)
{
	if (pthread_mutex_trylock(m))
		return false;
	sim_lock_taken(m);
	return true;
}

static inline void sim_lock_drop(pthread_mutex_t *m)
{
	for (int i = sim_nheld - 1; i >= 0; i--)
		if (sim_held[i] == m) {
			sim_held[i] = sim_held[--sim_nheld];
			pthread_mutex_unlock(m);
			return;
		}
	sim_lock_bug(__func__, "a lock", "dropped by a thread that does not hold it");
}

/* lockdep_assert_held()'s way: the caller must hold @m. */
#define sim_assert_held(m)                                                   \
	do {                                                                 \
		if (!sim_lock_held(m))                                       \
			sim_lock_bug(__func__, #m, "not held by the caller"); \
	} while (0)

/*
 * What a function of the scheduler's (S.lock's) needs: S.lock, or, in
 * deterministic mode, the token, which the one task that runs holds and
 * which serializes everything S.lock does (a student access's hooks run
 * under it alone).
 */
#define sim_assert_sched_held()                                              \
	do {                                                                 \
		if (!sim_lock_held(&S.lock) && !(S.det && S.token == sim_current)) \
			sim_lock_bug(__func__, "S.lock (or the deterministic token)", \
				     "not held by the caller");              \
	} while (0)

#define SIM_LOCK() sim_lock_take(&S.lock)
#define SIM_UNLOCK() sim_lock_drop(&S.lock)
/*
 * SIM_LOCKED() - @expr, of @type, evaluated under S.lock, as a value: the
 * body of a short accessor (a snapshot of the kernel's state, or one step
 * such as consuming a completion). A snapshot was consistent when read; it
 * may be stale by the time the caller looks at it.
 */
#define SIM_LOCKED(type, expr)                                               \
	({                                                                   \
		SIM_LOCK();                                                  \
		type __locked_val = (expr);                                  \
		SIM_UNLOCK();                                                \
		__locked_val;                                                \
	})

#endif
