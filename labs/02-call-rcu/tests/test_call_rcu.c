/*
 * Lab 2's tests: call_rcu() on one global queue, invoked by the kthread rcuo/0.
 *
 * Rule kept here: every schedule that matters is forced (held points, held
 * CPUs, a task that keeps its CPU), so each failure shows on every seed; the
 * seed sweep only adds interleavings on top. CPU 0 belongs to rcuo/0: tests
 * put readers, updaters and interrupts on CPUs 1-3. Nothing is timed:
 * callback passes are counted at the named point "rcu_cb_pass".
 */
#include <string.h>
#include <linux/compiler.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <sim/test.h>
#include <sim/testlib.h>
#include "rculist.h"

#define FOO_MAGIC 0x5eed1234

/* An RCU-protected object. The rcu_head is not its first member, so a
 * callback must subtract its offset (container_of()) to find the object. */
struct foo {
	int magic;
	int value;
	struct rcu_head rcu;
	int id;
};

static struct foo *gp;          /* the published pointer readers follow */
static int nr_reclaimed;        /* foo_reclaim() calls */
static int bad_container;       /* callbacks whose object had a wrong magic */
static int reader_saw_poison;   /* a reader found its object freed under it */
static int reader_value;
static int reclaimed_on;        /* the CPU foo_reclaim() last ran on */

static unsigned long long seed(void)
{
	return (unsigned long long)sim_seed();
}

/* Every scenario begins so: nothing published or counted yet, and the
 * lab's callback machinery started (rcu_callbacks_init()). */
static void scenario_start(void)
{
	gp = NULL;
	nr_reclaimed = 0;
	bad_container = 0;
	reader_saw_poison = 0;
	reader_value = 0;
	reclaimed_on = -1;
	rcu_callbacks_init();
}

static struct foo *foo_new(int value)
{
	struct foo *p = kzalloc(sizeof(*p), GFP_ATOMIC);

	p->magic = FOO_MAGIC;
	p->value = value;
	return p;
}

/* The article's p_callback(): find the object from its rcu_head and free it. */
static void foo_reclaim(struct rcu_head *rp)
{
	struct foo *p = container_of(rp, struct foo, rcu);

	if (p->magic != FOO_MAGIC)
		bad_container++;
	nr_reclaimed++;
	reclaimed_on = smp_processor_id();
	kfree(p);
}

/* A reader: enters, picks up gp, stops at the named point @arg (the test
 * holds it there), then uses what it picked up and leaves. */
static int reader_fn(void *arg)
{
	const char *point = arg;
	struct foo *p;

	rcu_read_lock();
	p = rcu_dereference(gp);
	sim_point(point);
	if (p) {
		if (kmem_is_poisoned(p, sizeof(*p)))
			reader_saw_poison = 1;
		else
			reader_value = p->value;
	}
	rcu_read_unlock();
	return 0;
}

/* Publish @p and start a reader on @cpu that picks it up and stays inside
 * its read-side critical section (held at "reader_inside") until let go. */
static struct task_struct *reader_inside_on(int cpu, struct foo *p)
{
	struct task_struct *r;

	rcu_assign_pointer(gp, p);
	r = sim_kthread_run_held("reader_inside", reader_fn, "reader_inside", cpu, "reader");
	cr_assert_eq(sim_tasks_at_point("reader_inside"), 1,
		     "seed %llu: test setup: the reader on CPU %d should be inside its "
		     "read-side critical section", seed(), cpu);
	return r;
}

/*
 * Let the reader of reader_inside_on() go. It must not have found its
 * object freed; once it has left a grace period can end, and @what (the
 * callback queued for that object) must then have run exactly once, on the
 * object whose rcu_head call_rcu() was given.
 */
static void reader_leaves(struct task_struct *r, const char *what)
{
	sim_release_point("reader_inside");
	sim_run_until_idle();
	cr_assert(!reader_saw_poison,
		  "seed %llu: the reader found its object freed under it", seed());
	kthread_stop(r);
	cr_assert_eq(nr_reclaimed, 1,
		     "seed %llu: the reader left and a grace period could end, but %s was "
		     "invoked %d times instead of once (is rcuo/0 started in "
		     "rcu_callbacks_init()? does call_rcu() wake it? does it invoke "
		     "rcu_done?)", seed(), what, nr_reclaimed);
	cr_assert_eq(bad_container, 0,
		     "seed %llu: %s was given a pointer that is not the rcu_head passed to "
		     "call_rcu(): container_of() found no object", seed(), what);
	cr_assert_eq(reclaimed_on, 0,
		     "seed %llu: %s ran on CPU %d: callbacks are invoked by rcuo/0, which "
		     "runs on RCU_CB_CPU (CPU 0), bound there with kthread_run_on_cpu() "
		     "(TODO 7); the tests keep CPUs 1-3 for readers, updaters and interrupts",
		     seed(), what, reclaimed_on);
}

/* The updater, on CPU 1: unpublish @p, then hand it to RCU. */
static void unpublish_and_call_rcu(struct foo *p)
{
	migrate_to_cpu(1);
	WRITE_ONCE(gp, NULL);
	call_rcu(&p->rcu, foo_reclaim);
	migrate_to_cpu(-1);
	sim_run_until_idle();
}

/* ---- grace periods ------------------------------------------------------ */

static void scenario_waits_for_reader(void *arg)
{
	struct task_struct *r;
	struct foo *p;

	(void)arg;
	/* A kthread started earlier, as a kernel has many: an unbound rcuo/0
	 * (kthread_run()) would not land on CPU 0 by luck. */
	start_an_earlier_kthread();
	scenario_start();
	p = foo_new(42);
	r = reader_inside_on(2, p);
	unpublish_and_call_rcu(p);
	cr_assert_eq(nr_reclaimed, 0,
		     "seed %llu: the callback ran while a reader that began before "
		     "call_rcu() was still inside rcu_read_lock(): a callback may run "
		     "only after a full grace period (look at where call_rcu() puts it "
		     "and what the kthread waits for before invoking it)", seed());

	reader_leaves(r, "the callback");
	cr_assert_eq(reader_value, 42, "seed %llu: the reader read %d, not 42", seed(),
		     reader_value);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(grace, callback_waits_for_older_reader, scenario_waits_for_reader,
	       .description = "call_rcu(): not invoked while an older reader is inside; "
			      "invoked once after it leaves; container_of() finds the object")

/* Reader B: passes a quiescent state (cond_resched()) only once released
 * from "b_start", then reads as reader_fn(@arg) does: it stays at @arg. */
static int reader_b_fn(void *arg)
{
	sim_point("b_start");
	cond_resched();
	return reader_fn(arg);
}

static void scenario_gp_after_queueing(void *arg)
{
	struct task_struct *ra, *rb;
	struct foo *a, *b;

	(void)arg;
	scenario_start();
	sim_hold_point("a_inside");
	sim_hold_point("b_start");
	sim_hold_point("b_inside");
	/* Reader A on CPU 2 is inside; B holds CPU 3, not yet inside. */
	ra = kthread_run_on_cpu(reader_fn, "a_inside", 2, "reader_a");
	rb = kthread_run_on_cpu(reader_b_fn, "b_inside", 3, "reader_b");
	sim_run_until_idle();

	/* Callback A: its grace period (GP 1) starts and waits for reader A. */
	a = foo_new(1);
	sim_call_rcu_on(1, &a->rcu, foo_reclaim);
	sim_run_until_idle();

	/* CPU 3 passes a quiescent state, so GP 1 no longer waits for it; then
	 * reader B begins, after GP 1 began, and picks up b. */
	b = foo_new(2);
	rcu_assign_pointer(gp, b);
	sim_release_point("b_start");
	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point("b_inside"), 1,
		     "seed %llu: test setup: reader B should be inside", seed());

	/* Callback B is queued while GP 1 is in progress. */
	unpublish_and_call_rcu(b);

	/* Reader A leaves: GP 1 ends. Only A's callback may run. */
	sim_release_point("a_inside");
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 1,
		     "seed %llu: after the grace period that callback A waited for, "
		     "%d callbacks were invoked instead of 1 (A only): %s", seed(),
		     nr_reclaimed,
		     nr_reclaimed > 1
			     ? "callback B, queued while that grace period was in "
			       "progress, ran with it, while reader B (which began after "
			       "that grace period started, but before call_rcu(B)) was "
			       "still inside. A callback queued during a grace period "
			       "joined it (look at the segment call_rcu() queues on, "
			       "TODO 3, and when it moves, TODO 4; or at where "
			       "rcu_next's tail points once it has been spliced, "
			       "TODO 2: a tail left behind links the next callback "
			       "into the list it was spliced to)"
			     : "callback A was not invoked");
	cr_assert(!reader_saw_poison,
		  "seed %llu: reader B found its object freed under it", seed());

	sim_release_point("b_inside");
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 2,
		     "seed %llu: callback B was not invoked after reader B left",
		     seed());
	kthread_stop(ra);
	kthread_stop(rb);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(grace, waits_for_a_grace_period_that_starts_after_queueing,
	       scenario_gp_after_queueing,
	       .description = "a callback queued while a grace period is in progress "
			      "waits for the next grace period")

/* ---- interrupts ---------------------------------------------------------- */

static int irq_ran, irq_was_in_interrupt, irq_cpu;

/* The article's IRQ-context deletion: list_del_rcu(p); call_rcu(&p->rcu, ...). */
static void delete_in_irq(void *data)
{
	struct foo *p = data;

	irq_was_in_interrupt = in_interrupt();
	irq_cpu = smp_processor_id();
	WRITE_ONCE(gp, NULL);
	call_rcu(&p->rcu, foo_reclaim);
	irq_ran++;
}

static void scenario_call_rcu_in_irq(void *arg)
{
	struct task_struct *r;
	struct foo *p;

	(void)arg;
	scenario_start();
	irq_ran = irq_was_in_interrupt = 0;
	irq_cpu = -1;
	p = foo_new(7);
	r = reader_inside_on(3, p);
	raise_irq(2, delete_in_irq, p, "delete_irq");
	sim_run_until_idle();
	cr_assert_eq(irq_ran, 1, "seed %llu: the IRQ handler on CPU 2 did not return "
		     "(ran %d times)", seed(), irq_ran);
	cr_assert(irq_was_in_interrupt && irq_cpu == 2,
		  "seed %llu: test setup: the handler should run on CPU 2 in IRQ "
		  "context", seed());
	cr_assert_eq(nr_reclaimed, 0,
		     "seed %llu: the callback queued from IRQ context ran while an "
		     "older reader (CPU 3) was still inside", seed());

	reader_leaves(r, "the callback queued by call_rcu() in an IRQ handler");
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(irq, call_rcu_from_irq_on_another_cpu, scenario_call_rcu_in_irq,
	       .description = "call_rcu() from an IRQ handler on CPU 2 works and waits "
			      "for a reader on CPU 3")

SIM_TEST(irq, synchronize_rcu_in_irq_is_a_bug, .signal = BUG_SIGNAL,
	 .description = "call_rcu() works in an IRQ handler; synchronize_rcu() there "
			"is reported as sleeping in invalid context")
{
	sim_boot(NULL);
	scenario_start();
	raise_irq(2, delete_in_irq, foo_new(3), "delete_irq");
	sim_run_until_idle();
	cr_assert(irq_ran == 1 && nr_reclaimed == 1,
		  "call_rcu() from an IRQ handler must work first (handler ran %d "
		  "times, callback invoked %d times, expected 1 and 1): it is the way "
		  "to free from IRQ context, since synchronize_rcu() sleeps",
		  irq_ran, nr_reclaimed);
	sim_expect_bug("sleeping function called from invalid context");
	sim_call_in_irq(2, synchronize_rcu, "sync_irq");   /* it sleeps: a BUG there */
	cr_assert_fail("synchronize_rcu() in an IRQ handler was not reported as a bug");
}

/*
 * An interrupt storm on CPU 1 while CPU 1's own task calls call_rcu(): the
 * handler calls call_rcu() and raises itself again while storm_on is set, so
 * an interrupt is pending at every scheduling point of the task's call_rcu(),
 * the one just before spin_unlock() releases the lock included.
 */
static int storm_on, storm_calls, storm_not_in_irq;

static void storm_irq(void *data)
{
	struct foo *p = foo_new(-1);

	(void)data;
	if (!in_interrupt())
		storm_not_in_irq++;
	call_rcu(&p->rcu, foo_reclaim);
	storm_calls++;
	if (READ_ONCE(storm_on))
		raise_irq(1, storm_irq, NULL, "storm");
}

#define STORM_CALLS 50

static void scenario_storm(void *arg)
{
	(void)arg;
	scenario_start();
	storm_on = storm_calls = storm_not_in_irq = 0;
	migrate_to_cpu(1);
	WRITE_ONCE(storm_on, 1);
	raise_irq(1, storm_irq, NULL, "storm");
	for (int i = 0; i < STORM_CALLS; i++) {
		struct foo *p = foo_new(i);

		call_rcu(&p->rcu, foo_reclaim);
	}
	WRITE_ONCE(storm_on, 0);
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(storm_not_in_irq, 0, "seed %llu: test setup: the storm ran outside "
		     "IRQ context", seed());
	cr_assert_geq(storm_calls, STORM_CALLS,
		      "seed %llu: test setup: only %d interrupts landed during %d "
		      "call_rcu() calls", seed(), storm_calls, STORM_CALLS);
	cr_assert_eq(nr_reclaimed, STORM_CALLS + storm_calls,
		     "seed %llu: %d callbacks queued (%d by the task, %d by interrupts), "
		     "%d invoked: the queue lost or duplicated callbacks when an "
		     "interrupt called call_rcu() inside another call_rcu()", seed(),
		     STORM_CALLS + storm_calls, STORM_CALLS, storm_calls, nr_reclaimed);
	cr_assert_eq(bad_container, 0, "seed %llu: a callback got a corrupted rcu_head",
		     seed());
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(irq, irq_inside_call_rcu_critical_section, scenario_storm,
	       .description = "an IRQ that calls call_rcu() on the CPU whose task is inside "
			      "call_rcu()'s critical section neither deadlocks nor loses a "
			      "callback")

/* ---- order, exactly once, blimit ------------------------------------------ */

struct item {
	struct rcu_head rcu;
	int idx;
};

static int *invoked_order;      /* idx of each invocation, in order */
static int nr_invoked;
static int *times_invoked;      /* per idx */
static int nr_duplicates;
static int nr_bypassed;         /* invoked without rcu_invoke_callback() */

static void item_cb(struct rcu_head *rp)
{
	struct item *it = container_of(rp, struct item, rcu);

	if (rcu_invoking_callback() != item_cb)
		nr_bypassed++;
	if (invoked_order)
		invoked_order[nr_invoked] = it->idx;
	if (times_invoked && times_invoked[it->idx]++)
		nr_duplicates++;
	nr_invoked++;
}

/*
 * Queue the callbacks of @items[0..@n) (item_cb), numbered in order, in
 * bursts of @burst from CPUs 1, 2, 3 in turn (moving between bursts lets
 * grace periods and passes happen); then let everything run.
 */
static void queue_items_in_bursts(struct item *items, int n, int burst)
{
	for (int i = 0; i < n; i++) {
		if (i % burst == 0)
			migrate_to_cpu(1 + (i / burst) % 3);
		items[i].idx = i;
		call_rcu(&items[i].rcu, item_cb);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
}

#define FIFO_N 200
/* A callback queued and never invoked went missing in a list operation. */
#define LOST_BETWEEN_LISTS "callbacks lost between call_rcu() and their invocation: " \
	"does every list operation leave its list's tail at its last callback (TODO 1: " \
	"the enqueue; TODO 2: a splice onto a list that is not empty)?"

static void scenario_fifo(void *arg)
{
	struct item *items = kmalloc(FIFO_N * sizeof(*items), GFP_KERNEL);

	(void)arg;
	invoked_order = kmalloc((FIFO_N + 1) * sizeof(int), GFP_KERNEL);
	times_invoked = NULL;
	nr_invoked = 0;
	nr_bypassed = 0;
	rcu_callbacks_init();
	queue_items_in_bursts(items, FIFO_N, 20);
	cr_assert_eq(nr_invoked, FIFO_N, "seed %llu: %d of %d callbacks invoked: %s",
		     seed(), nr_invoked, FIFO_N, nr_invoked < FIFO_N ? LOST_BETWEEN_LISTS :
		     "some ran twice: does a splice leave @from empty (TODO 2)?");
	cr_assert_eq(nr_bypassed, 0, "seed %llu: %d of %d callbacks were called as "
		     "head->func(head), not through rcu_invoke_callback(), which traces each "
		     "invocation and, from lab 3 on, catches a callback into an unloaded module "
		     "(TODO 5)", seed(), nr_bypassed, FIFO_N);
	for (int i = 0; i < FIFO_N; i++)
		cr_assert_eq(invoked_order[i], i,
			     "seed %llu: invocation %d was callback %d: callbacks must be "
			     "invoked in the order call_rcu() queued them (FIFO); rcu_barrier() "
			     "in lab 3 relies on it", seed(), i, invoked_order[i]);
	rcu_callbacks_exit();
	kfree(invoked_order);
	invoked_order = NULL;
	kfree(items);
}

SIM_TEST_SEEDS(order, fifo, scenario_fifo,
	       .description = "callbacks are invoked in the order call_rcu() queued them")

#define MANY 100000

SIM_TEST(order, exactly_once_100000, .timeout = 240,
	 .description = "10^5 callbacks, each invoked exactly once")
{
	struct sim_config cfg = sim_default_config();
	struct item *items;

	cfg.max_steps = 100000000;
	cfg.trace = false;
	/* a count over 10^5 callbacks: interleaving each access is the job of the
	 * other tests; here it would cost seconds of the edit loop */
	cfg.kcsan = false;
	sim_boot(&cfg);
	items = kmalloc(MANY * sizeof(*items), GFP_KERNEL);
	times_invoked = kzalloc(MANY * sizeof(int), GFP_KERNEL);
	invoked_order = NULL;
	nr_invoked = nr_duplicates = 0;
	rcu_callbacks_init();
	queue_items_in_bursts(items, MANY, 5000);
	cr_assert_eq(nr_duplicates, 0, "%d callbacks were invoked more than once",
		     nr_duplicates);
	for (int i = 0; i < MANY; i++)
		cr_assert_eq(times_invoked[i], 1,
			     "callback %d of %d was invoked %d times, not exactly once%s%s",
			     i, MANY, times_invoked[i], times_invoked[i] ? "" : ": ",
			     times_invoked[i] ? "" : LOST_BETWEEN_LISTS);
	cr_assert_eq(nr_invoked, MANY);
	rcu_callbacks_exit();
	kfree(times_invoked);
	times_invoked = NULL;
	kfree(items);
}

/* A task that keeps its CPU, held at "hog", until released. */
static int hog_fn(void *arg)
{
	(void)arg;
	sim_point("hog");
	return 0;
}

#define BLIMIT_N 10000

SIM_TEST(blimit, one_pass_invokes_blimit, .timeout = 120,
	 .description = "with blimit 10 and 10^4 ready callbacks, one pass invokes 10 "
			"and the rest wait for later passes")
{
	struct sim_config cfg = sim_default_config();
	struct task_struct *hogs[3];
	struct item *items;
	long passes;

	cfg.max_steps = 20000000;
	sim_boot(&cfg);
	items = kmalloc(BLIMIT_N * sizeof(*items), GFP_KERNEL);
	invoked_order = NULL;
	times_invoked = NULL;
	nr_invoked = 0;
	rcu_callbacks_init();
	rcu_set_blimit(10);
	sim_hold_point("rcu_cb_pass");

	/* Every other CPU is busy, so all 10^4 callbacks are queued before the
	 * kthread can take any: they all become ready after one grace period. */
	sim_hold_point("hog");
	hogs[0] = kthread_run_on_cpu(hog_fn, NULL, 0, "hog/0");
	hogs[1] = kthread_run_on_cpu(hog_fn, NULL, 2, "hog/2");
	hogs[2] = kthread_run_on_cpu(hog_fn, NULL, 3, "hog/3");
	sim_run_until_idle();
	migrate_to_cpu(1);
	for (int i = 0; i < BLIMIT_N; i++) {
		items[i].idx = i;
		call_rcu(&items[i].rcu, item_cb);
	}
	sim_release_point("hog");
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(sim_tasks_at_point("rcu_cb_pass"), 1,
		     "the kthread should wait at the point \"rcu_cb_pass\" before its "
		     "first pass (rcu_cb_pass_begin() starts every pass)");
	cr_assert_eq(nr_invoked, 0, "%d callbacks were invoked before any pass",
		     nr_invoked);

	passes = sim_point_passes("rcu_cb_pass");
	sim_step_point("rcu_cb_pass", 1);
	sim_run_until_idle();
	cr_assert_eq(sim_point_passes("rcu_cb_pass"), passes + 1);
	cr_assert_eq(nr_invoked, 10,
		     "one pass invoked %d callbacks; with blimit 10 it must invoke "
		     "exactly 10 and leave the other %d ready callbacks for later passes",
		     nr_invoked, BLIMIT_N - 10);
	cr_assert_eq(sim_tasks_at_point("rcu_cb_pass"), 1,
		     "after a pass with callbacks left over, the kthread must start "
		     "another pass");

	/* Lab 3's point: grace periods go on while passes lag behind them, so
	 * back-to-back synchronize_rcu() calls do not mean "callbacks done". */
	for (int i = 0; i < 3; i++)
		synchronize_rcu();
	cr_assert_eq(nr_invoked, 10,
		     "three synchronize_rcu() calls with the next pass held: %d "
		     "callbacks invoked, expected still 10 (passes must not be tied to "
		     "grace periods; start each pass with rcu_cb_pass_begin())",
		     nr_invoked);

	sim_step_point("rcu_cb_pass", 1);
	sim_run_until_idle();
	cr_assert_eq(nr_invoked, 20, "the second pass invoked %d callbacks, not 10",
		     nr_invoked - 10);

	rcu_set_blimit(100);
	sim_step_point("rcu_cb_pass", 1);
	sim_run_until_idle();
	cr_assert_eq(nr_invoked, 120,
		     "after rcu_set_blimit(100), a pass invoked %d callbacks, not 100",
		     nr_invoked - 20);

	sim_release_point("rcu_cb_pass");
	sim_run_until_idle();
	cr_assert_eq(nr_invoked, BLIMIT_N, "%d of %d callbacks invoked", nr_invoked,
		     BLIMIT_N);
	cr_assert_geq(sim_point_passes("rcu_cb_pass"), passes + 3 + (BLIMIT_N - 120) / 100,
		      "%ld passes for %d callbacks at most 100 per pass",
		      sim_point_passes("rcu_cb_pass") - passes, BLIMIT_N);
	for (int i = 0; i < 3; i++)
		kthread_stop(hogs[i]);
	rcu_callbacks_exit();
	kfree(items);
}

/*
 * Callbacks queued while the kthread still works through a backlog: blimit
 * 1, passes held, and one more callback queued after every pass. Whatever
 * the kthread does between two passes (a design that goes back round its
 * loop after each pass splices an empty rcu_next, and may wait for a grace
 * period with nothing in rcu_wait), each callback runs exactly once.
 */
#define BACKLOG_N 4
#define BACKLOG_LATE 8
#define BACKLOG_ALL (BACKLOG_N + BACKLOG_LATE)

static void scenario_backlog(void *arg)
{
	static struct item items[BACKLOG_ALL];
	static int times[BACKLOG_ALL];
	int n;

	(void)arg;
	memset(times, 0, sizeof(times));
	invoked_order = NULL;
	times_invoked = times;
	nr_invoked = nr_duplicates = 0;
	rcu_callbacks_init();
	rcu_set_blimit(1);
	sim_hold_point("rcu_cb_pass");
	/* From rcuo/0's own CPU 0, which a task keeps until it sleeps: the whole
	 * backlog is queued before the kthread takes any of it, on every seed. */
	migrate_to_cpu(0);
	for (n = 0; n < BACKLOG_N; n++) {
		items[n].idx = n;
		call_rcu(&items[n].rcu, item_cb);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	for (int k = 0; n < BACKLOG_ALL; k++, n++) {
		sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
		trace_mark("one more callback while the backlog is invoked");
		migrate_to_cpu(1 + k % 3);
		items[n].idx = n;
		call_rcu(&items[n].rcu, item_cb);
		migrate_to_cpu(-1);
		sim_run_until_idle();
	}
	sim_release_point("rcu_cb_pass");
	sim_run_until_idle();
	for (int i = 0; i < BACKLOG_ALL; i++)
		cr_assert_eq(times[i], 1,
			     "seed %llu: callback %d of %d was invoked %d times, not once: %s, "
			     "with blimit 1 and one pass let through at a time. A callback lost "
			     "between the lists: when the list spliced is empty, does "
			     "cblist_splice() leave the other exactly as it was, its tail "
			     "included, and when it is not, does @to's tail end at the last "
			     "callback spliced (TODO 2)? Does the kthread wait for a grace period with "
			     "nothing in rcu_wait (TODO 4)?", seed(), i, BACKLOG_ALL, times[i],
			     i < BACKLOG_N ? "queued before the kthread began its backlog" :
			     "queued after a pass, while ready callbacks were still left");
	rcu_set_blimit(10);
	rcu_callbacks_exit();
	times_invoked = NULL;
}

SIM_TEST_SEEDS(blimit, callbacks_queued_during_a_backlog_run_once, scenario_backlog,
	       .description = "blimit 1, passes one at a time, a callback queued after each "
			      "pass: each runs exactly once")

/* ---- a callback that queues itself again ---------------------------------- */

struct reposter {
	struct rcu_head rcu;
	int runs;
};

static int repost_stop;

static void repost_cb(struct rcu_head *rp)
{
	struct reposter *r = container_of(rp, struct reposter, rcu);

	r->runs++;
	if (READ_ONCE(repost_stop))
		kfree(r);
	else
		call_rcu(&r->rcu, repost_cb);   /* again, after another grace period */
}

static void scenario_repost(void *arg)
{
	struct reposter *r = kzalloc(sizeof(*r), GFP_KERNEL);
	int runs = 0;
	long live;

	(void)arg;
	repost_stop = 0;
	rcu_callbacks_init();
	sim_hold_point("rcu_cb_pass");
	sim_call_rcu_on(1, &r->rcu, repost_cb);
	for (int i = 1; i <= 5; i++) {
		sim_run_until_idle();
		cr_assert_eq(sim_tasks_at_point("rcu_cb_pass"), 1,
			     "seed %llu: the self-reposting callback (run %d) should be "
			     "ready at the kthread's next pass", seed(), i);
		sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
		runs = r->runs;
		cr_assert_eq(runs, i,
			     "seed %llu: after %d passes the reposting callback ran %d "
			     "times: its call_rcu() from inside the callback did not get "
			     "it queued again (is the queue's lock still held while "
			     "callbacks run? TODO 5)",
			     seed(), i, runs);
	}
	/* Tell it to stop: its next run frees it instead of reposting. */
	WRITE_ONCE(repost_stop, 1);
	live = kmem_live_objects();
	sim_release_point("rcu_cb_pass");
	sim_run_until_idle();
	cr_assert_eq(kmem_live_objects(), live - 1,
		     "seed %llu: after being told to stop, the reposting callback did "
		     "not run once more and free itself", seed());
	long passes = sim_point_passes("rcu_cb_pass");

	sim_run_until_idle();
	cr_assert_eq(sim_point_passes("rcu_cb_pass"), passes,
		     "seed %llu: passes go on after the last callback ran", seed());
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(repost, self_reposting_stops_when_told, scenario_repost,
	       .description = "a callback that calls call_rcu() on itself runs once per "
			      "grace period and, told to stop, frees itself and leaves nothing")

/* ---- leaks --------------------------------------------------------------- */

static void free_any(struct rcu_head *rp)
{
	kfree(rp);      /* the rcu_head is the object's first member */
}

static void queue_from_irq(void *data)
{
	int n = (int)(long)data;

	for (int i = 0; i < n; i++)
		call_rcu(kmalloc(sizeof(struct rcu_head) + (size_t)i, GFP_ATOMIC), free_any);
}

static int queue_from_kthread(void *data)
{
	int n = (int)(long)data;

	for (int i = 0; i < n; i++) {
		call_rcu(kmalloc(sizeof(struct rcu_head) + 8 * (size_t)i, GFP_KERNEL),
			 free_any);
		if (i % 16 == 0)
			cond_resched();
	}
	return 0;
}

#define NR_POSTERS 2

SIM_TEST(leak, nothing_left_when_callbacks_ran,
	 .description = "callbacks queued from tasks and IRQs free "
			"everything (under Valgrind: no leak, no memory error)")
{
	struct task_struct *posters[NR_POSTERS];

	sim_boot(NULL);
	rcu_callbacks_init();
	/* Tasks on CPUs 2 and 3, interrupt handlers on CPUs 1 and 2, all at once. */
	for (int i = 0; i < NR_POSTERS; i++) {
		posters[i] = kthread_run_on_cpu(queue_from_kthread, (void *)300L, 2 + i,
						"poster/%u");
		raise_irq(1 + i, queue_from_irq, (void *)100L, "poster_irq");
	}
	sim_run_until_idle();
	cr_assert_eq(kmem_live_objects(), 0,
		     "%ld objects still allocated after every callback should have run "
		     "(callbacks lost or never invoked)", kmem_live_objects());
	for (int i = 0; i < NR_POSTERS; i++)
		kthread_stop(posters[i]);
	rcu_callbacks_exit();
}

/* ---- irq/call_rcu_keeps_interrupts_off ----------------------------------- */

struct irqs_off_caller {
	struct foo *p;
	int off_after;  /* irqs_disabled() right after call_rcu() returned */
	int done;
};

/* A task that calls call_rcu() with interrupts off, as a spin_lock_irqsave() holder does. */
static int call_rcu_irqs_off(void *arg)
{
	struct irqs_off_caller *c = arg;
	unsigned long flags;

	local_irq_save(flags);
	call_rcu(&c->p->rcu, foo_reclaim);
	c->off_after = irqs_disabled();
	local_irq_restore(flags);
	WRITE_ONCE(c->done, 1);
	return 0;
}

SIM_TEST(irq, call_rcu_keeps_interrupts_off,
	 .description = "call_rcu() called with interrupts off returns with them still off")
{
	struct irqs_off_caller c = { 0 };

	sim_boot(NULL);
	scenario_start();
	c.p = foo_new(1);
	kthread_stop(kthread_run_on_cpu(call_rcu_irqs_off, &c, 2, "irqs-off"));
	sim_run_until_idle();
	cr_assert(READ_ONCE(c.done), "the caller did not finish");
	cr_assert(c.off_after,
		  "call_rcu() was called with interrupts off (from an IRQ handler or under "
		  "spin_lock_irqsave()) and returned with them on: the way call_rcu() takes "
		  "and releases rcu_cb_lock does not restore the caller's state (TODO 3)");
	cr_assert_eq(nr_reclaimed, 1, "the callback was invoked %d times, not once",
		     nr_reclaimed);
	rcu_callbacks_exit();
}

/* ---- order/fresh_rcu_heads_hold_garbage ---------------------------------- */

SIM_TEST(order, fresh_rcu_heads_hold_garbage,
	 .description = "call_rcu() on an rcu_head whose ->next holds garbage (fresh from "
			"kmalloc(), or left from an earlier use) queues it correctly")
{
	struct foo *p[3];

	sim_boot(NULL);
	scenario_start();
	migrate_to_cpu(2);
	for (int i = 0; i < 3; i++) {
		p[i] = foo_new(i);
		/* what kmalloc() may hand back: a stale pointer */
		p[i]->rcu.next = (struct rcu_head *)LIST_POISON1;
		call_rcu(&p[i]->rcu, foo_reclaim);
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 3,
		     "three callbacks on rcu_heads whose ->next held garbage: %d invoked, not "
		     "3: the last one queued kept its stale ->next, which the queue then "
		     "followed (TODO 1, cblist_enqueue())", nr_reclaimed);
	rcu_callbacks_exit();
}

/* ---- leak/nothing_runs_after_exit ---------------------------------------- */

static int ran_after_exit;

static void after_exit_cb(struct rcu_head *unused)
{
	(void)unused;
	ran_after_exit++;
}

SIM_TEST(leak, nothing_runs_after_exit,
	 .description = "after rcu_callbacks_exit() no kthread of the lab is left: a "
			"callback queued afterwards is never invoked")
{
	static struct rcu_head late;
	struct foo *p;

	sim_boot(NULL);
	scenario_start();
	ran_after_exit = 0;
	p = foo_new(1);
	sim_call_rcu_on(2, &p->rcu, foo_reclaim);
	sim_run_until_idle();
	cr_assert_eq(nr_reclaimed, 1, "the callback was invoked %d times, not once",
		     nr_reclaimed);
	rcu_callbacks_exit();
	sim_call_rcu_on(2, &late, after_exit_cb);
	sim_advance_jiffies(2);
	sim_run_until_idle();
	cr_assert_eq(ran_after_exit, 0,
		     "a callback queued after rcu_callbacks_exit() returned was invoked: the "
		     "callback kthread rcuo/0 was still running after the exit function "
		     "(TODO 8)");
}

/* ---- irq/irq_at_every_access_on_every_cpu -------------------------------- */

/*
 * On each CPU in turn (CPU 0 included: rcuo/0 runs there and takes
 * rcu_cb_lock), a task queues one callback while an interrupt that queues
 * another is raised before that CPU's k-th student access, for k = 1, 2, ...
 * until it no longer comes: inside call_rcu(), inside the kthread's lock
 * sections, inside synchronize_rcu(). Both callbacks must run, once each.
 */
struct sweep_run {
	struct foo *task_p, *irq_p;
	int irq_ran;
};

static void sweep_irq(void *arg)
{
	struct sweep_run *s = arg;

	s->irq_ran = 1;
	call_rcu(&s->irq_p->rcu, foo_reclaim);
}

static int sweep_task(void *arg)
{
	struct sweep_run *s = arg;

	call_rcu(&s->task_p->rcu, foo_reclaim);
	return 0;
}

/* False once the interrupt no longer comes. */
static bool irq_at_access_on(int cpu, long k)
{
	struct sweep_run s = { 0 };

	sim_boot(NULL);
	scenario_start();
	s.task_p = foo_new(1);
	s.irq_p = foo_new(2);
	sim_irq_at_access(cpu, k, sweep_irq, &s, "call_rcu_irq");
	kthread_stop(kthread_run_on_cpu(sweep_task, &s, cpu, "poster"));
	sim_run_until_idle();
	if (!s.irq_ran) {
		rcu_callbacks_exit();
		kfree(s.irq_p);      /* never queued */
		cr_assert_eq(nr_reclaimed, 1, "CPU %d: the task's callback ran %d times, "
			     "not once", cpu, nr_reclaimed);
		sim_halt();
		return false;
	}
	cr_assert_eq(nr_reclaimed, 2,
		     "an interrupt on CPU %d before that CPU's student access %ld called "
		     "call_rcu() while a task there queued a callback too: %d of the 2 "
		     "callbacks ran: the interrupt came inside a section of rcu_cb_lock, or of "
		     "the queue, that interrupts could still enter (call_rcu(), TODO 3; the "
		     "kthread's helpers, TODOs 4, 5), or a list helper left a tail pointing "
		     "into another list (TODOs 1, 2)", cpu, k, nr_reclaimed);
	rcu_callbacks_exit();
	cr_assert_eq(sim_halt(), 0, "kmalloc()ed objects never kfree()d");
	return true;
}

SIM_TEST(irq, irq_at_every_access_on_every_cpu, .timeout = 120,
	 .description = "an interrupt that calls call_rcu() at any access of any CPU, "
			"the lock holder's included, loses and deadlocks nothing")
{
	for (int cpu = 0; cpu < 4; cpu++)
		for (long k = 1; k < 5000 && irq_at_access_on(cpu, k); k++)
			;
}
