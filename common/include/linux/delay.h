/**
 * @file delay.h
 * @brief Sleeping for a while, in virtual time.
 * @ingroup irq
 */
#ifndef LINUX_DELAY_H
#define LINUX_DELAY_H

/** @addtogroup irq
 * @{ */
/**
 * msleep() - sleep for at least @p ms virtual milliseconds (1 jiffy each).
 *
 * Virtual time advances only when the test advances it
 * (sim_advance_jiffies()) or, when every task is blocked, by jumping to the
 * next timer (see sim_config::auto_time). So msleep() never synchronises with
 * anything in real time: do not use it to wait for another task. A report
 * of a task asleep here names the line that called msleep().
 */
#define msleep(ms) sim_msleep((ms), __FILE__, __LINE__)
/** Simulation only: the implementation behind msleep(); call that. */
void sim_msleep(unsigned int ms, const char *file, int line);
/**
 * schedule_timeout() - sleep until @p timeout jiffies have passed or
 * wake_up_process() is called. @return the jiffies left (0 on timeout).
 * Not a scheduling point before it sleeps: with @p timeout 0 it returns at
 * once, having let nobody else run.
 */
#define schedule_timeout(timeout) sim_schedule_timeout((timeout), __FILE__, __LINE__)
/** Simulation only: the implementation behind schedule_timeout(); call that. */
long sim_schedule_timeout(long timeout, const char *file, int line);
/** @} */
#endif
