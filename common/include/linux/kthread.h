/**
 * @file kthread.h
 * @brief Kernel threads: tasks that run a function on a simulated CPU.
 *
 * Rule kept here: a kthread ends only by returning from its function, and
 * kthread_stop() is the only way to ask it to. Its function must poll
 * kthread_should_stop() in its loop and in the condition of every wait.
 * @ingroup cpus
 */
#ifndef LINUX_KTHREAD_H
#define LINUX_KTHREAD_H

#include <linux/sched.h>

/** @addtogroup cpus
 * @{ */

/**
 * kthread_run_on_cpu() - start a kernel thread bound to @p cpu (Linux's
 * signature).
 * @param threadfn its body; the return value is what kthread_stop() returns.
 * @param data     passed to @p threadfn.
 * @param cpu      the CPU it runs on (it waits there like any task).
 * @param namefmt  its name, formatted with @p cpu as printf's only argument:
 *                 "rcuo/%u" names the thread on CPU 2 "rcuo/2"; a name
 *                 without a conversion is taken as it is.
 * @return the new task. Never fails (running out of memory is a BUG).
 *
 * Does not promise when the thread first runs: only that it runs on @p cpu,
 * never elsewhere, until it returns. Unlike Linux, it never returns an
 * ERR_PTR(): there is nothing to check.
 */
struct task_struct *kthread_run_on_cpu(int (*threadfn)(void *), void *data,
				       unsigned int cpu, const char *namefmt);

/**
 * kthread_run() - start a kernel thread on the next CPU in round-robin order
 * (deterministic, not load-balanced). See kthread_run_on_cpu().
 */
__attribute__((format(printf, 3, 4)))
struct task_struct *kthread_run(int (*fn)(void *), void *data,
				const char *namefmt, ...);

/**
 * kthread_should_stop() - true once kthread_stop() has been called on the
 * current task. Polling it is not a scheduling point.
 */
bool kthread_should_stop(void);

/**
 * kthread_stop() - tell @p k to stop, wake it from any wait, and wait until
 * its function has returned. May sleep. Calling it twice on one task, or
 * on oneself, is a BUG; so is stopping a kthread of student code whose
 * function already returned on its own: Linux frees such a task when it
 * exits, and its kthread_stop() would use freed memory (a kthread that is
 * to be stopped waits for kthread_should_stop() before it returns). The
 * simulation keeps exited tasks, so tests may join a thread this way.
 * @return what @p k's function returned.
 */
int kthread_stop(struct task_struct *k);

/**
 * wake_up_process() - make a task blocked in schedule_timeout() or a
 * wait_event() re-check its condition. Safe from IRQ context.
 */
void wake_up_process(struct task_struct *t);

/** @} */
#endif
