/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rculabs_check.h - what a lab's real checks share (real runs only): the
 * verdict lines the host reads, and waits that end.
 *
 * Rule kept here: a check announces itself (RUNNING("name:")) and prints
 * exactly one verdict line, "RCULABS: PASS name: ..." or "RCULABS: FAIL
 * name: ...", which the scenario requires (init.sh's rl_verdict)
 * and the host reports; and it never waits without a bound, measured in
 * jiffies (a loop count is no clock in an emulated machine). A check that
 * calls call_rcu() calls the module's own: the lab's real.h has renamed it
 * before this header is read.
 */
#ifndef RCULABS_CHECK_H
#define RCULABS_CHECK_H

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>

/* A check begins: if the guest goes silent now, the host can say where. */
#define RUNNING(fmt, ...) pr_info("RCULABS: running " fmt "\n", ##__VA_ARGS__)

/* A check's verdict line; its value says whether the check passed. */
#define PASS(...) ({ pr_info("RCULABS: PASS " __VA_ARGS__); true; })
#define FAIL(...) ({ pr_info("RCULABS: FAIL " __VA_ARGS__); false; })

/* Until @cond holds, or @ms milliseconds: whether it held. Sleeps. */
#define wait_until(cond, ms)                                                  \
	({                                                                    \
		unsigned long __end = jiffies + msecs_to_jiffies(ms);         \
		while (!(cond) && time_before(jiffies, __end))                \
			msleep(1);                                            \
		(cond);                                                       \
	})

/* ---- a callback waits for the readers that began before it ---------- */

struct rculabs_gp {
	struct rcu_head rh;
	int inside, done, ran, ran_early;
};

static void rculabs_gp_cb(struct rcu_head *rh)
{
	WRITE_ONCE(container_of(rh, struct rculabs_gp, rh)->ran, 1);
}

static int rculabs_gp_reader(void *arg)
{
	struct rculabs_gp *g = arg;

	rcu_read_lock();
	WRITE_ONCE(g->inside, 1);
	mdelay(200);
	WRITE_ONCE(g->ran_early, READ_ONCE(g->ran));
	rcu_read_unlock();
	WRITE_ONCE(g->done, 1);
	return 0;
}

/*
 * A callback queued with the module's call_rcu() on CPU 0 while a reader is
 * inside on CPU 1 must run, and only after that reader has left: the check
 * "grace period:". @early and @never: what its failures ask the student.
 */
static inline bool rculabs_check_grace_period(const char *early, const char *never)
{
	static struct rculabs_gp g;     /* a lost callback keeps its memory */

	RUNNING("grace period:");
	if (IS_ERR(kthread_run_on_cpu(rculabs_gp_reader, &g, 1, "reader/%u")) ||
	    !wait_until(READ_ONCE(g.inside), 2000))
		return FAIL("grace period: the reader did not start\n");
	call_rcu(&g.rh, rculabs_gp_cb);
	wait_until(READ_ONCE(g.done), 5000);
	if (READ_ONCE(g.ran_early))
		return FAIL("grace period: a callback queued on CPU 0 while a reader was inside "
			    "on CPU 1 ran before that reader left: %s\n", early);
	if (!wait_until(READ_ONCE(g.ran), 3000))
		return FAIL("grace period: a callback queued with call_rcu() never ran (3 s): "
			    "%s\n", never);
	return PASS("grace period: a callback queued while a reader was inside ran after "
		    "the reader left\n");
}

#endif
