/*
 * test_lazy.c - lazy callbacks: call_rcu() may wait, up to its CPU's flush
 * timer (LAZY_FLUSH_JIFFIES) or until LAZY_FLUSH_CBS of them are queued, for
 * a grace period to be asked for it; call_rcu_hurry() may not, and takes
 * its CPU's lazy ones along; rcu_barrier() hurries them. Every delay is
 * measured in virtual jiffies: time moves only when nothing else can.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <sim/test.h>
#include "lab6_util.h"

/* Only virtual time passes: the test's msleep() lets it jump from timer to timer. */
static void lazy_waits_for_timer(void *arg)
{
	static struct stamp_cb c;
	long gps;

	(void)arg;
	rcu_callbacks_init();
	stamp_cb_init(&c);
	gps = trace_count(TR_GP_START);
	queue_lazy_on(1, &c.rh, stamp_cb_func);
	sim_run_until_idle();
	cr_assert(trace_count(TR_GP_START) == gps && !c.times,
		  "call_rcu() of a lazy callback started a grace period (or ran the callback) "
		  "at once: a lazy callback neither wakes rcuc/N nor asks for a grace period "
		  "before its flush timer or the LAZY_FLUSH_CBS-th lazy callback (TODO 2)");
	msleep(LAZY_FLUSH_JIFFIES + 10);
	cr_assert_eq(c.times, 1, "a lazy callback queued at jiffy 0 had not run %lu jiffies "
		     "later: the first lazy callback arms its CPU's lazy timer for "
		     "LAZY_FLUSH_JIFFIES (%d) from then, and its firing makes NEXT due "
		     "(TODO 2, TODO 3: rcuc/N's work)", jiffies, LAZY_FLUSH_JIFFIES);
	cr_assert(c.at >= LAZY_FLUSH_JIFFIES && c.at < LAZY_FLUSH_JIFFIES + 10,
		  "a lazy callback queued at jiffy 0 ran at jiffy %lu: its flush timer fires "
		  "LAZY_FLUSH_JIFFIES (%d) after the first lazy callback (TODO 2)",
		  c.at, LAZY_FLUSH_JIFFIES);
	lab6_end();
}

SEEDS_TEST(lazy, call_rcu_waits_for_its_flush_timer, lazy_waits_for_timer, 4, ANY_MODE)

static int count_ran(const struct rec_cb *cbs, int n)
{
	int ran = 0;

	for (int i = 0; i < n; i++)
		ran += cbs[i].times;
	return ran;
}

/* LAZY_FLUSH_CBS - 1 lazy callbacks wait; one more flushes them all, at once. */
static void many_flush(void *arg)
{
	static struct rec_cb cbs[LAZY_FLUSH_CBS];

	(void)arg;
	lab6_begin();
	for (int i = 0; i < LAZY_FLUSH_CBS; i++)
		rec_cb_init(&cbs[i], 2);
	migrate_to_cpu(2);
	for (int i = 0; i < LAZY_FLUSH_CBS; i++) {
		call_rcu(&cbs[i].rh, rec_cb_func);
		if (i == LAZY_FLUSH_CBS - 2) {
			migrate_to_cpu(-1);
			sim_run_until_idle();
			cr_assert_eq(count_ran(cbs, LAZY_FLUSH_CBS), 0,
				     "%d lazy callbacks on CPU 2 ran without their timer: fewer "
				     "than LAZY_FLUSH_CBS (%d) lazy callbacks may wait (TODO 2)",
				     LAZY_FLUSH_CBS - 1, LAZY_FLUSH_CBS);
			migrate_to_cpu(2);
		}
	}
	migrate_to_cpu(-1);
	sim_run_until_idle();
	cr_assert_eq(count_ran(cbs, LAZY_FLUSH_CBS), LAZY_FLUSH_CBS,
		     "only %d of LAZY_FLUSH_CBS (%d) lazy callbacks on CPU 2 ran without the "
		     "timer: the LAZY_FLUSH_CBS-th one hurries them all and wakes rcuc/2 (TODO 2)",
		     count_ran(cbs, LAZY_FLUSH_CBS), LAZY_FLUSH_CBS);
	cr_assert_eq(jiffies, 0ul, "virtual time moved: the flush came from the timer");
	lab6_end();
}

SEEDS_TEST(lazy, many_lazy_callbacks_flush_at_once, many_flush, 4, ANY_MODE)

/* Three lazy callbacks on CPU 1, then a hurried one there: all four run now, in order. */
static void hurry_takes_lazy(void *arg)
{
	static struct rec_cb one[4], three[2];

	(void)arg;
	lab6_begin();
	for (int i = 0; i < 2; i++) {
		queue_rec_on(3, &three[i], true);
	}
	for (int i = 0; i < 4; i++) {
		rec_cb_init(&one[i], 1);
		if (i < 3)
			queue_lazy_on(1, &one[i].rh, rec_cb_func);
		else
			queue_hurry_on(1, &one[i].rh, rec_cb_func);
	}
	sim_run_until_idle();
	cr_assert_eq(one[3].times, 1, "call_rcu_hurry() on CPU 1 did not run its callback "
		     "without time passing: a callback that is not lazy wakes rcuc/1, which "
		     "asks for a grace period at once (TODO 2, 3)");
	cr_assert_eq(count_ran(one, 3), 3, "%d of the 3 lazy callbacks queued on CPU 1 before "
		     "a call_rcu_hurry() there had run with it: a hurried callback takes the "
		     "lazy ones before it along (->len_lazy back to 0: TODO 1)", count_ran(one, 3));
	for (int i = 1; i < 4; i++)
		cr_assert_gt(one[i].seq, one[i - 1].seq, "CPU 1's callbacks ran out of order");
	cr_assert_eq(count_ran(three, 2), 0, "CPU 3's lazy callbacks ran when CPU 1 hurried: "
		     "each CPU's laziness is its own");
	lab6_end();
}

SEEDS_TEST(lazy, call_rcu_hurry_takes_lazy_ones_along, hurry_takes_lazy, 4, ANY_MODE)

/* rcu_barrier() with only lazy callbacks queued returns without any time passing. */
static struct rec_cb lazies[2][3];

static void lazies_done(struct barrier_caller *bc)
{
	bc->early = count_ran(&lazies[0][0], 6) != 6;
}

static void barrier_hurries(void *arg)
{
	static struct barrier_caller bc;

	(void)arg;
	lab6_begin();
	for (int i = 0; i < 6; i++) {
		rec_cb_init(&lazies[i / 3][i % 3], 1 + i / 3);
		queue_lazy_on(1 + i / 3, &lazies[i / 3][i % 3].rh, rec_cb_func);
	}
	start_barrier(&bc, 0, lazies_done);
	if (!READ_ONCE(bc.returned)) {
		trace_mark("virtual time runs on");
		msleep(LAZY_FLUSH_JIFFIES + 10);
		cr_assert(READ_ONCE(bc.returned), "seed %llu: rcu_barrier() with only lazy callbacks "
			  "queued (on CPUs 1 and 2) had not returned %d jiffies later, past the lazy "
			  "flush timer: its markers wait behind the lazy callbacks, and nothing "
			  "hurried or flushed them (TODO 6: rcu_barrier_entrain(); TODO 2: the "
			  "flush timer)", (unsigned long long)sim_seed(), LAZY_FLUSH_JIFFIES + 10);
		barrier_caller_stop(&bc);
		cr_assert_fail("rcu_barrier() with only lazy callbacks queued (on CPUs 1 and 2) did not "
			"return before virtual time had to move: it returned %lu jiffies after it "
			"was called, when the lazy flush timer fired (LAZY_FLUSH_JIFFIES = %d): a "
			"barrier must hurry the lazy callbacks its markers wait behind (TODO 6: "
			"rcu_barrier_entrain())", bc.returned_at - bc.called_at, LAZY_FLUSH_JIFFIES);
	}
	expect_returned(&bc, "the lazy callbacks queued before it had run");
	lab6_end();
}

SEEDS_TEST(lazy, barrier_hurries_lazy_callbacks, barrier_hurries, 4, ANY_MODE)
