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
 * anything in real time: do not use it to wait for another task.
 */
void msleep(unsigned int ms);
/**
 * schedule_timeout() - sleep until @p timeout jiffies have passed or
 * wake_up_process() is called. @return the jiffies left (0 on timeout).
 */
long schedule_timeout(long timeout);
/** @} */
#endif
