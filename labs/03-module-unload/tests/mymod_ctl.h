/*
 * mymod_ctl.h - what the lab 3 tests and their modules share.
 *
 * Rule kept here: everything a test needs to know about a module after it is
 * gone lives outside the module: its parameters here, defined by the tests
 * (tests/lab3_driver.c) and reached by the module through the executable's
 * exported symbols (test binaries are linked with -rdynamic); what it did, in
 * the kernel's module_counts(). The module keeps no test counters, and its
 * own data is unmapped by rmmod() like its code. Lab 4 includes this header
 * too: keep the layout. The two helpers at the end start what the test
 * asked for; they are inline, so their code is the module's own.
 */
#ifndef MYMOD_CTL_H
#define MYMOD_CTL_H

#include <stdbool.h>
#include <linux/atomic.h>
#include <linux/kthread.h>
#include <linux/timer.h>

/** How naivemod's exit function ends (the wrong exits the article warns about). */
enum naive_exit {
	NAIVE_EXIT_NOTHING,           /* stop everything, wait for nothing */
	NAIVE_EXIT_ONE_SYNC,          /* ... then one synchronize_rcu() */
	NAIVE_EXIT_THREE_SYNCS,       /* ... then three back-to-back */
	NAIVE_EXIT_BARRIER_BEFORE_TIMER,   /* rcu_barrier() before del_timer_sync() */
	NAIVE_EXIT_BARRIER_BEFORE_KTHREAD, /* rcu_barrier() before kthread_stop() */
	NAIVE_EXIT_NO_FULLSTOP,       /* everything right except fullstop */
	NAIVE_EXIT_CORRECT,           /* the article's order */
};

/** Parameters, set by the test before insmod(). */
struct mymod_ctl {
	/* parameters */
	bool writer;            /* start the writer kthread (one callback per jiffy) */
	int writer_cpu;         /* the CPU it runs on */
	bool timer;             /* arm the timer (one callback per jiffy, in IRQ context) */
	int reposters;          /* self-reposting callbacks started by module_init */
	enum naive_exit naive_exit; /* naivemod only: how its exit ends */
};

/** Defined by the tests; the modules use it through the executable. */
extern struct mymod_ctl mymod_ctl;

/** Arm the module's @timer to fire in one jiffy, if the test asked for the timer. */
static inline void mymod_ctl_arm_timer(struct timer_list *timer)
{
	if (mymod_ctl.timer)
		mod_timer(timer, jiffies + 1);
}

/**
 * Start the module's writer kthread @fn, named @name, on the CPU the test
 * chose, if it asked for a writer. @return the task, or NULL if none.
 */
static inline struct task_struct *mymod_ctl_start_writer(int (*fn)(void *), const char *name)
{
	if (!mymod_ctl.writer)
		return NULL;
	return kthread_run_on_cpu(fn, NULL, mymod_ctl.writer_cpu, name);
}

#endif
