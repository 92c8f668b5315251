/*
 * broken_flavours.c - the hidden broken RCUs of lab 7 (instructors' copy
 * only: CMake builds solutions/NN/tests/ into the lab's test binary when
 * present, and ./workbook handout leaves solutions/ out). Each is the
 * reference RCU of labs 1 and 4 with one thing wrong, the kinds of bug
 * rcutorture exists to find.
 *
 * Rule kept here: each flavour is wrong in one way only, often enough that
 * a correct torture sees it in every bounded run, and its ops table names
 * only what it breaks (torture_flavour() takes the rest from the
 * reference); it leaks nothing by itself (its cb_exit runs or returns every
 * callback), so that catching it passes cleanly.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <sim/test.h>
#include "torture_ops.h"

/*
 * ---- grace periods that end early: the uniprocessor synchronize_rcu() on
 * four CPUs. On one CPU the caller's own context switch is a grace period
 * (Linux's !SMP synchronize_rcu() does almost nothing); on four it waits
 * for no other CPU's readers.
 *
 * Left to the scheduler, whether such a grace period ends under a reader
 * that holds an element it ages was up to the interleaving: the torture
 * retires every other element through ops->call(), whose grace periods are
 * right, and a reader's long linger could fall, seed after seed, on those
 * (the reference torture missed the bug on 1 seed in 200). So this one
 * ends when the bug can do harm: it lets its CPU go (a bounded number of
 * times) until a reader is inside that entered after the last grace period
 * this flavour ended, and so may hold the element retired just before this
 * call. A torture whose readers look at the age again after lingering sees
 * that element age under them; one whose readers look only once, as soon as
 * they pick it up, mostly does not ----
 */
#define EARLY_GP_PATIENCE 64

static unsigned long early_gp_returns;              /* ops->sync() calls that returned */
static unsigned long early_gp_reader_from[NR_CPUS]; /* early_gp_returns at entry + 1; 0 outside */

/* The compiler's atomics, not the kernel's: they add no scheduling point. */
static void early_gp_readlock(void)
{
	unsigned long returns = __atomic_load_n(&early_gp_returns, __ATOMIC_SEQ_CST);

	rcu_read_lock();
	__atomic_store_n(&early_gp_reader_from[smp_processor_id()], returns + 1, __ATOMIC_SEQ_CST);
}

static void early_gp_readunlock(void)
{
	__atomic_store_n(&early_gp_reader_from[smp_processor_id()], 0, __ATOMIC_SEQ_CST);
	rcu_read_unlock();
}

/* Is a reader inside that entered when @returns grace periods had ended? */
static bool early_gp_reader_since(unsigned long returns)
{
	for (int cpu = 0; cpu < NR_CPUS; cpu++) {
		unsigned long from = __atomic_load_n(&early_gp_reader_from[cpu], __ATOMIC_SEQ_CST);

		if (from && from == returns + 1)
			return true;
	}
	return false;
}

static void early_gp_sync(void)
{
	unsigned long returns = __atomic_load_n(&early_gp_returns, __ATOMIC_SEQ_CST);
	int waited = 0;

	might_sleep();
	do
		schedule();
	while (!early_gp_reader_since(returns) && ++waited < EARLY_GP_PATIENCE);
	__atomic_add_fetch(&early_gp_returns, 1, __ATOMIC_SEQ_CST);
}

static const struct broken_flavour early_grace_period_flavour = {
	.except = { .name = "early_grace_period", .readlock = early_gp_readlock,
		    .readunlock = early_gp_readunlock, .sync = early_gp_sync },
	.bug = "synchronize_rcu() of a uniprocessor kernel: waits for no other CPU",
};

/* ---- callbacks invoked before their grace period: every fourth ---- */

static atomic_t early_cb_calls;

static void early_cb_call(struct rcu_head *head, rcu_callback_t func)
{
	if (atomic_inc_return(&early_cb_calls) % 4 == 0) {
		func(head);
		return;
	}
	call_rcu(head, func);
}

static const struct broken_flavour early_callback_flavour = {
	.except = { .name = "early_callback", .call = early_cb_call },
	.bug = "every fourth call_rcu() invokes its callback at once",
};

/*
 * ---- a barrier that covers only its own CPU (lab 3's), on an RCU whose
 * callbacks wait per CPU for a batch (as lazy callbacks do in Linux): a
 * CPU's callbacks go to call_rcu() when LAZY_CPU_BATCH of them wait there,
 * or when a barrier is called on that CPU. So the callbacks the barrier
 * misses are still waiting when it returns, on every seed and whatever
 * order a torture queues them in: the bug shows in the first round ----
 */
#define LAZY_CPU_BATCH 16

static spinlock_t own_cpu_lock;
static struct rcu_head *own_cpu_waiting[NR_CPUS];
static int own_cpu_len[NR_CPUS];

static void own_cpu_init(void)
{
	spin_lock_init(&own_cpu_lock);
	for (int cpu = 0; cpu < NR_CPUS; cpu++) {
		own_cpu_waiting[cpu] = NULL;
		own_cpu_len[cpu] = 0;
	}
	rcu_callbacks_init();
}

/* Hand @cpu's waiting callbacks to call_rcu() (in the order queued). */
static void own_cpu_flush(int cpu)
{
	struct rcu_head *h, *rev = NULL;
	unsigned long flags;

	spin_lock_irqsave(&own_cpu_lock, flags);
	h = own_cpu_waiting[cpu];
	own_cpu_waiting[cpu] = NULL;
	own_cpu_len[cpu] = 0;
	spin_unlock_irqrestore(&own_cpu_lock, flags);
	while (h) {                     /* the list is newest first: reverse it */
		struct rcu_head *next = h->next;

		h->next = rev;
		rev = h;
		h = next;
	}
	torture_call_rcu_list(rev);
}

static void own_cpu_call(struct rcu_head *head, rcu_callback_t func)
{
	unsigned long flags;
	int cpu;
	bool full;

	head->func = func;
	spin_lock_irqsave(&own_cpu_lock, flags);
	cpu = smp_processor_id();
	head->next = own_cpu_waiting[cpu];
	own_cpu_waiting[cpu] = head;
	full = ++own_cpu_len[cpu] >= LAZY_CPU_BATCH;
	spin_unlock_irqrestore(&own_cpu_lock, flags);
	if (full)
		own_cpu_flush(cpu);
}

struct own_cpu_marker {
	struct rcu_head rh;
	int done;
};

static void own_cpu_marker_cb(struct rcu_head *rh)
{
	WRITE_ONCE(container_of(rh, struct own_cpu_marker, rh)->done, 1);
}

/* The bug: this CPU's callbacks are flushed and waited for; no other CPU's. */
static void own_cpu_barrier(void)
{
	struct own_cpu_marker m = { .done = 0 };

	own_cpu_flush(smp_processor_id());
	call_rcu(&m.rh, own_cpu_marker_cb);
	while (!READ_ONCE(m.done))
		schedule();
}

/* After the run: every CPU's waiting callbacks run (and those they queue). */
static void own_cpu_exit(void)
{
	for (int i = 0; i <= TORTURE_PIPE_LEN; i++) {
		for (int cpu = 0; cpu < NR_CPUS; cpu++)
			own_cpu_flush(cpu);
		rcu_barrier();
	}
	torture_ref_cb_exit();
}

static const struct broken_flavour barrier_misses_cpu_flavour = {
	.except = { .name = "barrier_misses_cpu", .call = own_cpu_call,
		    .cb_barrier = own_cpu_barrier, .cb_init = own_cpu_init,
		    .cb_exit = own_cpu_exit },
	.bug = "rcu_barrier() waits only for its own CPU's callbacks (which wait per CPU for a "
	       "batch)",
};

/* ---- lost callbacks: every eighth is kept aside, never invoked in the run ---- */

#define LOST_MAX 64
static struct rcu_head *lost[LOST_MAX];
static rcu_callback_t lost_func[LOST_MAX];
static atomic_t nr_lost;
static atomic_t lost_calls;

static void lost_cb_call(struct rcu_head *head, rcu_callback_t func)
{
	if (atomic_inc_return(&lost_calls) % 8 == 0) {
		int i = atomic_inc_return(&nr_lost) - 1;

		if (i < LOST_MAX) {
			lost[i] = head;
			lost_func[i] = func;
			return;
		}
	}
	call_rcu(head, func);
}

static void lost_cb_init(void)
{
	atomic_set(&nr_lost, 0);
	rcu_callbacks_init();
}

/* The lost ones are found again after the run, so that nothing leaks. */
static void lost_cb_exit(void)
{
	int n = atomic_read(&nr_lost);

	atomic_set(&nr_lost, LOST_MAX); /* no more are lost */
	for (int i = 0; i < n && i < LOST_MAX; i++)
		call_rcu(lost[i], lost_func[i]);
	torture_ref_cb_exit();
}

static const struct broken_flavour lost_callback_flavour = {
	.except = { .name = "lost_callback", .call = lost_cb_call, .cb_init = lost_cb_init,
		    .cb_exit = lost_cb_exit },
	.bug = "every eighth call_rcu() callback is never invoked",
};

/*
 * ---- an unprotected reader: rcu_read_lock() that does not hold off grace
 * periods, in a kernel where a reader can be switched out (its read_delay
 * yields the CPU, as a preempted reader would) ----
 */
static void unprotected_lock(void)
{
}

static void unprotected_delay(void)
{
	for (int i = 0; i < 16; i++)
		schedule();
}

static const struct broken_flavour unprotected_reader_flavour = {
	.except = { .name = "unprotected_reader", .readlock = unprotected_lock,
		    .readunlock = unprotected_lock, .read_delay = unprotected_delay },
	.bug = "rcu_read_lock() does nothing, and a reader may be switched out",
};

/*
 * ---- grace periods shared wrongly: a synchronize_rcu() that finds another
 * caller's grace period running returns at once, taking that one for its
 * own. It is not: it began before this caller's update, and ends without
 * waiting for the readers that still hold the old element. Only callers
 * that overlap show it, as rcutorture's fake writers make them ----
 */
static atomic_t gp_running;

static void shared_gp_sync(void)
{
	might_sleep();
	if (atomic_cmpxchg(&gp_running, 0, 1))
		return;
	synchronize_rcu();
	atomic_set(&gp_running, 0);
}

static const struct broken_flavour shared_grace_period_flavour = {
	.except = { .name = "shared_grace_period", .sync = shared_gp_sync },
	.bug = "synchronize_rcu() returns at once while another caller's grace period runs; "
	       "only callers of ops->sync() that overlap the writer's show it: fake writers on "
	       "the other CPUs (TODO 4, 6)",
};

TORTURE_CATCHES(catches, early_grace_period, "synchronize_rcu() returning early")
TORTURE_CATCHES(catches, early_callback, "callbacks invoked before their grace period")
TORTURE_CATCHES(catches, barrier_misses_cpu, "an rcu_barrier() that waits for its own CPU only")
/* Lost callbacks: seen by the barrier rounds, and, with none, by the cleanup alone. */
SIM_TEST(catches, lost_callback, .timeout = 120,
	 .description = "the torture catches call_rcu() losing callbacks, with barrier rounds "
			"and, at its cleanup, without")
{
	torture_expect_caught(&lost_callback_flavour);
	torture_expect_caught_at_cleanup(&lost_callback_flavour);
}
TORTURE_CATCHES(catches, unprotected_reader, "a read side that does not hold off grace periods")
TORTURE_CATCHES(catches, shared_grace_period, "grace periods shared by overlapping callers")

/*
 * On real threads the callback bugs show in every bounded run; the
 * grace-period and read-side ones need a reader and the writer to overlap
 * in a window the host's scheduler rarely gives (2 cores shared with other
 * work), so they are graded on the deterministic kernel only.
 */
SIM_TEST(catches, parallel_callback_bugs, .timeout = 120,
	 .description = "on real threads, the torture catches the callback and barrier bugs")
{
	torture_expect_caught_parallel(&early_callback_flavour);
	torture_expect_caught_parallel(&barrier_misses_cpu_flavour);
	torture_expect_caught_parallel(&lost_callback_flavour);
}
