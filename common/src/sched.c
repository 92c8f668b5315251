/*
 * sched.c - simulated CPUs, tasks and the scheduler.
 *
 * Rule kept here: a task runs kernel code only while it holds a CPU (or while
 * it runs off-CPU as a controller) and, in deterministic mode, only while it
 * also holds the token. Every hand-over of a CPU or of the token happens under
 * S.lock at a scheduling point, and every choice between tasks is drawn from
 * the seeded PRNG, in pid order: the same seed replays the same run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/wait.h>
#include "internal.h"

struct sim_state S = { .lock = PTHREAD_MUTEX_INITIALIZER };
_Thread_local struct task_struct *sim_current;
int nr_cpu_ids;
DECLARE_WAIT_QUEUE_HEAD(cpu_qs_wq);

/* splitmix64: small, fast, and the same on every platform. */
uint64_t sim_rand_locked(void)
{
	uint64_t z;

	sim_assert_sched_held();
	z = (S.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sched_note_progress_locked(void)
{
	sim_assert_sched_held();
	S.relax_streak = 0;
	atomic_fetch_add_explicit(&S.progress, 1, memory_order_relaxed);
}

static void make_running_locked(struct task_struct *t);

/*
 * Waking a task's thread. Each thread sleeps on its own futex word,
 * task_struct.wake, not on a condition variable of S.lock: a hand-over then
 * costs the giver one FUTEX_WAKE and the taker one FUTEX_WAIT, and the giver
 * drops S.lock before it wakes the taker, so the taker does not wake straight
 * into a lock that is still held (a condition variable signalled under S.lock
 * does: a second sleep and a second wake-up per hand-over). The word is only
 * a doorbell: what a thread waits for is read under S.lock, and who runs next
 * is decided there, so the schedule is the same as with any other doorbell.
 */
/* <linux/futex.h> cannot be included: it wants the system's <linux/types.h>,
 * which common/include/linux shadows. The ABI's values: */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

static void task_kick(struct task_struct *t)
{
	/*
	 * Relaxed: the bump only has to change the word's value. A sleeper
	 * read it under S.lock before it dropped the lock; the kernel's
	 * FUTEX_WAIT compares that value with the word's, atomically with
	 * queueing it, so a bump after the read is never missed.
	 */
	atomic_fetch_add_explicit(&t->wake, 1, memory_order_relaxed);
	syscall(SYS_futex, &t->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * Sleep until kicked: drop S.lock, ring @next's doorbell if not NULL, wait
 * on @t's, retake S.lock. May return without a kick: callers re-check what
 * they wait for, under S.lock, in a loop.
 */
static void task_sleep_locked(struct task_struct *t, struct task_struct *next)
{
	uint32_t seq = atomic_load_explicit(&t->wake, memory_order_relaxed);

	sim_assert_sched_held();
	SIM_UNLOCK();
	if (next)
		task_kick(next);
	syscall(SYS_futex, &t->wake, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
	SIM_LOCK();
}

void qs_unwatch_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	for (int cpu = 0; cpu < NR_CPUS; cpu++)
		if (t->qs_watch & (UINT64_C(1) << cpu))
			atomic_fetch_sub(&cpu_of(cpu)->qs_watchers, 1);
	t->qs_watch = 0;
}

/*
 * Wake the grace periods that a quiescent state on @c may concern. @by itself
 * is not woken: its own going to sleep must not wake it, or a task waiting on
 * cpu_qs_wq would wake itself forever.
 */
static void qs_wake_locked(struct sim_cpu *c, struct task_struct *by)
{
	struct task_struct *w, *n;
	uint64_t bit = UINT64_C(1) << c->id;

	sim_assert_sched_held();
	/* A waiter between wait_event()'s check and its sleep (the
	 * "wait_event:sleep" window) must not miss this: its sleep returns. */
	cpu_qs_wq.seq++;
	list_for_each_entry_safe(w, n, &cpu_qs_wq.waiters, wait_node) {
		if (w == by)
			continue;
		/* Deterministic mode: a CPU that was idle when @w last checked
		 * already counted as quiescent for it, so its going idle again
		 * tells @w nothing (two waiters would otherwise wake each other
		 * forever while a third CPU is stalled). */
		if (S.det && !(w->qs_busy & bit))
			continue;
		/* Parallel mode: only the CPUs its condition read can change
		 * its mind (as rcu_report_qs_rdp() reports only what a grace
		 * period still needs). */
		if (!S.det && !(w->qs_watch & bit))
			continue;
		qs_unwatch_locked(w);
		list_del_init(&w->wait_node);
		sched_wake_locked(w);
	}
}

/* A quiescent state on @c, passed by @by: count it and let grace periods re-check. */
static void note_qs_locked(struct sim_cpu *c, struct task_struct *by)
{
	sim_assert_sched_held();
	atomic_fetch_add(&c->qs, 1);
	qs_wake_locked(c, by);
}

static void make_running_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	t->state = TS_RUNNING;
	t->blocked_on = NULL;
	t->wakeable = false;
	S.nr_running++;
	sched_note_progress_locked();
	/* Deterministic mode: it runs when given the token, which kicks it.
	 * A task made running by its own thread (migrate_to_cpu() back to a
	 * free CPU) is awake already: a kick would be a system call for nobody. */
	if (!S.det && t != sim_current)
		task_kick(t);
}

static void cpu_give_locked(struct sim_cpu *c, struct task_struct *t)
{
	sim_assert_sched_held();
	if (c->curr && c->curr != t)
		sim_bug_locked(__FILE__, __LINE__, "simulated kernel: CPU %d given to %s "
			       "while %s holds it", c->id, t->comm, c->curr->comm);
	c->curr = t;
	t->cpu = c->id;
	views_sync(c->id);    /* a task taking a CPU sees what its waker made visible */
	if (!t->is_idle)
		trace_emit(c->id, t, TR_SWITCH, t->comm, t->pid);
}

void sched_wake_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	if (t->state != TS_BLOCKED || t->on_runq || t->held_at)
		return;
	if (t->home < 0 || t->cpu == t->home) {
		make_running_locked(t);
		return;
	}
	struct sim_cpu *c = cpu_of(t->home);

	/* A parked CPU (hotplug) takes no task but its idle task: the others wait. */
	if (!c->curr && (!c->parked || t->is_idle)) {
		cpu_give_locked(c, t);
		make_running_locked(t);
		return;
	}
	t->on_runq = true;
	t->blocked_on = "a CPU (run queue)";
	t->wakeable = false;
	list_add_tail(&t->runq_node, &c->runq);
	atomic_fetch_add_explicit(&c->nr_queued, 1, memory_order_relaxed);
}

bool cpu_run_next_locked(struct sim_cpu *c)
{
	sim_assert_sched_held();
	if (list_empty(&c->runq) || c->parked)
		return false;
	struct task_struct *n = list_first_entry(&c->runq, struct task_struct, runq_node);

	list_del_init(&n->runq_node);
	atomic_fetch_sub_explicit(&c->nr_queued, 1, memory_order_relaxed);
	n->on_runq = false;
	cpu_give_locked(c, n);
	make_running_locked(n);
	return true;
}

/* A context switch away from @t: a quiescent state for its CPU. */
void cpu_release_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	if (t->cpu < 0)
		return;
	struct sim_cpu *c = cpu_of(t->cpu);

	sb_drain(c);
	if (t == sim_current)
		kcsan_drain();
	views_sync(c->id);    /* a context switch: the next task sees memory as it is */
	c->curr = NULL;
	t->cpu = -1;
	if (!cpu_run_next_locked(c)) {
		if (!t->is_idle)
			trace_emit(c->id, NULL, TR_IDLE, "idle", 0);
		if (irq_deliverable_locked(c))
			sched_wake_locked(c->idle);
	}
	if (c->parked)
		hotplug_cpu_released_locked(c);
	/*
	 * Last: the waiters this wakes must find the CPU already handed on,
	 * or one of them would take it too (two tasks on one CPU).
	 */
	note_qs_locked(c, t);
}

/*
 * Parallel mode: @t steps off its CPU and straight back, when nothing else
 * could have taken the CPU meanwhile (no task queued, no hotplug parking):
 * the context switch's effects (its stores drain, its view catches up, a
 * quiescent state for the CPU) without the hand-over, which would cost two
 * thread wake-ups for nothing to observe. False, having done nothing, when
 * the CPU is wanted: then the caller switches for real.
 */
bool cpu_step_off_in_place_locked(struct task_struct *t)
{
	struct sim_cpu *c;

	sim_assert_sched_held();
	if (S.det || t->cpu < 0 || t != sim_current)
		return false;
	c = cpu_of(t->cpu);
	if (!list_empty(&c->runq) || c->parked || irq_deliverable_locked(c))
		return false;
	sb_drain(c);
	kcsan_drain();
	views_sync(c->id);
	note_qs_locked(c, t);
	return true;
}

/* Nothing can run on its own: let the test's controller back in, or time on. */
static bool unstick_locked(void)
{
	unsigned long exp;

	sim_assert_sched_held();
	if (S.quiescer && S.quiescer->state == TS_BLOCKED) {
		struct task_struct *q = S.quiescer;

		S.quiescer = NULL;
		sched_wake_locked(q);
		sched_note_progress_locked();
		return true;
	}
	if (S.cfg.auto_time && timers_next_locked(&exp)) {
		if (exp > S.now_jiffies)
			S.now_jiffies = exp;
		timers_fire_due_locked();
		sched_note_progress_locked();
		return true;
	}
	return false;
}

/*
 * Every runnable task is spinning in cpu_relax() with nothing changing. A
 * runnable task whose last scheduling point was progress (a lock holder
 * preempted inside student code) has just not had its turn yet.
 */
static bool stalled_locked(void)
{
	struct task_struct *t;

	sim_assert_sched_held();
	if (S.relax_streak <= 16L * (S.nr_running + 2))
		return false;
	list_for_each_entry(t, &S.tasks, all_node)
		if (t->state == TS_RUNNING && t->relax_streak == 0 && t != S.quiescer)
			return false;
	return true;
}

static void deadlock_locked(void)
{
	sim_assert_sched_held();
	sim_bug_locked(__FILE__, __LINE__,
		       "deadlock: every task is blocked and no timer is armed");
}

static struct task_struct *det_pick_locked(void)
{
	struct task_struct *t;
	int n;

	sim_assert_sched_held();
	for (;;) {
		n = 0;
		list_for_each_entry(t, &S.tasks, all_node)
			if (t->state == TS_RUNNING)
				n++;
		if (n && !stalled_locked())
			break;
		if (unstick_locked())
			continue;
		if (n)
			break;
		deadlock_locked();
	}
	if (explore_active() && (t = explore_pick_locked()))
		return t;       /* PCT or exhaustive (explore.c) */
	int k = (int)(sim_rand_locked() % (uint64_t)n);

	list_for_each_entry(t, &S.tasks, all_node)
		if (t->state == TS_RUNNING && k-- == 0)
			return t;
	return NULL; /* not reached */
}

/*
 * Deterministic mode: hand the token on, then wait to be given it back. A
 * running task keeps the token for a PRNG-drawn few steps more (3 times in
 * 4): thread hand-overs cost microseconds, and short runs still interleave.
 */
static void det_switch_locked(struct task_struct *self)
{
	sim_assert_sched_held();
	if (!explore_active() && self->state == TS_RUNNING && !stalled_locked() &&
	    (sim_rand_locked() & 3))
		return;
	struct task_struct *next = det_pick_locked();

	S.token = next;
	if (next != self)
		kcsan_swap_out();      /* other CPUs see memory without our buffered stores */
	else
		next = NULL;           /* we go on: nobody to wake */
	while (!(S.token == self && self->state == TS_RUNNING)) {
		task_sleep_locked(self, next);
		next = NULL;
	}
	kcsan_swap_in();
}

static void par_wait_locked(struct task_struct *self)
{
	sim_assert_sched_held();
	while (self->state != TS_RUNNING) {
		if (S.nr_running == 0 && !unstick_locked())
			deadlock_locked();
		if (self->state == TS_RUNNING)
			break;
		task_sleep_locked(self, NULL);
	}
}

void sched_wait_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	if (S.det)
		det_switch_locked(t);
	else
		par_wait_locked(t);
}

/* A fresh thread waits for its first turn without touching the token. */
static void wait_first_turn_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	while (!(t->state == TS_RUNNING && (!S.det || S.token == t)))
		task_sleep_locked(t, NULL);
}

void sched_block_locked(struct task_struct *t, const char *what, bool wakeable)
{
	sim_assert_sched_held();
	t->relax_since_block = 0;
	explore_note_block_locked(t);
	t->state = TS_BLOCKED;
	t->blocked_on = what;
	t->wakeable = wakeable;
	S.nr_running--;
	cpu_release_locked(t);
	sched_wait_locked(t);
}

void sched_block_keep_cpu_locked(struct task_struct *t, const char *what)
{
	sim_assert_sched_held();
	explore_note_block_locked(t);
	t->state = TS_BLOCKED;
	t->blocked_on = what;
	S.nr_running--;
	sched_wait_locked(t);
}

static void task_exit_locked(struct task_struct *t)
{
	sim_assert_sched_held();
	t->exited = true;
	t->exited_unasked = !atomic_load(&t->should_stop);
	t->state = TS_DEAD;
	S.nr_running--;
	cpu_release_locked(t);
	if (t->stopper)
		sched_wake_locked(t->stopper);
	if (S.det) {
		struct task_struct *next = det_pick_locked();

		S.token = next;
		task_kick(next);
	} else if (S.nr_running == 0) {
		if (!unstick_locked())
			deadlock_locked();
	}
}

static void *task_main(void *arg)
{
	struct task_struct *t = arg;

	sim_current = t;
	SIM_LOCK();
	wait_first_turn_locked(t);
	while (t->is_idle && !t->should_stop) {
		SIM_UNLOCK();
		deliver_irqs(t);
		SIM_LOCK();
		if (!t->should_stop)
			sched_block_locked(t, "idle", false);
	}
	if (!t->is_idle) {
		SIM_UNLOCK();
		int ret = t->fn(t->data);

		SIM_LOCK();
		t->ret = ret;
	}
	task_exit_locked(t);
	SIM_UNLOCK();
	return NULL;
}

/*
 * A task's stack: 512 KB, not glibc's 8 MB. Every task is a thread, and
 * tests create and stop thousands of them (a kthread per CPU per scenario);
 * under memcheck each thread's stack costs in proportion to its size (8 MB:
 * 21 s of CPU for one lab 4 sweep that takes 2 s at 512 KB and 0.2 s
 * natively), and glibc keeps only 40 MB of stacks for reuse. The deepest
 * user is libdw's line-table reader behind KCSAN's reports and student-code
 * lookups, bounded at about 170 KB (its on-stack tables; 128 KB overflowed
 * on lab 7); a kernel's own thread stack is 16 KB.
 */
#define TASK_STACK_SIZE (512 << 10)


struct task_struct *task_create_locked(const char *name, int home, bool idle,
				       int (*fn)(void *), void *data)
{
	struct task_struct *t = calloc(1, sizeof(*t));

	sim_assert_sched_held();
	if (!t)
		sim_bug_locked(__FILE__, __LINE__, "out of memory creating a task");
	snprintf(t->comm, sizeof(t->comm), "%s", name);
	t->pid = S.next_pid++;
	t->state = TS_BLOCKED;
	t->blocked_on = idle ? "idle" : "its first run";
	t->cpu = -1;
	t->home = home;
	t->is_idle = idle;
	t->fn = fn;
	t->data = data;
	explore_note_block_locked(t);   /* the hung-task clock starts at its birth */
	INIT_LIST_HEAD(&t->runq_node);
	INIT_LIST_HEAD(&t->wait_node);
	list_add_tail(&t->all_node, &S.tasks);
	return t;
}

static void task_start_locked(struct task_struct *t)
{
	pthread_attr_t attr;

	sim_assert_sched_held();
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TASK_STACK_SIZE);
	int err = pthread_create(&t->thread, &attr, task_main, t);

	pthread_attr_destroy(&attr);

	if (err)
		sim_bug_locked(__FILE__, __LINE__, "pthread_create: %s", strerror(err));
	t->has_thread = true;
	if (!t->is_idle)
		sched_wake_locked(t);
}

/* ---- scheduling points ------------------------------------------------ */

static void livelock_locked(struct task_struct *t, const char *why)
{
	sim_assert_sched_held();
	sim_bug_locked(t->file ? t->file : "?", t->line,
		       "livelock: %s (task %s, CPU %d)", why, t->comm, t->cpu);
}

/*
 * Parallel mode, a scheduling point of @c's holder @t that is progress (not
 * cpu_relax()): the watchdog's count, then the interrupts posted to @c.
 * Per CPU and written by its holder only: no line shared between CPUs on the
 * readers' fast path.
 */
static inline void par_holder_point(struct task_struct *t, struct sim_cpu *c)
{
	atomic_store_explicit(&c->progress,
			      atomic_load_explicit(&c->progress, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (atomic_load_explicit(&c->nr_irqs, memory_order_relaxed))
		deliver_irqs(t);
}

void sched_point(const char *file, int line, bool relax)
{
	struct task_struct *t = sim_current;

	if (!t || !S.booted)
		return;
	t->file = file;
	t->line = line;
	if (relax) {
		t->relax_file = file;
		t->relax_line = line;
		t->relax_since_block++;
		if (++t->relax_streak > S.cfg.spin_limit && S.det) {
			SIM_LOCK();
			livelock_locked(t, "spinning in cpu_relax() without progress");
		}
	} else {
		t->relax_streak = 0;
	}
	if (S.det) {
		SIM_LOCK();
		if (++S.steps > S.cfg.max_steps)
			livelock_locked(t, "scheduling-point budget exhausted (max_steps)");
		explore_hung_check_locked();
		if (relax)
			S.relax_streak++;
		else
			sched_note_progress_locked();
		det_switch_locked(t);
		SIM_UNLOCK();
	} else if (relax) {
		sched_yield();
	} else if (t->cpu >= 0) {
		par_holder_point(t, cpu_of(t->cpu));
		return;
	} else {
		atomic_fetch_add_explicit(&S.progress, 1, memory_order_relaxed);
	}
	if (t->cpu >= 0 &&
	    atomic_load_explicit(&cpu_of(t->cpu)->nr_irqs, memory_order_relaxed))
		deliver_irqs(t);
}

void sched_access_point(struct task_struct *t)
{
	SIM_LOCK();
	if (++S.steps > S.cfg.max_steps)
		livelock_locked(t, "scheduling-point budget exhausted (max_steps)");
	explore_hung_check_locked();
	sched_note_progress_locked();  /* student code running is progress */
	t->relax_streak = 0;
	det_switch_locked(t);
	SIM_UNLOCK();
}

/*
 * The kernel's own scheduling points see memory as it is (views.c); a
 * test's named point (sim_point_at()) does not, so that a held task keeps
 * its view as it keeps its store buffer.
 */
void sim_sched_point(const char *file, int line)
{
	if (sim_current)
		views_sync(sim_current->cpu);
	sched_point(file, line, false);
}

void sim_cpu_relax(const char *file, int line)
{
	if (sim_current)
		views_sync(sim_current->cpu);
	sched_point(file, line, true);
}

/* ---- tasks and CPUs, the public side ----------------------------------- */

struct task_struct *current_task(void)
{
	return sim_current;
}

const char *task_comm(const struct task_struct *t)
{
	return t ? t->comm : "(none)";
}

int task_pid(const struct task_struct *t)
{
	return t ? t->pid : -1;
}

int task_cpu(const struct task_struct *t)
{
	return t ? t->cpu : -1;
}

int sim_smp_processor_id(const char *file, int line)
{
	struct task_struct *t = sim_current;

	if (!t)
		sim_bug(file, line, "smp_processor_id() on a thread that is not a task");
	if (t->cpu < 0)
		sim_bug(file, line, "smp_processor_id() by task %s, which holds no CPU",
			t->comm);
	return t->cpu;
}

void preempt_disable(void)
{
	if (sim_current)
		sim_current->preempt++;
}

void preempt_enable(void)
{
	struct task_struct *t = sim_current;

	if (!t)
		return;
	if (--t->preempt < 0)
		sim_bug(__FILE__, __LINE__, "preempt_enable() without preempt_disable()");
}

int preempt_count(void)
{
	return sim_current ? sim_current->preempt : 0;
}

void sim_might_sleep(const char *file, int line)
{
	struct task_struct *t = sim_current;

	if (!t || !S.booted)
		return;
	struct sim_cpu *c = t->cpu >= 0 ? cpu_of(t->cpu) : NULL;
	int irq = c && c->hardirq > 0, off = c && c->irqs_off;

	/*
	 * Linux prints the counts on the lines after the headline; a student
	 * reads the headline, so it names the first count that is wrong.
	 */
	if (irq || off || t->preempt || t->rcu_depth)
		sim_bug(file, line,
			"sleeping function called from invalid context: %s\n"
			"in_interrupt(): %d, irqs_disabled(): %d, pid: %d, name: %s\n"
			"preempt_count: %d, expected: 0\n"
			"RCU nest depth: %d, expected: 0",
			irq ? "in an interrupt handler" :
			off ? "with interrupts disabled (local_irq_save() without its restore?)" :
			t->preempt ? "with preemption disabled (a spinlock still held, or "
				     "preempt_disable() without its enable?)" :
			"inside an RCU read-side critical section (RCU nest depth "
			"not 0: does rcu_read_unlock() end what rcu_read_lock() began?)",
			irq, off, t->pid, t->comm, t->preempt, t->rcu_depth);
}

static void switch_to_home_locked(struct task_struct *t, const char *why)
{
	sim_assert_sched_held();
	t->state = TS_BLOCKED;
	t->blocked_on = why;
	S.nr_running--;
	cpu_release_locked(t);
	sched_wake_locked(t);
	sched_wait_locked(t);
}

void schedule(void)
{
	struct task_struct *t = sim_current;

	might_sleep();
	if (!t)
		return;
	SIM_LOCK();
	switch_to_home_locked(t, "schedule()");
	SIM_UNLOCK();
	sched_point(__FILE__, __LINE__, false);
}

/* The quiescent state a count read asked for (see cond_resched_fast()). */
static __attribute__((noinline)) void qs_report_asked(struct sim_cpu *c,
							 struct task_struct *t)
{
	/* Relaxed: the add below is the barrier; a request made after this
	 * store is answered by this add, or stays set for the next quiescent
	 * state (see cpu_quiescent_count()). */
	atomic_store_explicit(&c->qs_want, 0, memory_order_relaxed);
	atomic_fetch_add(&c->qs, 1);
	if (atomic_load(&c->qs_watchers)) {
		SIM_LOCK();
		qs_wake_locked(c, t);
		SIM_UNLOCK();
	}
}

/*
 * Parallel mode's cond_resched() when no task waits for this CPU: report the
 * quiescent state without S.lock, and only if someone asked, as the kernel's
 * rcu_all_qs() does nothing unless a grace period flagged the CPU.
 *
 * Asking is reading the count: cpu_quiescent_count() reads c->qs, then sets
 * c->qs_want. A quiescent state whose load of qs_want misses the request is
 * not counted, and need not be: the request, and so the count it answers,
 * come after it, and this CPU's next quiescent state sees the request (a
 * non-preemptible reader cannot span one, so every reader a grace period
 * waits for still ends before that one).
 *
 * A counted quiescent state is a seq_cst add, a full barrier: the CPU's
 * read-side accesses before it cannot be seen after it, and its later ones
 * cannot be done before it (the updater published, then read the count:
 * without the barrier, a reader's load after the count could still return
 * what the updater replaced, the store-buffering pattern). Its watchers are
 * a seq_cst load after the add; a waiter registers (seq_cst) and then re-reads
 * the count before it sleeps (sim_wait_sleep()): one of the two sees the
 * other, so no wake-up is lost, and S.lock is taken only when one sleeps.
 *
 * An uncounted quiescent state costs a few loads of lines this CPU reads and
 * rarely anyone writes, and the scheduling point's per-CPU store. The
 * might_sleep() checks are made here too; when one fails, or the CPU has
 * tasks queued, this returns false and cond_resched() takes the slow path,
 * which reports the bug or switches.
 */
static inline bool cond_resched_fast(struct task_struct *t)
{
	struct sim_cpu *c;

	if (S.det || t->cpu < 0 || !S.booted)
		return false;
	c = cpu_of(t->cpu);
	/*
	 * READ_ONCE(): two 4-byte loads, which the compiler may not merge
	 * into one 8-byte load of both neighbours. The read-side hook has just
	 * stored rcu_depth; a wider load over a narrower store still in flight
	 * cannot take its value from the store buffer and waits for it to
	 * drain (measured: the reader loop's cond_resched() took twice as long).
	 */
	if (READ_ONCE(t->preempt) || READ_ONCE(t->rcu_depth) || c->hardirq > 0 ||
	    c->irqs_off || atomic_load_explicit(&c->nr_queued, memory_order_relaxed))
		return false;
	if (atomic_load_explicit(&c->qs_want, memory_order_relaxed))
		qs_report_asked(c, t);
	t->file = __FILE__;
	t->line = __LINE__;
	t->relax_streak = 0;
	par_holder_point(t, c);
	return true;
}

/*
 * cond_resched() but its fast path: switch, or count under S.lock (always
 * in deterministic mode), or report what might_sleep() found. Out of line,
 * so that a compiler that sees the whole program (the benchmark's -flto)
 * can inline the fast path into a reader's loop, as the kernel's
 * cond_resched() is a check inline and a call only when there is work.
 */
static __attribute__((noinline)) void cond_resched_slow(struct task_struct *t)
{
	might_sleep();
	if (!t)
		return;
	SIM_LOCK();
	if (t->cpu >= 0 && !list_empty(&cpu_of(t->cpu)->runq))
		switch_to_home_locked(t, "cond_resched()");
	else if (t->cpu >= 0)
		note_qs_locked(cpu_of(t->cpu), t);
	SIM_UNLOCK();
	sched_point(__FILE__, __LINE__, false);
}

void cond_resched(void)
{
	struct task_struct *t = sim_current;

	if (!t || !cond_resched_fast(t))
		cond_resched_slow(t);
}

void migrate_to_cpu(int cpu)
{
	struct task_struct *t = sim_current;

	might_sleep();
	if (!t)
		return;
	if (cpu < -1 || cpu >= nr_cpu_ids)
		sim_bug(__FILE__, __LINE__, "migrate_to_cpu(%d): no such CPU", cpu);
	SIM_LOCK();
	t->home = cpu;
	switch_to_home_locked(t, "migrate_to_cpu()");
	SIM_UNLOCK();
}

/*
 * Parallel mode: a CPU a cpu_qs_wq waiter's condition read, to watch while it
 * sleeps. What it read is not kept: sim_wait_sleep() compares the counts with
 * those of sim_wait_prepare(), before the condition, so that a quiescent state
 * anywhere between the two keeps the waiter awake.
 */
static void qs_note_read(int cpu)
{
	struct task_struct *t = sim_current;

	if (t)
		t->qs_read |= UINT64_C(1) << cpu;
}

unsigned long cpu_quiescent_count(int cpu)
{
	struct sim_cpu *c = cpu_of(cpu);
	unsigned long n = atomic_load(&c->qs);

	/*
	 * Parallel mode: then ask @cpu to count its next quiescent state
	 * (cond_resched_fast()); deterministic mode counts every one under
	 * S.lock. The count is read first (seq_cst load, then the request):
	 * a request the CPU clears after this read is answered by an add
	 * after this read, so the count we return still moves. Requested the
	 * other way round, that add could come before the read and eat the
	 * request: the CPU would stop counting with the caller waiting.
	 * A request already set is not set again: if the CPU cleared it
	 * since, its add comes after our read (it made the count move, or
	 * our seq_cst load would have seen it and then the clear as well).
	 */
	if (!S.det && !atomic_load_explicit(&c->qs_want, memory_order_relaxed))
		atomic_store(&c->qs_want, 1);
	qs_note_read(cpu);
	return n;
}

bool sim_task_sleeps_on_timer(const struct task_struct *t, const char **file, int *line)
{
	bool timer;

	if (!t)
		return false;
	SIM_LOCK();
	timer = t->state == TS_BLOCKED && t->blocked_on &&
		!strcmp(t->blocked_on, "schedule_timeout()");
	if (timer && file)
		*file = t->file;
	if (timer && line)
		*line = t->line;
	SIM_UNLOCK();
	return timer;
}

long sim_task_polls(const struct task_struct *t, const char **file, int *line)
{
	long n = 0;

	if (!t)
		return 0;
	SIM_LOCK();
	/* a few: the scheduler calls the system idle once every runnable task
	 * has spun some 16 times with nothing changing (stalled_locked()) */
	if (t->state == TS_RUNNING && t->relax_since_block > 16) {
		n = t->relax_since_block;
		if (file)
			*file = t->relax_file && !module_range_may_hold(t->relax_file) ?
				t->relax_file : NULL;
		if (line)
			*line = t->relax_line;
	}
	SIM_UNLOCK();
	return n;
}

bool sim_cpu_in_atomic(int cpu)
{
	bool atomic;

	if (cpu < 0 || cpu >= NR_CPUS)
		return false;
	SIM_LOCK();
	atomic = cpu_of(cpu)->curr && cpu_of(cpu)->curr->preempt > 0;
	SIM_UNLOCK();
	return atomic;
}

bool idle_cpu(int cpu)
{
	SIM_LOCK();
	struct sim_cpu *c = cpu_of(cpu);
	bool idle = !c->curr || (c->curr->is_idle && c->hardirq == 0);

	qs_note_read(cpu);
	SIM_UNLOCK();
	return idle;
}

/*
 * The read-side hooks are scheduling points where a schedule is explored or
 * recorded: in deterministic mode, or with the trace on. In parallel mode
 * with the trace off (benchmarks) they only count the nesting, as the
 * kernel's rcu_read_lock() costs nothing; interrupts wait for the next
 * scheduling point.
 */
#define READ_HOOK_SCHED_POINT()                                 \
	do {                                                    \
		if (S.det || S.cfg.trace)                       \
			sched_point(__FILE__, __LINE__, false); \
	} while (0)

void rcu_lock_acquire(void)
{
	struct task_struct *t = sim_current;

	if (!t)
		return;
	if (t->cpu < 0 && S.booted)
		sim_bug(__FILE__, __LINE__,
			"rcu_read_lock() by task %s, which holds no CPU: RCU cannot see "
			"this reader (call migrate_to_cpu() first)", t->comm);
	if (t->rcu_depth++ == 0 && S.cfg.trace)
		trace_emit(t->cpu, t, TR_READ_LOCK, "rcu_read_lock", 0);
	READ_HOOK_SCHED_POINT();
}

void rcu_lock_release(void)
{
	struct task_struct *t = sim_current;

	if (!t)
		return;
	if (t->rcu_depth <= 0)
		sim_bug(__FILE__, __LINE__, "rcu_read_unlock() without rcu_read_lock()");
	if (--t->rcu_depth == 0 && S.cfg.trace)
		trace_emit(t->cpu, t, TR_READ_UNLOCK, "rcu_read_unlock", 0);
	READ_HOOK_SCHED_POINT();
}

int rcu_read_lock_depth(void)
{
	return sim_current ? sim_current->rcu_depth : 0;
}

/* ---- kthreads ---------------------------------------------------------- */

static struct task_struct *kthread_start(int (*fn)(void *), void *data, int cpu,
					 const char *name)
{
	kcsan_fence(); /* the new task sees what its creator stored */
	if (cpu < 0 || cpu >= nr_cpu_ids)
		sim_bug(__FILE__, __LINE__, "kthread %s: no CPU %d", name, cpu);
	SIM_LOCK();
	struct task_struct *t = task_create_locked(name, cpu, false, fn, data);

	task_start_locked(t);
	SIM_UNLOCK();
	sched_point(__FILE__, __LINE__, false);
	return t;
}

struct task_struct *kthread_run_on_cpu(int (*threadfn)(void *), void *data,
				       unsigned int cpu, const char *namefmt)
{
	char name[TASK_COMM_LEN];

	snprintf(name, sizeof(name), namefmt, cpu);
	return kthread_start(threadfn, data, (int)cpu, name);
}

struct task_struct *kthread_run(int (*fn)(void *), void *data,
				const char *namefmt, ...)
{
	va_list ap;

	SIM_LOCK();
	int cpu = S.next_kthread_cpu++ % nr_cpu_ids;

	SIM_UNLOCK();
	char name[TASK_COMM_LEN];

	va_start(ap, namefmt);
	vsnprintf(name, sizeof(name), namefmt, ap);
	va_end(ap);
	return kthread_start(fn, data, cpu, name);
}

bool kthread_should_stop(void)
{
	struct task_struct *t = sim_current;

	/* Atomic, written under S.lock: a reader loop that asks each time
	 * round does not take the kernel's lock for it. */
	return t && atomic_load(&t->should_stop);
}

static int task_stop_locked(struct task_struct *k)
{
	struct task_struct *t = sim_current;

	sim_assert_sched_held();
	k->stopped = true;
	k->should_stop = true;
	if (k->state == TS_BLOCKED && (k->wakeable || k->is_idle)) {
		list_del_init(&k->wait_node);
		sched_wake_locked(k);
	}
	while (!k->exited) {
		k->stopper = t;
		sched_block_locked(t, "kthread_stop()", false);
	}
	return k->ret;
}

int kthread_stop(struct task_struct *k)
{
	struct task_struct *t = sim_current;

	might_sleep();
	if (!k || k == t || k->is_idle)
		sim_bug(__FILE__, __LINE__, "kthread_stop() of %s by itself or of a non-kthread",
			task_comm(k));
	SIM_LOCK();
	if (k->stopped)
		sim_bug_locked(__FILE__, __LINE__, "kthread_stop(%s) called twice", k->comm);
	/* Linux frees a kthread that returned on its own: kthread_stop() would
	 * then use a freed task. Test code may join a thread this way (the
	 * simulation keeps it); student code must not. */
	if (k->exited_unasked && k->fn && kcsan_pc_is_student((uintptr_t)k->fn) == 1)
		sim_bug_locked(__FILE__, __LINE__, "kthread_stop(%s): its function %s() "
			       "returned before anyone asked it to stop, and Linux frees such a "
			       "task at once: a real kthread_stop() would use freed memory. A "
			       "kthread that is stopped waits for kthread_should_stop() before "
			       "it returns", k->comm, callback_name((rcu_callback_t)(uintptr_t)k->fn));
	if (!k->exited && k->home >= 0 && atomic_load(&cpu_of(k->home)->offline))
		sim_bug_locked(__FILE__, __LINE__, "kthread_stop(%s): its CPU %d is offline, so "
			       "it can never run to its end (cpu_up() the CPU first)",
			       k->comm, k->home);
	int ret = task_stop_locked(k);

	SIM_UNLOCK();
	return ret;
}

void wake_up_process(struct task_struct *t)
{
	kcsan_fence(); /* a wake-up is a release: the waker's stores first */
	SIM_LOCK();
	if (t->state == TS_BLOCKED && t->wakeable) {
		list_del_init(&t->wait_node);
		sched_wake_locked(t);
	}
	SIM_UNLOCK();
}

/* ---- boot and halt ----------------------------------------------------- */

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return def;
	long v = strtol(s, &end, 0);

	return *end ? def : v;
}

/* A lab whose manifest turns a step of the memory model on says so here (cmake/Checkers.cmake). */
__attribute__((weak)) const int sim_lab_race_watch = 0;
__attribute__((weak)) const int sim_lab_late_stores = 0;
__attribute__((weak)) const int sim_lab_early_loads = 0;

struct sim_config sim_default_config(void)
{
	const char *mode = getenv("WORKBOOK_MODE");
	const char *sched = getenv("WORKBOOK_SCHED");
	struct sim_config cfg = {
		.nr_cpus = 4,
		.mode = (mode && !strcmp(mode, "parallel")) ? SIM_PARALLEL
							    : SIM_DETERMINISTIC,
		.seed = (uint64_t)env_long("WORKBOOK_SEED", 1),
		.auto_time = true,
		.check_module_callbacks = true,
		.ipi_wait_sleeps = false,
		.trace = true,
		.max_steps = 2000000,
		.spin_limit = 20000,
		.livelock_ms = 10000,
		.kcsan = env_long("WORKBOOK_KCSAN", 1) != 0,
		.weak_memory = env_long("WORKBOOK_WEAK_MEMORY", 1) != 0,
		.access_preempt = (int)env_long("WORKBOOK_ACCESS_PREEMPT", 2),
		.races = env_long("WORKBOOK_KCSAN_RACES", 1) != 0,
		.race_watch = env_long("WORKBOOK_RACE_WATCH", sim_lab_race_watch) != 0,
		.late_stores = env_long("WORKBOOK_LATE_STORES", sim_lab_late_stores) != 0,
		.early_loads = env_long("WORKBOOK_EARLY_LOADS", sim_lab_early_loads) != 0,
		.sched = (sched && !strcmp(sched, "pct")) ? SIM_SCHED_PCT : SIM_SCHED_RANDOM,
		.pct_depth = (int)env_long("WORKBOOK_PCT_DEPTH", 3),
		.pct_steps = env_long("WORKBOOK_PCT_STEPS", 5000),
		.hung_steps = env_long("WORKBOOK_HUNG_STEPS", 1000000),
		.hung_ms = (int)env_long("WORKBOOK_HUNG_MS", harness_hung_ms()),
	};
	return cfg;
}

struct sim_config sim_forced_config(void)
{
	struct sim_config cfg = sim_default_config();

	cfg.mode = SIM_DETERMINISTIC;
	return cfg;
}

void sim_boot(const struct sim_config *cfg)
{
	struct sim_config c = cfg ? *cfg : sim_default_config();
	const char *force = getenv("WORKBOOK_MODE");

	/* the replay of a parallel test's failure: its scenario, deterministically */
	if (force && !strcmp(force, "deterministic"))
		c.mode = SIM_DETERMINISTIC;
	if (S.booted)
		sim_bug(__FILE__, __LINE__, "sim_boot() while already booted");
	if (c.nr_cpus < 1 || c.nr_cpus > NR_CPUS)
		sim_bug(__FILE__, __LINE__, "sim_boot(): nr_cpus %d out of 1..%d",
			c.nr_cpus, NR_CPUS);
	SIM_LOCK();
	S.cfg = c;
	S.det = c.mode == SIM_DETERMINISTIC;
	S.rng = c.seed * 0x2545f4914f6cdd1dull + 1;
	S.steps = 0;
	S.relax_streak = 0;
	S.now_jiffies = 0;
	S.next_pid = 0;
	S.next_kthread_cpu = 0;
	S.nr_running = 0;
	S.quiescer = NULL;
	S.warns = 0;
	S.expect_bug = NULL;
	S.expect_student_bug = false;
	S.expect_bug_in_irq = false;
	S.likely_cause[0] = 0;
	memset(S.points, 0, sizeof(S.points));
	INIT_LIST_HEAD(&S.tasks);
	INIT_LIST_HEAD(&cpu_qs_wq.waiters);
	cpu_qs_wq.seq = 0;
	nr_cpu_ids = c.nr_cpus;
	for (int i = 0; i < NR_CPUS; i++) {
		struct sim_cpu *p = &S.cpus[i];

		free(p->irqs);
		memset(p, 0, sizeof(*p));
		p->id = i;
		INIT_LIST_HEAD(&p->runq);
	}
	storebuf_reset();
	kcsan_boot(c.seed);
	explore_boot_locked();
	trace_reset(c.nr_cpus);
	timers_reset();
	slab_reset();
	modules_reset_counts();
	hotplug_reset_locked();
	S.booted = true;
	S.ever_booted = true;

	struct task_struct *t = task_create_locked("test", 0, false, NULL, NULL);

	sim_current = t;
	S.boot_task = t;
	S.token = t;
	t->home = -1;
	make_running_locked(t);
	for (int i = 0; i < c.nr_cpus; i++) {
		char name[32];

		snprintf(name, sizeof(name), "swapper/%d", i % 100);
		S.cpus[i].idle = task_create_locked(name, i, true, NULL, NULL);
		task_start_locked(S.cpus[i].idle);
	}
	SIM_UNLOCK();
	watchdog_start();
}

long sim_halt(void)
{
	struct task_struct *self = sim_current, *t, *n;

	if (!S.booted)
		return 0;
	if (self != S.boot_task)
		sim_bug(__FILE__, __LINE__, "sim_halt() from a task other than the one that booted");
	modules_halt();
	SIM_LOCK();
	hotplug_halt_locked();
	self->preempt = 0;
	self->rcu_depth = 0;
	for (;;) {
		struct task_struct *k = NULL;

		list_for_each_entry(t, &S.tasks, all_node)
			if (t != self && !t->is_idle && !t->exited && !t->stopped) {
				k = t;
				break;
			}
		if (!k)
			break;
		task_stop_locked(k);
	}
	for (int i = 0; i < nr_cpu_ids; i++)
		task_stop_locked(S.cpus[i].idle);
	S.booted = false;
	S.det = false;
	SIM_UNLOCK();
	watchdog_stop();
	list_for_each_entry_safe(t, n, &S.tasks, all_node) {
		if (t->has_thread)
			pthread_join(t->thread, NULL);
		list_del(&t->all_node);
		free(t);
	}
	for (int i = 0; i < NR_CPUS; i++) {
		free(S.cpus[i].irqs);
		S.cpus[i].irqs = NULL;
	}
	kcsan_halt();
	sim_current = NULL;
	timers_reset();
	return slab_halt();
}

bool sim_booted(void)
{
	return S.booted;
}

const struct sim_config *sim_config(void)
{
	return &S.cfg;
}

uint64_t sim_seed(void)
{
	return S.cfg.seed;
}
