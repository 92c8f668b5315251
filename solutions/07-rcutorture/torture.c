/*
 * torture.c - an rcutorture for the workbook's RCU (lab 7): the test that
 * must catch RCUs it has never seen.
 *
 * Rule kept here: an element's age counts the grace periods that have ended
 * since it was replaced, plus one; a reader that found it inside its
 * read-side section may see age 0 or 1, never 2 or more, and never a freed
 * element. Only the RCU under test (the ops table) may make ages grow: the
 * torture ages an element only after ops->sync() returned or from the
 * callback ops->call() invoked, and frees it only when it is old. At the end
 * it stops everything that posts callbacks before it waits for them (the
 * article's rcu_torture_cleanup() order), and reports what it saw.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "rculist.h"
#include "torture_ops.h"

#define TORTURE_MAGIC 0x7041c0de
#define TORTURE_MAX_FAKEWRITERS 8
#define TORTURE_LINGER 16 /* re-reads of the age inside one read-side section */
#define TORTURE_LONG_EVERY 16
#define TORTURE_LONG_LINGER 1000

struct torture_elem {
	struct rcu_head rh;
	struct list_head pipe; /* on the writer's pipe while it ages by ops->sync() */
	int age;               /* 1 when replaced, +1 per grace period since */
	int magic;             /* TORTURE_MAGIC while allocated (kfree() poisons it) */
};

struct torture_reader {
	struct task_struct *task;
	long reads;
	long pipe[TORTURE_PIPE_LEN + 1];
	long age_errors;
	long free_errors;
};

/* One run's state: one run at a time. */
static struct {
	const struct rcu_torture_ops *ops;
	const struct torture_params *p;
	struct torture_result *res;
	struct torture_elem *cur; /* what readers find: RCU-protected */
	int fullstop;             /* the article's flag: stop posting */
	struct list_head pipe;    /* writer's: replaced elements aging by sync */
	struct completion writer_done;
	struct completion barrier_done;
	atomic_t in_flight; /* callbacks queued and not yet finished */
	atomic_t callbacks;
	atomic_t grace_periods;
	atomic_t barrier_cbs_done;
	struct torture_reader readers[NR_CPUS];
} tt;

/*
 * Every torture kthread ends here, once its work is done: it waits to be
 * stopped. Linux frees a kthread that returns before kthread_stop() asks it
 * to, and the cleanup's kthread_stop() would then use freed memory (the
 * simulated kernel reports it; a real kernel oopses). rcutorture's
 * torture_kthread_stopping() does the same.
 */
static void torture_kthread_stopping(void)
{
	while (!kthread_should_stop())
		schedule_timeout(1);
}

/*
 * Element @e, whose age was @seen when the reader picked it up, is still
 * held after the reader lingered: histogram its age now (the older of the
 * two), count what is wrong (part of TODO 1: a freed element's magic is
 * poisoned; an age of 2 or more is an error).
 */
static void torture_reader_check(struct torture_reader *r, struct torture_elem *e, int seen)
{
	int age;

	/* BEGIN SOLUTION */
	r->reads++;
	if (READ_ONCE(e->magic) != TORTURE_MAGIC) {
		r->free_errors++;
		r->pipe[TORTURE_PIPE_LEN]++;
		return;
	}
	age = READ_ONCE(e->age);
	if (seen > age)
		age = seen;
	if (age > TORTURE_PIPE_LEN || age < 0)
		age = TORTURE_PIPE_LEN;
	r->pipe[age]++;
	if (age >= 2)
		r->age_errors++;
	/* END SOLUTION */
	/* STARTER: (void)r; (void)e; (void)seen; (void)age; */
}

/*
 * A reader that lingers in its section gives a broken grace period time to
 * end under it: re-read the age TORTURE_LINGER times, and one read in
 * TORTURE_LONG_EVERY far longer (rcutorture's occasional long delay: a
 * whole update cycle may pass); the oldest age seen counts (part of
 * TODO 1).
 */
static int torture_linger(struct torture_reader *r, struct torture_elem *e, int seen)
{
	/* BEGIN SOLUTION */
	int n = r->reads % TORTURE_LONG_EVERY ? TORTURE_LINGER : TORTURE_LONG_LINGER;

	for (int i = 0; i < n; i++) {
		int age = READ_ONCE(e->age);

		if (age > seen)
			seen = age;
	}
	/* END SOLUTION */
	/* STARTER: (void)r; (void)e; */
	return seen;
}

static int torture_reader_fn(void *arg)
{
	struct torture_reader *r = arg;

	/*
	 * TODO 1: until fullstop (or kthread_should_stop()): enter a read-side
	 * section through the ops table, pick up the current element with
	 * rcu_dereference(), linger (ops->read_delay()), then check it: its
	 * age and whether it was freed (torture_reader_check()). Leave the
	 * section and let the CPU pass a quiescent state between sections.
	 */
	/* BEGIN SOLUTION */
	while (!READ_ONCE(tt.fullstop) && !kthread_should_stop()) {
		struct torture_elem *e;

		tt.ops->readlock();
		e = rcu_dereference(tt.cur);
		if (e) {
			int seen = READ_ONCE(e->age);

			tt.ops->read_delay();
			seen = torture_linger(r, e, seen);
			torture_reader_check(r, e, seen);
		}
		tt.ops->readunlock();
		cond_resched();
	}
	/* END SOLUTION */
	/* STARTER: (void)r; */
	torture_kthread_stopping();
	return 0;
}

/*
 * Every element on the pipe has seen one more grace period; free those
 * that reached TORTURE_PIPE_LEN (part of TODO 2).
 */
static void torture_pipe_age(void)
{
	struct torture_elem *e, *n;

	/* BEGIN SOLUTION */
	list_for_each_entry_safe(e, n, &tt.pipe, pipe) {
		int age = e->age + 1;

		WRITE_ONCE(e->age, age);
		if (age >= TORTURE_PIPE_LEN) {
			list_del(&e->pipe);
			kfree(e);
		}
	}
	/* END SOLUTION */
	/* STARTER: (void)e; (void)n; */
}

/*
 * The callback path: ops->call() invoked this after a grace period, so the
 * element is one older; queue it again until it is old enough to free.
 */
static void torture_cb(struct rcu_head *rh)
{
	struct torture_elem *e = container_of(rh, struct torture_elem, rh);

	/*
	 * TODO 3: count the callback, age the element by one; once its age
	 * reaches TORTURE_PIPE_LEN, or once fullstop is set (the article's
	 * line 6: no callback re-posts itself after it), free it and count
	 * it out of in_flight; else queue it again with ops->call().
	 */
	/* BEGIN SOLUTION */
	int age = READ_ONCE(e->age) + 1;

	atomic_inc(&tt.callbacks);
	if (age >= TORTURE_PIPE_LEN || READ_ONCE(tt.fullstop)) {
		kfree(e);
		atomic_dec(&tt.in_flight);
		return;
	}
	WRITE_ONCE(e->age, age);
	tt.ops->call(&e->rh, torture_cb);
	/* END SOLUTION */
	/* STARTER: (void)e; */
}

/* Retire @old, just replaced: it ages by grace periods from now on (part of TODO 2). */
static void torture_retire(struct torture_elem *old, int i)
{
	WRITE_ONCE(old->age, 1);
	/* BEGIN SOLUTION */
	if (tt.p->use_call && (i & 1)) {
		atomic_inc(&tt.in_flight);
		tt.ops->call(&old->rh, torture_cb);
		return;
	}
	list_add_tail(&old->pipe, &tt.pipe);
	tt.ops->sync();
	atomic_inc(&tt.grace_periods);
	torture_pipe_age();
	/* END SOLUTION */
	/* STARTER: (void)i; kfree(old); */
}

static int torture_writer_fn(void *arg)
{
	(void)arg;
	/*
	 * TODO 2: n_updates times: allocate an element (magic set, age 0),
	 * publish it with rcu_assign_pointer() in place of the current one,
	 * count the update, and retire the old one (torture_retire()): every
	 * other one through ops->call() when use_call, else onto the pipe,
	 * then ops->sync(), then age the whole pipe (torture_pipe_age()).
	 * Then tell the main task it is done.
	 */
	/* BEGIN SOLUTION */
	for (int i = 0; i < tt.p->n_updates; i++) {
		struct torture_elem *e = kzalloc(sizeof(*e), GFP_KERNEL);
		struct torture_elem *old = tt.cur;

		e->magic = TORTURE_MAGIC;
		rcu_assign_pointer(tt.cur, e);
		tt.res->updates++;
		if (old)
			torture_retire(old, i);
	}
	complete(&tt.writer_done);
	/* END SOLUTION */
	torture_kthread_stopping();
	return 0;
}

static int torture_fakewriter_fn(void *arg)
{
	(void)arg;
	/* TODO 4: until fullstop: ops->sync(), count the grace period. */
	/* BEGIN SOLUTION */
	while (!READ_ONCE(tt.fullstop) && !kthread_should_stop()) {
		tt.ops->sync();
		atomic_inc(&tt.grace_periods);
		cond_resched();
	}
	/* END SOLUTION */
	torture_kthread_stopping();
	return 0;
}

static void torture_barrier_cb(struct rcu_head *rh)
{
	kfree(rh);
	atomic_inc(&tt.barrier_cbs_done);
	atomic_dec(&tt.in_flight);
}

static int torture_barrier_fn(void *arg)
{
	int cpu;
	int expected = 0;

	(void)arg;
	(void)cpu;
	/*
	 * TODO 5: n_barrier_rounds times: queue one callback on every CPU
	 * (migrate_to_cpu() there, ops->call()), then ops->cb_barrier() from
	 * each CPU in turn (round r from CPU r % nr_cpu_ids); every
	 * callback queued so far must have run when it returns, else count a
	 * barrier error. Count the round; when done, tell the main task.
	 */
	/* BEGIN SOLUTION */
	for (int r = 0; r < tt.p->n_barrier_rounds; r++) {
		for_each_online_cpu(cpu) {
			struct rcu_head *rh = kzalloc(sizeof(*rh), GFP_KERNEL);

			migrate_to_cpu(cpu);
			atomic_inc(&tt.in_flight);
			tt.ops->call(rh, torture_barrier_cb);
			expected++;
		}
		migrate_to_cpu(r % nr_cpu_ids); /* the barrier from each CPU in turn */
		tt.ops->cb_barrier();
		if (atomic_read(&tt.barrier_cbs_done) < expected)
			tt.res->barrier_errors++;
		tt.res->barrier_rounds++;
	}
	complete(&tt.barrier_done);
	/* END SOLUTION */
	/* STARTER: (void)expected; */
	torture_kthread_stopping();
	return 0;
}

/* After the run: each reader's counts into the result. */
static void torture_collect(int cpu)
{
	struct torture_reader *r = &tt.readers[cpu];

	tt.res->reads += r->reads;
	tt.res->age_errors += r->age_errors;
	tt.res->free_errors += r->free_errors;
	for (int i = 0; i <= TORTURE_PIPE_LEN; i++)
		tt.res->pipe[i] += r->pipe[i];
}

/* No reader runs any more: what is left on the pipe and the current element go. */
static void torture_free_leftovers(void)
{
	struct torture_elem *e, *n;

	list_for_each_entry_safe(e, n, &tt.pipe, pipe) {
		list_del(&e->pipe);
		kfree(e);
	}
	kfree(tt.cur);
	tt.cur = NULL;
}

int rcu_torture_run(const struct rcu_torture_ops *ops, const struct torture_params *p,
		    struct torture_result *res)
{
	struct task_struct *writer, *barrier_task, *fake[TORTURE_MAX_FAKEWRITERS];
	int nfake = p->n_fakewriters < TORTURE_MAX_FAKEWRITERS ? p->n_fakewriters
							       : TORTURE_MAX_FAKEWRITERS;
	int cpu;

	tt.ops = ops;
	tt.p = p;
	tt.res = res;
	tt.cur = NULL;
	tt.fullstop = 0;
	INIT_LIST_HEAD(&tt.pipe);
	init_completion(&tt.writer_done);
	init_completion(&tt.barrier_done);
	atomic_set(&tt.in_flight, 0);
	atomic_set(&tt.callbacks, 0);
	atomic_set(&tt.grace_periods, 0);
	atomic_set(&tt.barrier_cbs_done, 0);
	(void)writer;
	(void)barrier_task;
	(void)fake;
	(void)nfake;
	(void)cpu;
	/*
	 * TODO 6: mark the run as run (res->ran); start the writer on CPU 0,
	 * a reader on every other CPU, the fake writers (on those other CPUs
	 * too: here a task keeps its CPU until it sleeps, so a fake writer on
	 * the writer's CPU never calls ops->sync() while the writer's is
	 * running) and the barrier checker; wait for the writer and the
	 * barrier checker to finish.
	 * Then the article's cleanup: set fullstop, kthread_stop() every task
	 * (writer, readers, fake writers, barrier checker), then wait with
	 * ops->cb_barrier() until no torture callback is queued or running,
	 * as lab 3's exit does: after that, one still in flight is a barrier
	 * error. Free what is left, collect the readers'
	 * counts and report success only with no error.
	 */
	/* BEGIN SOLUTION */
	res->ran = true;
	writer = kthread_run_on_cpu(torture_writer_fn, NULL, 0, "rcu_torture_writer");
	for (cpu = 1; cpu < nr_cpu_ids; cpu++) {
		tt.readers[cpu] = (struct torture_reader){ 0 };
		tt.readers[cpu].task = kthread_run_on_cpu(torture_reader_fn, &tt.readers[cpu], cpu,
							  "rcu_torture_reader/%u");
	}
	for (int i = 0; i < nfake; i++)
		fake[i] = kthread_run_on_cpu(torture_fakewriter_fn, NULL, 1 + i % (nr_cpu_ids - 1),
					     "rcu_torture_fakewriter/%u");
	barrier_task = kthread_run_on_cpu(torture_barrier_fn, NULL, 0, "rcu_torture_barrier");
	wait_for_completion(&tt.writer_done);
	wait_for_completion(&tt.barrier_done);

	/* The article's rcu_torture_cleanup(), in its order. */
	WRITE_ONCE(tt.fullstop, 1);
	kthread_stop(writer);
	for (cpu = 1; cpu < nr_cpu_ids; cpu++)
		kthread_stop(tt.readers[cpu].task);
	for (int i = 0; i < nfake; i++)
		kthread_stop(fake[i]);
	kthread_stop(barrier_task);
	ops->cb_barrier();
	/* A callback that was running when fullstop was set may have re-queued
	 * its element behind that barrier (lab 3's Quick Quiz 3.10): wait for
	 * that last one too. Every later callback saw fullstop. */
	ops->cb_barrier();
	if (atomic_read(&tt.in_flight))
		res->barrier_errors++;
	torture_free_leftovers();
	for (cpu = 1; cpu < nr_cpu_ids; cpu++)
		torture_collect(cpu);
	res->grace_periods = atomic_read(&tt.grace_periods);
	res->callbacks = atomic_read(&tt.callbacks);
	res->success = torture_errors(res) == 0;
	/* END SOLUTION */
	/* STARTER: (void)ops; (void)torture_writer_fn; (void)torture_reader_fn; */
	/* STARTER: (void)torture_fakewriter_fn; (void)torture_barrier_fn; */
	/* STARTER: (void)torture_collect; (void)torture_free_leftovers; */
	/* STARTER: (void)torture_barrier_cb; (void)torture_retire; (void)torture_cb; */
	/* STARTER: (void)torture_pipe_age; (void)torture_linger; (void)torture_reader_check; */
	return 0;
}
