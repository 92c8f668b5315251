/*
 * srcu.c - sleepable RCU: per-CPU reader counters, two indices (lab 5).
 *
 * Rule kept here: a reader adds one to its CPU's lock counter of the index
 * it took, and later one to the unlock counter of the *same* index (on
 * whatever CPU it ends on). An index is free of readers when, summed over
 * every CPU, its unlocks equal its locks -- provided the unlocks are summed
 * first, then a full barrier, then the locks: every unlock counted then has
 * its lock counted too, so equality cannot be faked by a reader that came
 * and went during the count. synchronize_srcu() moves new readers to the
 * other index and waits for the old one to drain; it waits for *both*
 * indices (the one it leaves, and first the one it enters), because a reader
 * may take an index just before a flip and count itself just after it.
 *
 * Callbacks: per-CPU queues, one kthread per CPU and domain, as lab 4, but
 * each queue and its pending count change only under its CPU's sdp->lock
 * (Tree SRCU's srcu_data lock); each batch waits for a grace period of its
 * own domain.
 */
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/wait.h>
#include <sim/trace.h>

int srcu_read_lock(struct srcu_struct *ssp)
{
	/* TODO 1: take the current index (the low bit of ssp->srcu_idx), add
	 * one to this CPU's lock counter for it, with interrupts off (an
	 * interrupt handler on this CPU may be a reader too), then a full
	 * barrier so that the section's loads cannot move before the count.
	 * Return the index. */
	/* BEGIN SOLUTION */
	struct srcu_data *sdp;
	unsigned long flags;
	int idx;

	local_irq_save(flags);
	idx = READ_ONCE(ssp->srcu_idx) & 1;
	sdp = &ssp->sda[smp_processor_id()];
	WRITE_ONCE(sdp->srcu_lock_count[idx], sdp->srcu_lock_count[idx] + 1);
	local_irq_restore(flags);
	smp_mb(); /* the count, before any load of the section */
	return idx;
	/* END SOLUTION */
	/* STARTER: (void)ssp; */
	/* STARTER: return 0; */
}

void srcu_read_unlock(struct srcu_struct *ssp, int idx)
{
	/* TODO 1: a full barrier (the section's accesses before the count),
	 * then add one to *this* CPU's unlock counter of @idx -- the index the
	 * reader took, whatever the current one is now -- interrupts off. */
	/* BEGIN SOLUTION */
	struct srcu_data *sdp;
	unsigned long flags;

	smp_mb(); /* the section's accesses, before the count */
	local_irq_save(flags);
	sdp = &ssp->sda[smp_processor_id()];
	WRITE_ONCE(sdp->srcu_unlock_count[idx], sdp->srcu_unlock_count[idx] + 1);
	local_irq_restore(flags);
	/* END SOLUTION */
	/* STARTER: (void)ssp; */
	/* STARTER: (void)idx; */
}

/*
 * srcu_readers_done() - true if no reader is inside index @idx: the sum of
 * its unlock counters equals the sum of its lock counters.
 */
static bool srcu_readers_done(struct srcu_struct *ssp, int idx)
{
	/* TODO 2: is @idx free of readers? Sum every CPU's counters of @idx
	 * (READ_ONCE() each: other CPUs change them). Which sum comes first,
	 * and what stands between them, is the point: see "Summing". */
	/* BEGIN SOLUTION */
	unsigned long locks = 0, unlocks = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		unlocks += READ_ONCE(ssp->sda[cpu].srcu_unlock_count[idx]);
	smp_mb(); /* every unlock counted above has its lock counted below */
	for_each_possible_cpu(cpu)
		locks += READ_ONCE(ssp->sda[cpu].srcu_lock_count[idx]);
	return locks == unlocks;
	/* END SOLUTION */
	/* STARTER: (void)ssp; */
	/* STARTER: (void)idx; */
	/* STARTER: return true; */
}

/* Poll until index @idx has no reader left; sleep a jiffy between looks. */
static void srcu_wait_for_readers(struct srcu_struct *ssp, int idx)
{
	/* TODO 2: until srcu_readers_done(), msleep(1): readers may sleep for
	 * long, so spinning is no way to wait for them. */
	/* BEGIN SOLUTION */
	while (!srcu_readers_done(ssp, idx))
		msleep(1);
	/* END SOLUTION */
	/* STARTER: (void)srcu_readers_done; */
	/* STARTER: (void)ssp; */
	/* STARTER: (void)idx; */
}

void synchronize_srcu(struct srcu_struct *ssp)
{
	/* TODO 3: one grace period of *this* domain: process context only,
	 * one at a time per domain, and the waits and the flip that "Two
	 * indices" explains (which index first, and why both), with full
	 * barriers wherever the caller's accesses and the counts must not
	 * pass each other (the handout's Background says where). */
	/* BEGIN SOLUTION */
	int idx;

	BUG_ON(in_interrupt());
	mutex_lock(&ssp->srcu_gp_mutex);
	smp_mb(); /* the caller's updates, before the first count */
	idx = READ_ONCE(ssp->srcu_idx) & 1;
	/* Readers that took idx ^ 1 before the last flip and counted
	 * themselves only after it: they are older than this call. */
	srcu_wait_for_readers(ssp, idx ^ 1);
	WRITE_ONCE(ssp->srcu_idx, ssp->srcu_idx + 1);
	smp_mb(); /* the flip, before the second count */
	srcu_wait_for_readers(ssp, idx);
	smp_mb(); /* the readers' accesses, before what the caller does next */
	mutex_unlock(&ssp->srcu_gp_mutex);
	/* END SOLUTION */
	/* STARTER: (void)srcu_wait_for_readers; */
	/* STARTER: (void)ssp; */
}

/* TODO 4 (helper): append @head to @sdp's queue and count it pending; sdp->lock held. */
/* BEGIN SOLUTION */
static void srcu_enqueue_locked(struct srcu_data *sdp, struct rcu_head *head)
{
	*sdp->tail = head;
	sdp->tail = &head->next;
	WRITE_ONCE(sdp->pending, sdp->pending + 1);
}
/* END SOLUTION */

void call_srcu(struct srcu_struct *ssp, struct rcu_head *head, rcu_callback_t func)
{
	/* TODO 4: report @head with trace_rcu_callback_queued(head) while it
	 * is still yours; queue it at the tail of this CPU's queue in @ssp and
	 * count it pending, under sdp->lock taken with interrupts off (an
	 * interrupt on this CPU may call call_srcu() too); then wake this CPU's
	 * kthread (lab 4's call_rcu(), per domain, with Tree SRCU's lock). */
	/* BEGIN SOLUTION */
	struct srcu_data *sdp = &ssp->sda[smp_processor_id()];
	unsigned long flags;

	head->func = func;
	head->next = NULL;
	trace_rcu_callback_queued(head);
	spin_lock_irqsave(&sdp->lock, flags);
	srcu_enqueue_locked(sdp, head);
	spin_unlock_irqrestore(&sdp->lock, flags);
	wake_up(&sdp->wq);
	/* END SOLUTION */
	/* STARTER: (void)ssp; */
	/* STARTER: (void)head; */
	/* STARTER: (void)func; */
}

/* TODO 4 (helpers): taking the whole queue, and counting a callback no
 * longer pending, under sdp->lock as call_srcu() does. */
/* BEGIN SOLUTION */
static struct rcu_head *srcu_take_queue(struct srcu_data *sdp)
{
	struct rcu_head *list;
	unsigned long flags;

	spin_lock_irqsave(&sdp->lock, flags);
	list = sdp->head;
	sdp->head = NULL;
	sdp->tail = &sdp->head;
	spin_unlock_irqrestore(&sdp->lock, flags);
	return list;
}

static void srcu_invoked_one(struct srcu_data *sdp)
{
	unsigned long flags;

	spin_lock_irqsave(&sdp->lock, flags);
	WRITE_ONCE(sdp->pending, sdp->pending - 1);
	spin_unlock_irqrestore(&sdp->lock, flags);
}
/* END SOLUTION */

/*
 * srcu_invoke_callbacks() - one batch of this CPU's callbacks of one
 * domain: everything queued so far waits for a grace period of the domain
 * that starts now, then runs (Linux's work function of the same name).
 */
static void srcu_invoke_callbacks(struct srcu_data *sdp)
{
	/* TODO 4: take the whole queue, synchronize_srcu() of this domain,
	 * then, starting with rcu_cb_pass_begin(), invoke the batch oldest
	 * first with rcu_invoke_callback(), each one then no longer pending. A
	 * callback may free the object its rcu_head lies in. */
	/* BEGIN SOLUTION */
	struct rcu_head *list = srcu_take_queue(sdp), *next;

	synchronize_srcu(sdp->ssp);
	rcu_cb_pass_begin();
	for (; list; list = next) {
		next = list->next;
		rcu_invoke_callback(list);
		srcu_invoked_one(sdp);
	}
	/* END SOLUTION */
	/* STARTER: (void)sdp; */
	/* STARTER: sim_bug(__FILE__, __LINE__, "srcu_invoke_callbacks(): write TODO 4 first"); */
}

/* The body of "srcu/N" (given): sleep until this CPU has callbacks of the domain. */
static int srcu_cb_kthread(void *arg)
{
	struct srcu_data *sdp = arg;

	while (!kthread_should_stop()) {
		wait_event(sdp->wq, READ_ONCE(sdp->head) || kthread_should_stop());
		if (kthread_should_stop())
			break;
		srcu_invoke_callbacks(sdp);
		cond_resched();
	}
	return 0;
}

int init_srcu_struct(struct srcu_struct *ssp)
{
	int cpu;

	ssp->srcu_idx = 0;
	ssp->name = ssp->name ? ssp->name : "srcu";
	mutex_init(&ssp->srcu_gp_mutex);
	mutex_init(&ssp->srcu_barrier_mutex);
	init_completion(&ssp->srcu_barrier_completion);
	atomic_set(&ssp->srcu_barrier_cpu_count, 0);
	for_each_possible_cpu(cpu) {
		struct srcu_data *sdp = &ssp->sda[cpu];

		for (int i = 0; i < 2; i++) {
			sdp->srcu_lock_count[i] = 0;
			sdp->srcu_unlock_count[i] = 0;
		}
		spin_lock_init(&sdp->lock);
		sdp->head = NULL;
		sdp->tail = &sdp->head;
		sdp->pending = 0;
		sdp->ssp = ssp;
		sdp->kthread = NULL;
		init_waitqueue_head(&sdp->wq);
		/* TODO 4: start this CPU's callback kthread, srcu_cb_kthread(),
		 * bound to it, "srcu/N". */
		/* BEGIN SOLUTION */
		sdp->kthread = kthread_run_on_cpu(srcu_cb_kthread, sdp, cpu, "srcu/%u");
		/* END SOLUTION */
		/* STARTER: (void)srcu_cb_kthread; */
	}
	return 0;
}

/* TODO 5 (helpers): the marker's callback (the last one completes) and the
 * function each CPU runs to queue its own marker. */
/* BEGIN SOLUTION */
static void srcu_barrier_cb(struct rcu_head *rhp)
{
	struct srcu_data *sdp = container_of(rhp, struct srcu_data, barrier_head);
	struct srcu_struct *ssp = sdp->ssp;

	if (atomic_dec_and_test(&ssp->srcu_barrier_cpu_count))
		complete(&ssp->srcu_barrier_completion);
}

/* Runs on the CPU whose marker it queues (a cross-call). */
static void srcu_barrier_func(void *arg)
{
	struct srcu_struct *ssp = arg;

	atomic_inc(&ssp->srcu_barrier_cpu_count);
	call_srcu(ssp, &ssp->sda[smp_processor_id()].barrier_head, srcu_barrier_cb);
}
/* END SOLUTION */

void srcu_barrier(struct srcu_struct *ssp)
{
	/* TODO 5: lab 4's rcu_barrier(), for this domain's queues: process
	 * context only; one barrier of the domain at a time; the count starts
	 * at 1 (the barrier's own); each CPU queues its own marker (a
	 * cross-call to every CPU, waiting for it); drop the barrier's own
	 * count; wait for the completion. */
	/* BEGIN SOLUTION */
	int cpu;

	BUG_ON(in_interrupt());
	mutex_lock(&ssp->srcu_barrier_mutex);
	init_completion(&ssp->srcu_barrier_completion);
	atomic_set(&ssp->srcu_barrier_cpu_count, 1);
	for_each_possible_cpu(cpu)
		smp_call_function_single(cpu, srcu_barrier_func, ssp, 1);
	if (atomic_dec_and_test(&ssp->srcu_barrier_cpu_count))
		complete(&ssp->srcu_barrier_completion);
	wait_for_completion(&ssp->srcu_barrier_completion);
	mutex_unlock(&ssp->srcu_barrier_mutex);
	/* END SOLUTION */
	/* STARTER: (void)ssp; */
}

/* TODO 6 (helpers): is a reader inside either index? Is a callback pending on any CPU? */
/* BEGIN SOLUTION */
static bool srcu_readers_active(struct srcu_struct *ssp)
{
	return !srcu_readers_done(ssp, 0) || !srcu_readers_done(ssp, 1);
}

static bool srcu_cbs_pending(struct srcu_struct *ssp)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (READ_ONCE(ssp->sda[cpu].pending))
			return true;
	return false;
}
/* END SOLUTION */

void cleanup_srcu_struct(struct srcu_struct *ssp)
{
	int cpu;

	/* TODO 6: a BUG (BUG_ON()) while a reader is still inside either index,
	 * and while a callback is still queued or running on any CPU -- before
	 * anything is stopped. */
	/* BEGIN SOLUTION */
	BUG_ON(srcu_readers_active(ssp));
	BUG_ON(srcu_cbs_pending(ssp));
	/* END SOLUTION */
	for_each_possible_cpu(cpu) {
		struct srcu_data *sdp = &ssp->sda[cpu];

		if (sdp->kthread)
			kthread_stop(sdp->kthread);
		sdp->kthread = NULL;
	}
}
