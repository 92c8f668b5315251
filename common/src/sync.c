/*
 * sync.c - spinlocks, mutexes, completions and wait queues.
 *
 * Rule kept here: every wait is a scheduling point or a sleep under S.lock,
 * never a raw spin or a raw condition variable, so that the deterministic
 * scheduler sees it and a deadlock is reported rather than hung. Sleeping
 * primitives start with might_sleep(); releasing ones are release barriers.
 */
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/completion.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include "internal.h"

/* ---- spinlocks --------------------------------------------------------- */

void spin_lock_init(spinlock_t *l)
{
	atomic_store(&l->locked, 0);
	atomic_store(&l->owner_cpu, -1);
	l->name = "spinlock";
	l->file = NULL;
	l->line = 0;
}

static int this_cpu_id(void)
{
	struct task_struct *t = sim_current;

	return t ? t->cpu : -1;
}

void sim_spin_lock(spinlock_t *l, const char *file, int line)
{
	int me = this_cpu_id();

	preempt_disable();
	sim_sched_point(file, line);
	for (;;) {
		int unlocked = 0;

		if (atomic_compare_exchange_strong(&l->locked, &unlocked, 1))
			break;
		if (me >= 0 && atomic_load(&l->owner_cpu) == me)
			sim_bug(file, line,
				"spinlock recursion: deadlock on CPU %d: %s is already "
				"held on this CPU (taken at %s:%d)%s",
				me, l->name ? l->name : "lock", l->file ? l->file : "?",
				l->line,
				in_irq() ? "; an interrupt handler wants a lock that the "
					   "task it interrupted holds, taken there with "
					   "interrupts enabled" : "");
		sim_cpu_relax(file, line);
	}
	views_sync(me);    /* the section sees what the last holder made visible */
	atomic_store(&l->owner_cpu, me);
	l->file = file;
	l->line = line;
}

int sim_spin_trylock(spinlock_t *l, const char *file, int line)
{
	int unlocked = 0;

	preempt_disable();
	sim_sched_point(file, line);
	if (atomic_compare_exchange_strong(&l->locked, &unlocked, 1)) {
		views_sync(this_cpu_id());
		atomic_store(&l->owner_cpu, this_cpu_id());
		l->file = file;
		l->line = line;
		return 1;
	}
	preempt_enable();
	return 0;
}

void sim_spin_unlock(spinlock_t *l, const char *file, int line)
{
	if (!atomic_load(&l->locked))
		sim_bug(file, line, "spin_unlock() of %s, which is not locked",
			l->name ? l->name : "lock");
	/* The critical section's last scheduling point: interrupts may land here. */
	sim_sched_point(file, line);
	atomic_store(&l->owner_cpu, -1);
	sim_fence(__ATOMIC_RELEASE);
	atomic_store_explicit(&l->locked, 0, memory_order_release);
	preempt_enable();
}

/* ---- mutexes ----------------------------------------------------------- */

void mutex_init(struct mutex *m)
{
	m->owner = NULL;
	INIT_LIST_HEAD(&m->waiters);
	m->name = "mutex";
}

void sim_mutex_lock(struct mutex *m, const char *file, int line)
{
	struct task_struct *t = sim_current;

	sim_might_sleep(file, line);
	sim_sched_point(file, line);
	SIM_LOCK();
	if (m->owner == t)
		sim_bug_locked(file, line, "mutex_lock(%s): recursive locking by %s",
			       m->name, t->comm);
	if (!m->owner) {
		m->owner = t;
	} else {
		t->granted = false;
		list_add_tail(&t->wait_node, &m->waiters);
		while (!t->granted)
			sched_block_locked(t, m->name ? m->name : "mutex", false);
	}
	SIM_UNLOCK();
}

void mutex_unlock(struct mutex *m)
{
	struct task_struct *t = sim_current;

	sim_sched_point(__FILE__, __LINE__);
	sim_fence(__ATOMIC_RELEASE);
	SIM_LOCK();
	if (m->owner != t)
		sim_bug_locked(__FILE__, __LINE__, "mutex_unlock(%s) by %s, not its owner",
			       m->name, task_comm(t));
	m->owner = NULL;
	if (!list_empty(&m->waiters)) {
		struct task_struct *w =
			list_first_entry(&m->waiters, struct task_struct, wait_node);

		list_del_init(&w->wait_node);
		m->owner = w;
		w->granted = true;
		sched_wake_locked(w);
	}
	SIM_UNLOCK();
}

int mutex_trylock(struct mutex *m)
{
	int ok = 0;

	sim_sched_point(__FILE__, __LINE__);
	SIM_LOCK();
	if (!m->owner) {
		m->owner = sim_current;
		ok = 1;
	}
	SIM_UNLOCK();
	return ok;
}

bool mutex_is_locked(struct mutex *m)
{
	return SIM_LOCKED(bool, m->owner != NULL);
}

/* ---- completions ------------------------------------------------------- */

void init_completion(struct completion *x)
{
	SIM_LOCK();
	x->done = 0;
	INIT_LIST_HEAD(&x->waiters);
	SIM_UNLOCK();
}

void reinit_completion(struct completion *x)
{
	SIM_LOCK();
	x->done = 0;
	SIM_UNLOCK();
}

/* Consume one complete() if one is there; complete_all()'s is never used up. */
static bool completion_take_locked(struct completion *x)
{
	sim_assert_sched_held();
	if (x->done == COMPLETION_DONE_ALL)
		return true;
	if (!x->done)
		return false;
	x->done--;
	return true;
}

void sim_wait_for_completion(struct completion *x, const char *file, int line)
{
	struct task_struct *t = sim_current;

	sim_might_sleep(file, line);
	sim_sched_point(file, line);
	SIM_LOCK();
	if (completion_take_locked(x)) {
		SIM_UNLOCK();
		return;
	}
	t->granted = false;
	list_add_tail(&t->wait_node, &x->waiters);
	while (!t->granted)
		sched_block_locked(t, "wait_for_completion()", false);
	SIM_UNLOCK();
}

static void complete_one_locked(struct completion *x)
{
	struct task_struct *w =
		list_first_entry(&x->waiters, struct task_struct, wait_node);

	sim_assert_sched_held();
	list_del_init(&w->wait_node);
	w->granted = true;
	sched_wake_locked(w);
}

void complete(struct completion *x)
{
	kcsan_fence(); /* a wake-up is a release: the waker's stores first */
	sim_sched_point(__FILE__, __LINE__);
	SIM_LOCK();
	if (!list_empty(&x->waiters))
		complete_one_locked(x);
	else if (x->done != COMPLETION_DONE_ALL)
		x->done++;
	SIM_UNLOCK();
}

void complete_all(struct completion *x)
{
	kcsan_fence(); /* a wake-up is a release: the waker's stores first */
	sim_sched_point(__FILE__, __LINE__);
	SIM_LOCK();
	x->done = COMPLETION_DONE_ALL;
	while (!list_empty(&x->waiters))
		complete_one_locked(x);
	SIM_UNLOCK();
}

bool completion_done(struct completion *x)
{
	return SIM_LOCKED(bool, x->done != 0);
}

bool try_wait_for_completion(struct completion *x)
{
	return SIM_LOCKED(bool, completion_take_locked(x));
}

/* ---- wait queues ------------------------------------------------------- */

void init_waitqueue_head(struct wait_queue_head *wq)
{
	SIM_LOCK();
	wq->seq = 0;
	INIT_LIST_HEAD(&wq->waiters);
	SIM_UNLOCK();
}

/* Deterministic mode: the CPUs whose next quiescent state may change the waiter's mind. */
static uint64_t busy_cpus_locked(void)
{
	uint64_t busy = 0;

	sim_assert_sched_held();
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct sim_cpu *c = cpu_of(cpu);

		if (c->curr && !(c->curr->is_idle && c->hardirq == 0))
			busy |= UINT64_C(1) << cpu;
	}
	return busy;
}

unsigned long sim_wait_prepare(struct wait_queue_head *wq, const char *file, int line)
{
	struct task_struct *t = sim_current;

	sim_sched_point(file, line);
	SIM_LOCK();
	unsigned long seq = wq->seq;

	if (wq == &cpu_qs_wq && t) {
		t->qs_busy = busy_cpus_locked();
		/* Parallel mode: start recording what the condition reads;
		 * a condition that reads no CPU watches them all, from here. */
		t->qs_read = 0;
		for (int cpu = 0; cpu < nr_cpu_ids; cpu++)
			t->qs_seen[cpu] = atomic_load(&cpu_of(cpu)->qs);
	}

	SIM_UNLOCK();
	return seq;
}

/*
 * Parallel mode, cpu_qs_wq: register @t with the CPUs its condition read (all
 * CPUs if none), then re-read their counts: false if one moved since @t
 * prepared (before its condition read them), and @t must not sleep. The
 * registration comes first (a seq_cst add), so cond_resched()'s lock-free
 * fast path, which counts first and then looks for watchers, either sees @t
 * or is seen here.
 */
static bool qs_watch_locked(struct task_struct *t)
{
	uint64_t all = nr_cpu_ids >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << nr_cpu_ids) - 1;
	uint64_t mask = t->qs_read ? t->qs_read : all;

	sim_assert_sched_held();
	t->qs_watch = mask;
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (mask & (UINT64_C(1) << cpu))
			atomic_fetch_add(&cpu_of(cpu)->qs_watchers, 1);
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++)
		if ((mask & (UINT64_C(1) << cpu)) &&
		    atomic_load(&cpu_of(cpu)->qs) != t->qs_seen[cpu]) {
			qs_unwatch_locked(t);
			return false;
		}
	return true;
}

void sim_wait_sleep(struct wait_queue_head *wq, unsigned long seq,
		    const char *file, int line)
{
	struct task_struct *t = sim_current;

	sim_might_sleep(file, line);
	/* The lost-wake-up window: the condition was false, the sleep not begun. */
	sim_point_at("wait_event:sleep", file, line);
	SIM_LOCK();
	/* kthread_stop() in the window wakes no queue: do not sleep through it. */
	if (wq->seq == seq && !t->should_stop &&
	    (S.det || wq != &cpu_qs_wq || qs_watch_locked(t))) {
		t->file = file;
		t->line = line;
		list_add_tail(&t->wait_node, &wq->waiters);
		sched_block_locked(t, "wait_event()", true);
		list_del_init(&t->wait_node);
		qs_unwatch_locked(t);
	}
	SIM_UNLOCK();
}

void wake_up(struct wait_queue_head *wq)
{
	kcsan_fence(); /* a wake-up is a release: the waker's stores first */
	SIM_LOCK();
	wq->seq++;
	while (!list_empty(&wq->waiters)) {
		struct task_struct *w =
			list_first_entry(&wq->waiters, struct task_struct, wait_node);

		list_del_init(&w->wait_node);
		sched_wake_locked(w);
	}
	SIM_UNLOCK();
	sim_sched_point(__FILE__, __LINE__);
}
