/*
 * call_rcu.c - RCU callbacks on one global queue, invoked by a kthread (lab 2).
 *
 * Rule kept here: call_rcu() never sleeps and may run in IRQ context, so the
 * queue is guarded by a spinlock taken with interrupts off (an interrupt on
 * the same CPU may call call_rcu() too); a callback is invoked only after a
 * full grace period that began after it was queued, exactly once, in the
 * order queued, at most rcu_blimit per pass, and never with the lock held
 * (a callback may call call_rcu() itself).
 *
 * The queue has three segments, as in the kernel's segmented list:
 *   rcu_next: queued, waiting for a grace period to start;
 *   rcu_wait: waiting for the grace period in progress to end;
 *   rcu_done: their grace period is over: ready to invoke.
 * Callbacks only ever move next -> wait -> done -> invoked, each segment
 * appended at the tail of the next one, so the order of call_rcu() is kept.
 */
#include <linux/rcupdate.h>
#include <linux/compiler.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <sim/sim.h>
#include <sim/trace.h>

/* The CPU the callback kthread "rcuo/0" runs on. Tests keep CPU 0 free for it. */
#define RCU_CB_CPU 0
/* Callbacks invoked per pass unless rcu_set_blimit() says otherwise (Linux: 10). */
#define RCU_DEFAULT_BLIMIT 10

/* One segment: a singly linked FIFO list with a pointer to its last ->next. */
struct rcu_cblist {
	struct rcu_head *head;  /* first callback, or NULL */
	struct rcu_head **tail; /* &head when empty, else &last->next */
};

static DEFINE_SPINLOCK(rcu_cb_lock);       /* guards the three segments */
static struct rcu_cblist rcu_next;         /* waiting for a grace period to start */
static struct rcu_cblist rcu_wait;         /* waiting for the current grace period */
static struct rcu_cblist rcu_done;         /* ready to invoke */
static DECLARE_WAIT_QUEUE_HEAD(rcu_cb_wq); /* the kthread sleeps here when idle */
static struct task_struct *rcu_cb_task;
static int rcu_blimit = RCU_DEFAULT_BLIMIT;

static inline void cblist_init(struct rcu_cblist *l)
{
	l->head = NULL;
	l->tail = &l->head;
}

static inline bool cblist_empty(const struct rcu_cblist *l)
{
	return READ_ONCE(l->head) == NULL;
}

/* Append @head at the tail of @l. */
static inline void cblist_enqueue(struct rcu_cblist *l, struct rcu_head *head)
{
	/* TODO 1: link @head in after the last element (FIFO). */
	(void)l;
	(void)head;
}

/* Take the first callback off @l, or NULL if it is empty. */
static inline struct rcu_head *cblist_dequeue(struct rcu_cblist *l)
{
	struct rcu_head *head = l->head;

	if (!head)
		return NULL;
	l->head = head->next;
	if (!l->head)
		l->tail = &l->head;
	head->next = NULL;
	return head;
}

/* Move every callback of @from to the tail of @to, in order; @from ends empty. */
static inline void cblist_splice(struct rcu_cblist *to, struct rcu_cblist *from)
{
	/* TODO 2: one pointer store joins the lists; then fix @to's tail and empty @from. */
	(void)to;
	(void)from;
}

void call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	unsigned long flags;

	head->func = func;
	/*
	 * TODO 3: report @head with trace_rcu_callback_queued(head) while it is
	 * still ours (once queued, the kthread may invoke and free it); queue it
	 * on rcu_next under rcu_cb_lock, in a way that an interrupt on this CPU
	 * that calls call_rcu() cannot deadlock against us; wake the kthread.
	 * Never sleep here.
	 */
	(void)flags;
}

/*
 * TODO 4: the kthread's helpers: "is there work?" (any segment non-empty),
 * and "advance": move rcu_next to rcu_wait under the lock, wait for a grace
 * period with synchronize_rcu() (never with the lock held: it sleeps), then
 * move rcu_wait to rcu_done.
 */

/* Invoke the ready callbacks, at most rcu_blimit per pass. */
static void rcu_cb_invoke_done(void)
{
	/*
	 * TODO 5: while rcu_done is not empty (and nobody asked the kthread to
	 * stop): rcu_cb_pass_begin(); take up to rcu_blimit callbacks off
	 * rcu_done under the lock; drop the lock; invoke each one with
	 * rcu_invoke_callback() (never head->func(head) directly).
	 */
}

/* The callback kthread, "rcuo/0". */
static int rcu_cb_kthread(void *unused)
{
	(void)unused;
	/*
	 * TODO 6: until kthread_stop(): sleep on rcu_cb_wq until there is work
	 * (or you are asked to stop: every wait must include
	 * kthread_should_stop()), move rcu_next behind a synchronize_rcu() to
	 * rcu_done, then rcu_cb_invoke_done().
	 */
	(void)rcu_cb_invoke_done;
	return 0;
}

void rcu_callbacks_init(void)
{
	/* Per-boot state: tests boot many times in one process. */
	spin_lock_init(&rcu_cb_lock);
	cblist_init(&rcu_next);
	cblist_init(&rcu_wait);
	cblist_init(&rcu_done);
	init_waitqueue_head(&rcu_cb_wq);
	WRITE_ONCE(rcu_blimit, RCU_DEFAULT_BLIMIT);
	rcu_cb_task = NULL;
	/* TODO 7: start rcu_cb_kthread on RCU_CB_CPU, named "rcuo/0". */
	(void)rcu_cb_kthread;
}

void rcu_callbacks_exit(void)
{
	/* TODO 8: stop the kthread (kthread_stop()) if it was started. */
	rcu_cb_task = NULL;
	/*
	 * Whatever is still queued is dropped, as rcupdate.h says. No lock: the
	 * caller (often the test's controller, which holds no CPU and so cannot
	 * disable interrupts) has stopped everything that calls call_rcu().
	 */
	cblist_init(&rcu_next);
	cblist_init(&rcu_wait);
	cblist_init(&rcu_done);
}

void rcu_set_blimit(int n)
{
	WRITE_ONCE(rcu_blimit, n > 0 ? n : 1);
}
