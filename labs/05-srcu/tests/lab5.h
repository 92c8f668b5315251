/*
 * lab5.h - what lab 5's tests share: a domain, sleeping readers and
 * updaters in kthreads of their own. The callbacks that record or block are
 * the workbook's test library (sim/testlib.h), shared with labs 4 and 6.
 *
 * Rule kept here: a test never sleeps; it forces a schedule by holding
 * things (a reader waiting for its release, a student access, a named
 * point), lets the rest run with sim_run_until_idle() and moves virtual
 * time with sim_advance_jiffies() (synchronize_srcu() polls once a jiffy).
 * Kthreads and callbacks only record; the test's own thread asserts.
 */
#ifndef LAB5_H
#define LAB5_H

#include <stdbool.h>
#include <linux/completion.h>
#include <linux/srcu.h>
#include <sim/testlib.h>

/* A reader: srcu_read_lock(), then it sleeps until released, then unlocks. */
struct reader {
	struct srcu_struct *ssp;
	struct srcu_struct *inner;     /* optional: synchronize_srcu(inner) inside */
	struct completion go_inner;    /* with inner: wait for this first */
	struct completion release;
	int idx;
	int inside;                    /* srcu_read_lock() returned */
	int inner_returned;            /* synchronize_srcu(inner) returned */
	int done;                      /* srcu_read_unlock() returned */
	bool no_sleep;                 /* lock, unlock at once (no release needed) */
	bool stand;                    /* inside, stand at READER_INSIDE keeping the CPU
	                                  (no sleep: nothing drains its store buffer) */
	bool write_inside;             /* store to ->data inside, as a weakly-ordered CPU
	                                  buffers it (sim_store()), and leave at once */
	long data;
	int stored;                    /* the store inside was made */
	struct task_struct *task;
};

/* The named point where a reader with ->stand stands inside its section. */
#define READER_INSIDE "srcu-reader-inside"

void reader_start(struct reader *r, struct srcu_struct *ssp, int cpu);
void reader_release(struct reader *r);

/* An updater: one synchronize_srcu() (or srcu_barrier()) in a kthread. */
struct updater {
	struct srcu_struct *ssp;
	bool barrier;
	int returned;
	struct task_struct *task;
};

void updater_start(struct updater *u, struct srcu_struct *ssp, int cpu, bool barrier);
/* kthread_stop() it if it returned (else it would block the test). */
void updater_reap(struct updater *u);

/* From the test's thread: call_srcu() on @cpu. */
void call_srcu_on(int cpu, struct srcu_struct *ssp, struct rcu_head *rh, rcu_callback_t f);

/* Let everything run, time included: @n jiffies, idle after each. */
void settle(int n);

/*
 * cleanup_after_readers() - cleanup_srcu_struct(@ssp), once every reader
 * the test started has left: first assert that @ssp's counts agree (each
 * index's unlocks, summed over the CPUs, equal its locks), so that a
 * reader's miscount is named as such, not met as cleanup_srcu_struct()'s
 * own BUG_ON() (which would blame TODO 6).
 */
void cleanup_after_readers(struct srcu_struct *ssp);

#endif
