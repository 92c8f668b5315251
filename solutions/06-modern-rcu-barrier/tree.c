/*
 * tree.c - today's rcu_barrier(), on per-CPU segmented callback lists (lab 6).
 *
 * Rule kept here: a CPU's callbacks stay on that CPU's one list, in the
 * order queued, from call_rcu() until they have been invoked; two tail
 * pointers cut the list into DONE (grace period over), WAIT (in the grace
 * period the CPU's kthread waits for) and NEXT (no grace period asked for
 * yet), and ->len counts each callback until it has been invoked. So a
 * marker linked behind a list's last callback runs after all of them, and a
 * list whose ->len is 0 needs no marker. While its CPU is online, only that
 * CPU changes its list (interrupts off); once the CPU is offline, only
 * holders of rcu_state.barrier_lock do, and the hotplug callback moves the
 * whole list behind a live CPU's. A barrier returns only after every
 * marker it linked has run.
 *
 * Grace periods come from lab 1 (synchronize_rcu() in rcu.c). This file
 * replaces lab 4's call_rcu() and rcu_barrier().
 */
/* BEGIN SOLUTION */
/*
 * The barrier's own count: a barrier links each marker first and counts it
 * after, so its own count must keep the completion off while a marker that
 * is linked but not yet counted runs.
 */
/* END SOLUTION */
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/completion.h>
#include <linux/compiler.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/interrupt.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <sim/trace.h>
#include "lab6.h"

/* Callbacks invoked per pass unless rcu_set_blimit() says otherwise (Linux: 10). */
#define RCU_DEFAULT_BLIMIT 10

/* The segments, in list order. Segment i ends at *tails[i]. */
enum { RCU_DONE_TAIL, RCU_WAIT_TAIL, RCU_NEXT_TAIL, RCU_CBLIST_NSEGS };

/*
 * One CPU's callbacks (Linux's struct rcu_segcblist, with one WAIT segment
 * instead of two). tails[i] points at the ->next of segment i's last
 * callback or, when segment i is empty, equals tails[i - 1] (&head for
 * DONE). ->len is read by other CPUs, so it is written with WRITE_ONCE().
 */
struct rcu_segcblist {
	struct rcu_head *head; /* oldest first */
	struct rcu_head **tails[RCU_CBLIST_NSEGS];
	long seglen[RCU_CBLIST_NSEGS]; /* callbacks in each segment */
	long len;                      /* on the list, plus taken off and not yet invoked */
	long len_lazy;                 /* NEXT's lazy callbacks that nothing has hurried yet */
};

/* One CPU's share of RCU's callback machinery. */
struct rcu_data {
	struct rcu_segcblist cblist;
	struct wait_queue_head wq;      /* "rcuc/N" sleeps here while it has nothing to do */
	struct task_struct *kthread;    /* "rcuc/N": this CPU's callback kthread */
	struct timer_list lazy_timer;   /* flushes the lazy callbacks */
	bool lazy_due;                  /* the lazy timer fired: NEXT may wait no longer */
	unsigned long barrier_seq_snap; /* barrier_sequence when this CPU was last seen to */
	struct rcu_head barrier_head;   /* rcu_barrier()'s marker for this CPU */
};

static DEFINE_PER_CPU(struct rcu_data, rcu_data);

/* rcu_barrier()'s shared state (Linux's rcu_state has the same fields). */
static struct rcu_state {
	struct mutex barrier_mutex;     /* one barrier's work at a time */
	spinlock_t barrier_lock;        /* offline CPUs' lists, barrier_seq_snap, starts */
	unsigned long barrier_sequence; /* odd while a barrier runs; +2 per barrier */
	atomic_t barrier_cpu_count;     /* markers not yet invoked, plus the barrier's own */
	struct completion barrier_completion;
} rcu_state;

static int blimit = RCU_DEFAULT_BLIMIT;

/* ---- the segmented list ------------------------------------------------- */

static void rcu_segcblist_init(struct rcu_segcblist *cl)
{
	cl->head = NULL;
	for (int i = 0; i < RCU_CBLIST_NSEGS; i++) {
		cl->tails[i] = &cl->head;
		cl->seglen[i] = 0;
	}
	cl->len = 0;
	cl->len_lazy = 0;
}

/* Callbacks on the list itself (->len also counts those being invoked). */
static long rcu_segcblist_n_queued(const struct rcu_segcblist *cl)
{
	return cl->seglen[RCU_DONE_TAIL] + cl->seglen[RCU_WAIT_TAIL] + cl->seglen[RCU_NEXT_TAIL];
}

/*
 * TODO 1: the list's three moves, each called with interrupts off:
 *
 *   static void rcu_segcblist_enqueue(struct rcu_segcblist *cl,
 *                                     struct rcu_head *rhp, bool lazy);
 *	append @rhp to NEXT and count it (in ->len, then a full barrier:
 *	rcu_barrier() reads ->len without this CPU's locks and must not find
 *	it 0 once call_rcu() has returned; in ->len_lazy if lazy, while a
 *	callback that is not lazy hurries the lazy ones before it: ->len_lazy
 *	starts again from 0);
 *   static void rcu_segcblist_advance(struct rcu_segcblist *cl, int seg);
 *	join segment @seg to the one before it (NEXT to WAIT when a grace
 *	period starts for NEXT, WAIT to DONE when it ends);
 *   static struct rcu_head *rcu_segcblist_dequeue_done(struct rcu_segcblist *cl);
 *	take the oldest DONE callback off the list (NULL if DONE is empty).
 *	It still counts in ->len until it has been invoked.
 */
/* BEGIN SOLUTION */
static void rcu_segcblist_enqueue(struct rcu_segcblist *cl, struct rcu_head *rhp, bool lazy)
{
	rhp->next = NULL;
	*cl->tails[RCU_NEXT_TAIL] = rhp;
	cl->tails[RCU_NEXT_TAIL] = &rhp->next;
	cl->seglen[RCU_NEXT_TAIL]++;
	WRITE_ONCE(cl->len, cl->len + 1);
	smp_mb(); /* rcu_barrier() reads ->len locklessly: the count, before call_rcu() returns */
	WRITE_ONCE(cl->len_lazy, lazy ? cl->len_lazy + 1 : 0);
}

static void rcu_segcblist_advance(struct rcu_segcblist *cl, int seg)
{
	cl->tails[seg - 1] = cl->tails[seg];
	cl->seglen[seg - 1] += cl->seglen[seg];
	cl->seglen[seg] = 0;
	if (seg == RCU_NEXT_TAIL)
		WRITE_ONCE(cl->len_lazy, 0);
}

static struct rcu_head *rcu_segcblist_dequeue_done(struct rcu_segcblist *cl)
{
	struct rcu_head *rhp = cl->head;

	if (!cl->seglen[RCU_DONE_TAIL])
		return NULL;
	cl->head = rhp->next;
	for (int i = RCU_DONE_TAIL; i < RCU_CBLIST_NSEGS; i++)
		if (cl->tails[i] == &rhp->next)
			cl->tails[i] = &cl->head;
	cl->seglen[RCU_DONE_TAIL]--;
	return rhp;
}
/* END SOLUTION */

/* ---- call_rcu(), lazy or not ---------------------------------------------- */

/*
 * The lazy flush timer (IRQ context): NEXT has waited long enough. It only
 * says so: the CPU's own kthread moves the list (another CPU's timer may
 * run this after a hotplug, and a list is its CPU's alone).
 */
static void rcu_lazy_timer_fn(struct timer_list *t)
{
	struct rcu_data *rdp = container_of(t, struct rcu_data, lazy_timer);

	/* TODO 2: mark the lazy callbacks due and wake the CPU's kthread. */
	/* BEGIN SOLUTION */
	WRITE_ONCE(rdp->lazy_due, true);
	wake_up(&rdp->wq);
	/* END SOLUTION */
	/* STARTER: (void)rdp; */
}

static void __call_rcu(struct rcu_head *head, rcu_callback_t func, bool lazy)
{
	/*
	 * TODO 2: queue @head on this CPU's list with interrupts off
	 * (trace_rcu_callback_queued(head) first, while it is still yours).
	 * A callback that is not lazy wakes the CPU's kthread. A lazy one does
	 * not: the first of a batch (->len_lazy now 1) starts the batch not
	 * yet due and arms the CPU's lazy timer for LAZY_FLUSH_JIFFIES from
	 * now; the LAZY_FLUSH_CBS-th one in a row hurries them all
	 * (->len_lazy back to 0) and wakes the kthread.
	 */
	/* BEGIN SOLUTION */
	struct rcu_data *rdp;
	unsigned long flags;
	bool wake;

	head->func = func;
	trace_rcu_callback_queued(head);
	local_irq_save(flags);
	rdp = this_cpu_ptr(&rcu_data);
	rcu_segcblist_enqueue(&rdp->cblist, head, lazy);
	if (lazy && rdp->cblist.len_lazy == 1) {
		/* A new batch of lazy callbacks: its own timer, not yet due. */
		WRITE_ONCE(rdp->lazy_due, false);
		mod_timer(&rdp->lazy_timer, jiffies + LAZY_FLUSH_JIFFIES);
	}
	if (rdp->cblist.len_lazy >= LAZY_FLUSH_CBS)
		WRITE_ONCE(rdp->cblist.len_lazy, 0);
	wake = !rdp->cblist.len_lazy;
	local_irq_restore(flags);
	if (wake)
		wake_up(&rdp->wq);
	/* END SOLUTION */
	/* STARTER: (void)head; */
	/* STARTER: (void)func; */
	/* STARTER: (void)lazy; */
}

void call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	__call_rcu(head, func, true);
}

void call_rcu_hurry(struct rcu_head *head, rcu_callback_t func)
{
	__call_rcu(head, func, false);
}

/* ---- rcuc/N: grace periods and invocation ---------------------------------- */

/* Given: free the object a kfree_rcu() callback stands for (see rcupdate.h). */
static void rcu_kfree(struct rcu_head *rhp, unsigned long offset)
{
	trace_event(TR_CB_INVOKE, "kfree_rcu", (long)offset);
	kfree((char *)rhp - offset);
}

/*
 * Invoke one callback. TODO 4: a kfree_rcu() callback holds no function
 * but the offset of its rcu_head in the object to free
 * (__is_kfree_rcu_offset()): hand those to rcu_kfree() instead.
 */
static void rcu_invoke(struct rcu_head *rhp)
{
	/* BEGIN SOLUTION */
	unsigned long offset = (unsigned long)(uintptr_t)rhp->func;

	if (__is_kfree_rcu_offset(offset)) {
		rcu_kfree(rhp, offset);
		return;
	}
	/* END SOLUTION */
	/* STARTER: (void)rcu_kfree; */
	rcu_invoke_callback(rhp);
}

/*
 * TODO 3: rcuc/N's three steps (the kthread below is given). Does NEXT need
 * a grace period now (it holds callbacks that may not wait: hurried ones,
 * or lazy ones whose timer fired)? Does rcuc/N have work (that, or ready
 * callbacks)? A grace period for NEXT: join NEXT to WAIT, synchronize_rcu(),
 * join WAIT to DONE (interrupts off around each move, never around the
 * grace period). One pass: rcu_cb_pass_begin(), then at most blimit DONE
 * callbacks, each taken off with interrupts off, invoked with them on, and
 * only then, after a full barrier, no longer counted in ->len.
 */
static bool rcu_next_needs_gp(struct rcu_data *rdp)
{
	/* BEGIN SOLUTION */
	const struct rcu_segcblist *cl = &rdp->cblist;

	return cl->seglen[RCU_NEXT_TAIL] &&
	       (cl->seglen[RCU_NEXT_TAIL] > READ_ONCE(cl->len_lazy) || READ_ONCE(rdp->lazy_due));
	/* END SOLUTION */
	/* STARTER: (void)rdp; */
	/* STARTER: return false; */
}

static bool rcu_cpu_has_work(struct rcu_data *rdp)
{
	/* BEGIN SOLUTION */
	return READ_ONCE(rdp->cblist.seglen[RCU_DONE_TAIL]) || rcu_next_needs_gp(rdp);
	/* END SOLUTION */
	/* STARTER: (void)rdp; */
	/* STARTER: return false; */
}

static void rcu_gp_for_next(struct rcu_data *rdp)
{
	/* BEGIN SOLUTION */
	unsigned long flags;

	local_irq_save(flags);
	rcu_segcblist_advance(&rdp->cblist, RCU_NEXT_TAIL);
	WRITE_ONCE(rdp->lazy_due, false);
	local_irq_restore(flags);
	synchronize_rcu();
	local_irq_save(flags);
	rcu_segcblist_advance(&rdp->cblist, RCU_WAIT_TAIL);
	local_irq_restore(flags);
	/* END SOLUTION */
	/* STARTER: (void)rdp; */
}

static void rcu_do_batch(struct rcu_data *rdp)
{
	/* BEGIN SOLUTION */
	struct rcu_head *rhp;
	unsigned long flags;

	rcu_cb_pass_begin();
	for (int n = 0; n < READ_ONCE(blimit); n++) {
		local_irq_save(flags);
		rhp = rcu_segcblist_dequeue_done(&rdp->cblist);
		local_irq_restore(flags);
		if (!rhp)
			break;
		rcu_invoke(rhp);
		smp_mb(); /* the callback's accesses, before ->len may read 0 */
		local_irq_save(flags);
		WRITE_ONCE(rdp->cblist.len, rdp->cblist.len - 1);
		local_irq_restore(flags);
	}
	/* END SOLUTION */
	/* STARTER: (void)rdp; */
	/* STARTER: (void)rcu_invoke; */
}

/*
 * The body of "rcuc/N", bound to CPU N (given): sleep until there is work,
 * give NEXT a grace period if it needs one, then one pass over DONE.
 */
static int rcu_cpu_kthread(void *arg)
{
	struct rcu_data *rdp = arg;

	for (;;) {
		wait_event(rdp->wq, rcu_cpu_has_work(rdp) || kthread_should_stop());
		if (kthread_should_stop())
			return 0;
		if (rcu_next_needs_gp(rdp))
			rcu_gp_for_next(rdp);
		rcu_do_batch(rdp);
		cond_resched(); /* non-preemptible: let other tasks on this CPU run */
	}
}

/* ---- rcu_barrier(): the sequence number ------------------------------------ */

/* Given: wrap-safe "a is at or after b" for counters that only grow. */
#define ULONG_CMP_GE(a, b) (~0UL / 2 >= (a) - (b))
/* Given: the low bit of a sequence number is its state: 1 while a barrier runs. */
#define RCU_SEQ_STATE_MASK 1UL

static unsigned long rcu_seq_state(unsigned long s)
{
	return s & RCU_SEQ_STATE_MASK;
}

/*
 * Given: a barrier starts (the sequence becomes odd) and ends (even again).
 * The full barrier after the start is the barrier's side of ->len's first
 * race (the handout's "a call_rcu() whose ->len increment ..."): the locks
 * the barrier takes next do not order its caller's earlier stores before
 * its loads of ->len (common/tests/lkmm/lab6-len-call-rcu.litmus).
 */
static void rcu_seq_start(unsigned long *sp)
{
	WARN_ON(rcu_seq_state(*sp));
	WRITE_ONCE(*sp, *sp + 1);
	smp_mb(); /* the caller's accesses, before the ->len loads that follow */
}

static void rcu_seq_end(unsigned long *sp)
{
	WARN_ON(!rcu_seq_state(*sp));
	WRITE_ONCE(*sp, *sp + 1);
}

/*
 * TODO 5: rcu_seq_snap() - the value *sp will have once a whole barrier
 * that starts after now has ended (if one is running, it started too early:
 * the one after it). rcu_seq_done() - has *sp reached @s (ULONG_CMP_GE)?
 */
static unsigned long rcu_seq_snap(unsigned long *sp)
{
	/* BEGIN SOLUTION */
	return (READ_ONCE(*sp) + 2 * RCU_SEQ_STATE_MASK + 1) & ~RCU_SEQ_STATE_MASK;
	/* END SOLUTION */
	/* STARTER: (void)sp; */
	/* STARTER: return 0; */
}

static bool rcu_seq_done(unsigned long *sp, unsigned long s)
{
	/* BEGIN SOLUTION */
	return ULONG_CMP_GE(READ_ONCE(*sp), s);
	/* END SOLUTION */
	/* STARTER: (void)sp; */
	/* STARTER: (void)s; */
	/* STARTER: return false; */
}

unsigned long rcu_barrier_sequence(void)
{
	return READ_ONCE(rcu_state.barrier_sequence);
}

/* ---- rcu_barrier(): markers ----------------------------------------------- */

/* TODO 7: the marker's callback (the last one completes). */
static void rcu_barrier_callback(struct rcu_head *rhp)
{
	(void)rhp;
	/* BEGIN SOLUTION */
	if (atomic_dec_and_test(&rcu_state.barrier_cpu_count))
		complete(&rcu_state.barrier_completion);
	/* END SOLUTION */
}

/*
 * TODO 6: rcu_segcblist_entrain() - link @rhp behind the list's last
 * callback, in that callback's segment (the last segment that is not empty,
 * DONE if all are: "wait for all prior callbacks, NOT necessarily for a
 * grace period"), and count it in ->len; false, linking nothing, if ->len
 * is 0. rcu_barrier_entrain() - if a barrier runs and @rdp has not been
 * seen to for it (barrier_seq_snap): link its marker (traced as queued),
 * note it seen to, and wake its kthread (the marker is not lazy: behind lazy
 * callbacks in NEXT it hurries them, but only an awake rcuc/N sees that).
 * True if it linked a marker, which the caller counts. Called under
 * barrier_lock, for an online CPU on that CPU.
 */
/* BEGIN SOLUTION */
static bool rcu_segcblist_entrain(struct rcu_segcblist *cl, struct rcu_head *rhp)
{
	int seg = RCU_NEXT_TAIL;

	if (!cl->len)
		return false;
	while (seg > RCU_DONE_TAIL && !cl->seglen[seg])
		seg--;
	rhp->next = NULL;
	*cl->tails[seg] = rhp;
	for (int i = seg; i < RCU_CBLIST_NSEGS; i++)
		cl->tails[i] = &rhp->next;
	cl->seglen[seg]++;
	WRITE_ONCE(cl->len, cl->len + 1);
	return true;
}

static bool rcu_barrier_entrain(struct rcu_data *rdp)
{
	unsigned long gseq = READ_ONCE(rcu_state.barrier_sequence);
	bool linked = false;

	if (!rcu_seq_state(gseq) || rdp->barrier_seq_snap == gseq)
		return false;
	if (rdp->cblist.len) {
		rdp->barrier_head.func = rcu_barrier_callback;
		trace_rcu_callback_queued(&rdp->barrier_head);
		linked = rcu_segcblist_entrain(&rdp->cblist, &rdp->barrier_head);
	}
	smp_store_release(&rdp->barrier_seq_snap, gseq);
	/* A marker is never lazy: NEXT, lazy callbacks and all, now needs a grace period. */
	if (linked)
		wake_up(&rdp->wq);
	return linked;
}
/* END SOLUTION */

/* Cross-call: on the CPU whose marker it links; *@linked says whether it did. */
static void rcu_barrier_handler(void *linked)
{
	/* TODO 6: rcu_barrier_entrain() for this CPU, under barrier_lock. */
	/* BEGIN SOLUTION */
	spin_lock(&rcu_state.barrier_lock);
	*(bool *)linked = rcu_barrier_entrain(this_cpu_ptr(&rcu_data));
	spin_unlock(&rcu_state.barrier_lock);
	/* END SOLUTION */
	/* STARTER: (void)linked; */
}

/*
 * TODO 7 (helper): see to @cpu for the barrier @gseq; true if a marker was
 * linked for it (the caller counts it). Nothing if someone saw to it
 * already (barrier_seq_snap, read with smp_load_acquire()). Under
 * barrier_lock: a CPU with no callbacks (->len 0) is only noted seen to (no
 * cross-call); an offline CPU's marker is linked here, from this CPU. Any
 * other CPU links its own, by a waited-for cross-call; if that fails
 * (-ENXIO: the CPU went offline meanwhile), look at the CPU again.
 */
/* BEGIN SOLUTION */
static bool rcu_barrier_one_cpu(int cpu, unsigned long gseq)
{
	struct rcu_data *rdp = per_cpu_ptr(&rcu_data, cpu);
	unsigned long flags;
	bool linked = false;

	for (;;) {
		if (smp_load_acquire(&rdp->barrier_seq_snap) == gseq)
			return false;
		spin_lock_irqsave(&rcu_state.barrier_lock, flags);
		if (!READ_ONCE(rdp->cblist.len)) {
			smp_store_release(&rdp->barrier_seq_snap, gseq);
			spin_unlock_irqrestore(&rcu_state.barrier_lock, flags);
			return false;
		}
		if (!cpu_online(cpu)) {
			linked = rcu_barrier_entrain(rdp);
			spin_unlock_irqrestore(&rcu_state.barrier_lock, flags);
			return linked;
		}
		spin_unlock_irqrestore(&rcu_state.barrier_lock, flags);
		if (!smp_call_function_single(cpu, rcu_barrier_handler, &linked, 1))
			return linked;
	}
}
/* END SOLUTION */

void rcu_barrier(void)
{
	/*
	 * TODO 5: snapshot the sequence before anything else; under
	 * barrier_mutex, return at once if a barrier that started after the
	 * snapshot has ended meanwhile (its work covers yours).
	 * TODO 7: start the sequence and set the barrier's own count (under
	 * barrier_lock; lab 4 started at 1: see step 5 of the handout); see to
	 * every possible CPU, counting each marker linked; drop the barrier's
	 * own count; wait for the completion; end the sequence.
	 */
	/* BEGIN SOLUTION */
	unsigned long s = rcu_seq_snap(&rcu_state.barrier_sequence);
	unsigned long gseq, flags;
	int cpu;

	BUG_ON(in_interrupt());
	mutex_lock(&rcu_state.barrier_mutex);
	if (rcu_seq_done(&rcu_state.barrier_sequence, s)) {
		smp_mb(); /* the earlier barrier's end, before what the caller does next */
		mutex_unlock(&rcu_state.barrier_mutex);
		return;
	}
	spin_lock_irqsave(&rcu_state.barrier_lock, flags);
	rcu_seq_start(&rcu_state.barrier_sequence);
	gseq = rcu_state.barrier_sequence;
	init_completion(&rcu_state.barrier_completion);
	/* 2, not 1: a marker may run before it is counted (the handout says why). */
	atomic_set(&rcu_state.barrier_cpu_count, 2);
	spin_unlock_irqrestore(&rcu_state.barrier_lock, flags);
	for_each_possible_cpu(cpu)
		if (rcu_barrier_one_cpu(cpu, gseq))
			atomic_inc(&rcu_state.barrier_cpu_count);
	if (atomic_sub_and_test(2, &rcu_state.barrier_cpu_count))
		complete(&rcu_state.barrier_completion);
	wait_for_completion(&rcu_state.barrier_completion);
	spin_lock_irqsave(&rcu_state.barrier_lock, flags);
	rcu_seq_end(&rcu_state.barrier_sequence);
	spin_unlock_irqrestore(&rcu_state.barrier_lock, flags);
	mutex_unlock(&rcu_state.barrier_mutex);
	/* END SOLUTION */
	/* STARTER: (void)rcu_seq_snap; */
	/* STARTER: (void)rcu_seq_done; */
	/* STARTER: (void)rcu_seq_start; */
	/* STARTER: (void)rcu_seq_end; */
	/* STARTER: (void)rcu_barrier_handler; */
	/* STARTER: (void)rcu_barrier_callback; */
	/* STARTER: (void)rcu_segcblist_n_queued; */
}

/* ---- CPU hotplug ------------------------------------------------------------ */

/*
 * TODO 8: rcu_segcblist_merge() - move every callback on @src, in order,
 * behind @dst's NEXT (they wait for one more grace period: always safe),
 * with their count; @src keeps in ->len only those taken off and not yet
 * invoked. rcutree_dead_cpu() - the hotplug teardown of a dead @cpu, run
 * on a surviving CPU: under barrier_lock, if @cpu's list holds callbacks,
 * entrain its marker for a barrier in progress (counting it), then merge the
 * list into this CPU's; wake this CPU's kthread.
 */
/* BEGIN SOLUTION */
static void rcu_segcblist_merge(struct rcu_segcblist *dst, struct rcu_segcblist *src)
{
	long n = rcu_segcblist_n_queued(src);

	if (!n)
		return;
	*dst->tails[RCU_NEXT_TAIL] = src->head;
	dst->tails[RCU_NEXT_TAIL] = src->tails[RCU_NEXT_TAIL];
	dst->seglen[RCU_NEXT_TAIL] += n;
	WRITE_ONCE(dst->len, dst->len + n);
	src->head = NULL;
	for (int i = 0; i < RCU_CBLIST_NSEGS; i++) {
		src->tails[i] = &src->head;
		src->seglen[i] = 0;
	}
	WRITE_ONCE(src->len, src->len - n);
	WRITE_ONCE(src->len_lazy, 0);
}
/* END SOLUTION */

static int rcutree_dead_cpu(unsigned int cpu)
{
	/* BEGIN SOLUTION */
	struct rcu_data *rdp = per_cpu_ptr(&rcu_data, cpu), *my_rdp;
	unsigned long flags;

	spin_lock_irqsave(&rcu_state.barrier_lock, flags);
	my_rdp = this_cpu_ptr(&rcu_data);
	if (rcu_segcblist_n_queued(&rdp->cblist)) {
		if (rcu_barrier_entrain(rdp))
			atomic_inc(&rcu_state.barrier_cpu_count);
		rcu_segcblist_merge(&my_rdp->cblist, &rdp->cblist);
	}
	spin_unlock_irqrestore(&rcu_state.barrier_lock, flags);
	wake_up(&my_rdp->wq);
	/* END SOLUTION */
	/* STARTER: (void)cpu; */
	return 0;
}

/* ---- boot and shutdown (given, but for TODO 3's kthreads) ------------------ */

void rcu_callbacks_init(void)
{
	int cpu;

	/* Per-boot state: a test boots many kernels in one process. */
	blimit = RCU_DEFAULT_BLIMIT;
	mutex_init(&rcu_state.barrier_mutex);
	spin_lock_init(&rcu_state.barrier_lock);
	rcu_state.barrier_sequence = 0;
	atomic_set(&rcu_state.barrier_cpu_count, 0);
	init_completion(&rcu_state.barrier_completion);
	for_each_possible_cpu(cpu) {
		struct rcu_data *rdp = per_cpu_ptr(&rcu_data, cpu);

		rcu_segcblist_init(&rdp->cblist);
		init_waitqueue_head(&rdp->wq);
		timer_setup(&rdp->lazy_timer, rcu_lazy_timer_fn, 0);
		rdp->lazy_due = false;
		rdp->barrier_seq_snap = 0;
		/* TODO 3: start this CPU's callback kthread, rcu_cpu_kthread(), bound
		 * to it, named "rcuc/N". */
		/* BEGIN SOLUTION */
		rdp->kthread = kthread_run_on_cpu(rcu_cpu_kthread, rdp, cpu, "rcuc/%u");
		/* END SOLUTION */
		/* STARTER: (void)rcu_cpu_kthread; */
	}
	cpuhp_setup_state_nocalls(CPUHP_RCUTREE_PREP, "rcu/tree:dead", NULL, rcutree_dead_cpu);
}

void rcu_callbacks_exit(void)
{
	int cpu;

	cpuhp_remove_state_nocalls(CPUHP_RCUTREE_PREP);
	for_each_possible_cpu(cpu) {
		struct rcu_data *rdp = per_cpu_ptr(&rcu_data, cpu);

		del_timer_sync(&rdp->lazy_timer);
		if (rdp->kthread)
			kthread_stop(rdp->kthread);
		rdp->kthread = NULL;
		rcu_segcblist_init(&rdp->cblist);
	}
}

void rcu_set_blimit(int n)
{
	WRITE_ONCE(blimit, n > 0 ? n : 1);
}
