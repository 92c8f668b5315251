// SPDX-License-Identifier: GPL-2.0
/*
 * rculabs_flood.c - the real runs' load: slow RCU callbacks queued on one
 * CPU, or one CPU's workqueue kept busy.
 *
 * Rule kept here: this module makes a race likely without touching the code
 * under test. Loaded on CPU n, it queues nr callbacks there, each spending us
 * microseconds: every callback queued on CPU n after it (the module under
 * test's last ones) is invoked only once these have run, well after one grace
 * period. Writing MS to its parameter keep keeps that many queued there for
 * MS milliseconds, topped up as they run: a callback queued on CPU n in that
 * time waits behind about nr of them, even one queued just after an
 * rcu_barrier() drained the first ones. Writing MS to wq_hog keeps CPU hog_cpu's workqueue
 * busy for MS milliseconds, so that what Linux does in work items there (it
 * invokes SRCU's callbacks so) waits, while grace periods go on. It owns an
 * SRCU domain, rculabs_srcu, for a module under test to use (lab 5), as the
 * simulation's test owns the domain its module uses. Its own exit waits for
 * all of it, as a module must; the runs power off without unloading it
 * anyway.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/srcu.h>
#include <linux/workqueue.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RCU Labs: the real runs' load (slow callbacks, a busy workqueue, an SRCU domain)");

static int nr = 5000;
module_param(nr, int, 0444);
MODULE_PARM_DESC(nr, "how many callbacks to queue");
static int us = 20;
module_param(us, int, 0444);
MODULE_PARM_DESC(us, "how long each callback spends, in microseconds");

static int hog_cpu = 1;
module_param(hog_cpu, int, 0644);
MODULE_PARM_DESC(hog_cpu, "the CPU whose workqueue wq_hog keeps busy");
static int hog_ms;

struct srcu_struct rculabs_srcu;
EXPORT_SYMBOL_GPL(rculabs_srcu);

static atomic_t queued;          /* flood callbacks queued and not yet run */

static void flood_cb(struct rcu_head *head)
{
	udelay(us);
	kfree(head);
	atomic_dec(&queued);
}

/* Queue callbacks on this CPU until nr are waiting; false if memory ran out. */
static bool flood_top_up(void)
{
	while (atomic_read(&queued) < nr) {
		struct rcu_head *head = kmalloc(sizeof(*head), GFP_KERNEL);

		if (!head)
			return false;
		atomic_inc(&queued);
		call_rcu(head, flood_cb);
	}
	return true;
}

/*
 * The keeper: on the flood's CPU for keep_ms, it tops the backlog up every
 * millisecond, so that whatever is queued there meanwhile waits behind
 * about nr callbacks. It sleeps between top-ups: grace periods go on.
 */
static int keep_ms;
static DECLARE_COMPLETION(keeper_done);

static int keeper_fn(void *arg)
{
	unsigned long end = jiffies + msecs_to_jiffies(keep_ms);

	while (time_before(jiffies, end) && flood_top_up())
		usleep_range(1000, 1100);
	complete(&keeper_done);
	return 0;
}

static int keep_set(const char *val, const struct kernel_param *kp)
{
	int cpu = get_cpu(), err = kstrtoint(val, 0, &keep_ms);
	struct task_struct *t;

	put_cpu();
	if (err || keep_ms <= 0)
		return err ?: -EINVAL;
	t = kthread_create_on_cpu(keeper_fn, NULL, cpu, "rculabs_keeper/%u");
	if (IS_ERR(t))
		return PTR_ERR(t);
	reinit_completion(&keeper_done);
	wake_up_process(t);
	return 0;
}

static const struct kernel_param_ops keep_ops = { .set = keep_set };
module_param_cb(keep, &keep_ops, NULL, 0200);
MODULE_PARM_DESC(keep, "write MS, from the flood's CPU: nr callbacks kept queued there for MS ms");

/*
 * A work item that spins: a CPU's workqueue starts another worker only when
 * the running one sleeps, so every work item queued on that CPU waits behind
 * it. It spins on the clock, not in mdelay(), which runs with preemption off
 * and would hold up every RCU grace period too: the race must be SRCU's.
 */
static void hog_fn(struct work_struct *work)
{
	u64 end = ktime_get_ns() + (u64)hog_ms * NSEC_PER_MSEC;

	while (ktime_get_ns() < end)
		cpu_relax();
}

static DECLARE_WORK(hog_work, hog_fn);

/* Writing MS keeps hog_cpu's workqueue busy for MS milliseconds. */
static int wq_hog_set(const char *val, const struct kernel_param *kp)
{
	int err = kstrtoint(val, 0, &hog_ms);

	if (err)
		return err;
	if (hog_ms <= 0 || hog_cpu < 0 || hog_cpu >= nr_cpu_ids || !cpu_online(hog_cpu))
		return -EINVAL;
	queue_work_on(hog_cpu, system_wq, &hog_work);
	return 0;
}

static const struct kernel_param_ops wq_hog_ops = { .set = wq_hog_set };
module_param_cb(wq_hog, &wq_hog_ops, NULL, 0200);
MODULE_PARM_DESC(wq_hog, "write MS: hog_cpu's workqueue spins for MS milliseconds");

/*
 * A reader of rculabs_srcu on the writer's CPU for MS milliseconds, and a
 * grace period started from that CPU, which must wait for it: SRCU drives a
 * grace period from work items queued where it began, so this one and the
 * next (which callbacks queued meanwhile need) are driven from this CPU,
 * never held up by a busy workqueue elsewhere.
 */
struct srcu_hold {
	int ms;
	struct completion inside;
};

static int srcu_reader_fn(void *arg)
{
	struct srcu_hold *h = arg;
	int ms = h->ms, idx = srcu_read_lock(&rculabs_srcu);

	complete(&h->inside);
	msleep(ms);
	srcu_read_unlock(&rculabs_srcu, idx);
	return 0;
}

static int srcu_hold_set(const char *val, const struct kernel_param *kp)
{
	struct srcu_hold h = { .inside = COMPLETION_INITIALIZER_ONSTACK(h.inside) };
	int cpu = get_cpu(), err = kstrtoint(val, 0, &h.ms);
	struct task_struct *t;
	struct rcu_head *head;

	put_cpu();
	if (err || h.ms <= 0)
		return err ?: -EINVAL;
	head = kmalloc(sizeof(*head), GFP_KERNEL);
	if (!head)
		return -ENOMEM;
	t = kthread_create_on_cpu(srcu_reader_fn, &h, cpu, "rculabs_reader/%u");
	if (IS_ERR(t)) {
		kfree(head);
		return PTR_ERR(t);
	}
	wake_up_process(t);
	wait_for_completion(&h.inside);
	call_srcu(&rculabs_srcu, head, flood_cb);
	return 0;
}

static const struct kernel_param_ops srcu_hold_ops = { .set = srcu_hold_set };
module_param_cb(srcu_hold, &srcu_hold_ops, NULL, 0200);
MODULE_PARM_DESC(srcu_hold, "write MS: a reader of rculabs_srcu on the writer's CPU for MS ms");

static int __init flood_init(void)
{
	int err = init_srcu_struct(&rculabs_srcu);

	if (err)
		return err;
	flood_top_up();
	return 0;
}

static void __exit flood_exit(void)
{
	flush_work(&hog_work);
	if (keep_ms)
		wait_for_completion(&keeper_done);
	rcu_barrier();
	srcu_barrier(&rculabs_srcu);
	cleanup_srcu_struct(&rculabs_srcu);
}

module_init(flood_init);
module_exit(flood_exit);
