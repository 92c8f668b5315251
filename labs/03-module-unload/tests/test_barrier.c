/* barrier/: your rcu_barrier() on lab 2's single global callback queue. */
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include "lab3.h"

struct tcb {
	struct rcu_head rcu;
	atomic_t *count;
};

static atomic_t plain_invoked;

static void tcb_free(struct rcu_head *head)
{
	struct tcb *t = container_of(head, struct tcb, rcu);

	atomic_inc(t->count);
	kfree(t);
}

/* Queue @n counted callbacks from CPU @cpu (call_rcu() needs a CPU). */
static void queue_plain(int n, atomic_t *count, int cpu)
{
	migrate_to_cpu(cpu);
	for (int i = 0; i < n; i++) {
		struct tcb *t = kmalloc(sizeof(*t), GFP_KERNEL);

		t->count = count;
		call_rcu(&t->rcu, tcb_free);
	}
	migrate_to_cpu(-1);
}

/* ---- empty queue ------------------------------------------------------- */

static void empty_scenario(void *arg)
{
	(void)arg;
	rcu_callbacks_init();
	test_rcu_barrier();
	test_rcu_barrier();
	rcu_callbacks_exit();
}

SIM_TEST(barrier, empty_queue_returns,
	 .description = "rcu_barrier() with nothing queued returns, twice in a row")
{
	sim_run_seeds(NULL, empty_scenario, NULL);
	cr_assert(1, "rcu_barrier() returned on an empty queue");
}

/* ---- it waits for every earlier callback, under a forced schedule ------ */

struct barrier_call {
	atomic_t *count;      /* callbacks it must have waited for */
	int seen;             /* *count when rcu_barrier() returned */
	bool returned;
	int pre;              /* queue this many before calling (0: none) */
};

static int barrier_thread(void *arg)
{
	struct barrier_call *b = arg;

	if (b->pre)
		for (int i = 0; i < b->pre; i++) {
			struct tcb *t = kmalloc(sizeof(*t), GFP_KERNEL);

			t->count = b->count;
			call_rcu(&t->rcu, tcb_free);
		}
	rcu_barrier();
	b->seen = ctl_read(b->count); /* no scheduling point before this read */
	WRITE_ONCE(b->returned, true);
	return 0;
}

#define EARLIER 6

static void earlier_scenario(void *arg)
{
	(void)arg;
	struct barrier_call b = { .count = &plain_invoked };
	int steps = 0;

	atomic_store(&plain_invoked.counter, 0);
	rcu_callbacks_init();
	rcu_set_blimit(1);
	sim_hold_point("rcu_cb_pass");
	queue_plain(EARLIER, &plain_invoked, LAB3_WRITER_CPU);
	struct task_struct *k = kthread_run_on_cpu(barrier_thread, &b, LAB3_HELPER_CPU, "barrier");

	sim_run_until_idle();
	/* One callback pass at a time, each invoking at most one callback. */
	while (!READ_ONCE(b.returned) && steps++ < 200) {
		sim_step_point("rcu_cb_pass", 1);
		sim_run_until_idle();
	}
	sim_release_point("rcu_cb_pass");
	cr_assert(READ_ONCE(b.returned), "seed %llu: rcu_barrier() had not returned after 200 "
		  "callback passes with %d callbacks queued", (unsigned long long)sim_seed(), EARLIER);
	cr_assert_eq(b.seen, EARLIER, "seed %llu: rcu_barrier() returned when only %d of the %d "
		     "callbacks queued before it had been invoked: it did not wait for a "
		     "callback queued behind them (the passes are held and let through one at "
		     "a time, so grace periods end while nothing is invoked; TODO 1)",
		     (unsigned long long)sim_seed(), b.seen, EARLIER);
	kthread_stop(k);
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(barrier, waits_for_earlier_callbacks, earlier_scenario,
	       .description = "when rcu_barrier() returns, every callback queued before it has "
			      "run (blimit 1)")

/* ---- callbacks queued by callbacks after it do not hold it up ---------- */

struct chain {
	struct rcu_head rcu;
	int *stop;            /* test's flag: stop re-posting */
	long generations;
	bool ended;
};

static void chain_cb(struct rcu_head *head)
{
	struct chain *c = container_of(head, struct chain, rcu);

	c->generations++;
	if (READ_ONCE(*c->stop)) {
		WRITE_ONCE(c->ended, true);
		return;
	}
	call_rcu(&c->rcu, chain_cb);
}

static void reposting_scenario(void *arg)
{
	(void)arg;
	static int stop;
	static struct chain c;

	stop = 0;
	c = (struct chain){ .stop = &stop };
	atomic_store(&plain_invoked.counter, 0);
	rcu_callbacks_init();
	rcu_set_blimit(2);
	sim_call_rcu_on(LAB3_WRITER_CPU, &c.rcu, chain_cb);
	queue_plain(EARLIER, &plain_invoked, LAB3_WRITER_CPU);
	/* The chain re-posts itself forever: the queue is never empty. */
	test_rcu_barrier();
	cr_assert_eq(ctl_read(&plain_invoked), EARLIER,
		     "seed %llu: rcu_barrier() returned when %d of the %d earlier callbacks had run",
		     (unsigned long long)sim_seed(), ctl_read(&plain_invoked), EARLIER);
	cr_assert_geq(c.generations, 1, "the re-posting callback queued before rcu_barrier() "
		      "had not run when rcu_barrier() returned");
	WRITE_ONCE(stop, 1);
	/*
	 * A generation running now may have read stop == 0 and re-post after
	 * the next barrier's marker; that barrier returns only after it has
	 * returned (one kthread invokes them in order), so the generation it
	 * re-posted, which sees the stop, is queued before the one after.
	 */
	test_rcu_barrier();
	test_rcu_barrier();
	cr_assert(READ_ONCE(c.ended), "seed %llu: after the chain was told to stop, a second "
		  "rcu_barrier() returned before the chain's last callback ran",
		  (unsigned long long)sim_seed());
	rcu_callbacks_exit();
}

SIM_TEST(barrier, not_fooled_by_reposting_callbacks,
	 .description = "a callback that re-posts itself forever neither stops rcu_barrier() from "
			"returning nor makes it return early")
{
	struct sim_config cfg = sim_default_config();

	/* A barrier that waits for an empty queue never returns here: let the
	 * kernel report that livelock quickly instead of after 2M steps. */
	cfg.max_steps = 400000;
	sim_run_seeds(&cfg, reposting_scenario, NULL);
}

/* ---- two callers at once ------------------------------------------------ */

static atomic_t own_invoked[2];

static void concurrent_scenario(void *arg)
{
	(void)arg;
	struct barrier_call b[2] = {
		{ .count = &own_invoked[0], .pre = 3 },
		{ .count = &own_invoked[1], .pre = 4 },
	};
	struct task_struct *k[2];

	atomic_store(&own_invoked[0].counter, 0);
	atomic_store(&own_invoked[1].counter, 0);
	rcu_callbacks_init();
	rcu_set_blimit(1);
	/* Both callers get inside rcu_barrier() before any callback runs. */
	sim_hold_point("rcu_cb_pass");
	k[0] = kthread_run_on_cpu(barrier_thread, &b[0], LAB3_WRITER_CPU, "barrier0");
	k[1] = kthread_run_on_cpu(barrier_thread, &b[1], LAB3_HELPER_CPU, "barrier1");
	sim_run_until_idle();
	sim_release_point("rcu_cb_pass");
	kthread_stop(k[0]);
	kthread_stop(k[1]);
	for (int i = 0; i < 2; i++) {
		cr_assert(b[i].returned, "seed %llu: caller %d never returned from rcu_barrier()",
			  (unsigned long long)sim_seed(), i);
		cr_assert_eq(b[i].seen, b[i].pre, "seed %llu: caller %d's rcu_barrier() returned when "
			     "%d of the %d callbacks it queued before had run",
			     (unsigned long long)sim_seed(), i, b[i].seen, b[i].pre);
	}
	rcu_callbacks_exit();
}

SIM_TEST_SEEDS(barrier, concurrent_callers_both_return, concurrent_scenario,
	       .description = "two tasks in rcu_barrier() at once: both return, each after its "
			      "own earlier callbacks")

/* ---- IRQ context ---------------------------------------------------------- */

SIM_TEST(barrier, in_irq_is_a_bug, .signal = BUG_SIGNAL,
	 .description = "rcu_barrier() sleeps: calling it from an interrupt is a BUG it reports first")
{
	sim_boot(NULL);
	rcu_callbacks_init();
	/* BUG_ON(in_interrupt()) says "kernel BUG"; sleeping in the IRQ would be
	 * caught later, by might_sleep(), as another BUG: not this one. */
	sim_expect_student_bug("kernel BUG", true);
	sim_call_in_irq(LAB3_TIMER_CPU, rcu_barrier, "barrier_irq");
	cr_assert_fail("rcu_barrier() called from an interrupt handler returned without a BUG");
}
