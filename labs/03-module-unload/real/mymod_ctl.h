/*
 * mymod_ctl.h - lab 3's test controls, for mymod built as a real module.
 *
 * Rule kept here: the same fields and helpers as tests/mymod_ctl.h, so the
 * student's mymod.c builds unchanged; in the simulation a test sets them, on
 * a real kernel they are module parameters (mymod_ctl.c), set by insmod in
 * real/scenario.sh.
 */
#ifndef MYMOD_CTL_H
#define MYMOD_CTL_H

#include <linux/kthread.h>
#include <linux/timer.h>

/* How naivemod's exit function ends: as in tests/mymod_ctl.h. */
enum naive_exit {
	NAIVE_EXIT_NOTHING,
	NAIVE_EXIT_ONE_SYNC,
	NAIVE_EXIT_THREE_SYNCS,
	NAIVE_EXIT_BARRIER_BEFORE_TIMER,
	NAIVE_EXIT_BARRIER_BEFORE_KTHREAD,
	NAIVE_EXIT_NO_FULLSTOP,
	NAIVE_EXIT_CORRECT,
};

struct mymod_ctl {
	bool writer;
	int writer_cpu;
	bool timer;
	int reposters;
	int naive_exit;
};

extern struct mymod_ctl mymod_ctl;

static inline void mymod_ctl_arm_timer(struct timer_list *timer)
{
	if (mymod_ctl.timer)
		mod_timer(timer, jiffies + 1);
}

static inline struct task_struct *mymod_ctl_start_writer(int (*fn)(void *), const char *name)
{
	if (!mymod_ctl.writer)
		return NULL;
	return kthread_run_on_cpu(fn, NULL, mymod_ctl.writer_cpu, name);
}

#endif
