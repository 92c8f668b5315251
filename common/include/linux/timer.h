/**
 * @file timer.h
 * @brief Timers and virtual time (jiffies).
 *
 * Rule kept here: time is virtual. jiffies advance only when the test says
 * so (sim_advance_jiffies(), sim_tick()) or, when every task is blocked and a
 * timer is armed, by jumping to that timer's expiry. A timer function runs on
 * the timer's CPU in IRQ context, after the tick that reaches its expiry.
 * @ingroup irq
 */
#ifndef LINUX_TIMER_H
#define LINUX_TIMER_H

#include <stdbool.h>
#include <linux/types.h>

/** @addtogroup irq
 * @{ */

/** Ticks per virtual second: one jiffy is one virtual millisecond. */
#define HZ 1000

/** Simulation only: the implementation behind jiffies; read that. */
unsigned long sim_jiffies(void);
/** The current virtual time, in ticks since boot (read-only). */
#define jiffies sim_jiffies()

struct timer_list;
/** A timer's function; runs in IRQ context. */
typedef void (*timer_func_t)(struct timer_list *t);

/** A timer. Set it up with timer_setup(), arm it with mod_timer(). */
struct timer_list {
	struct list_head entry;   /**< on the armed list while pending */
	unsigned long expires;    /**< jiffies at which it fires */
	timer_func_t function;    /**< what it runs */
	int cpu;                  /**< CPU it fires on (where it was armed) */
	bool pending;             /**< armed and not yet fired */
	int running;              /**< its function is running now */
};

/**
 * timer_setup() - prepare @p t to run @p fn; it is not armed.
 * @param t     the timer.
 * @param fn    the function it runs when it fires, in IRQ context.
 * @param flags unused (kept for the kernel's signature).
 */
void timer_setup(struct timer_list *t, timer_func_t fn, unsigned int flags);
/**
 * mod_timer() - arm (or re-arm) @p t to fire at @p expires on this CPU.
 * A timer may re-arm itself from its own function. @return 1 if it was pending.
 */
int mod_timer(struct timer_list *t, unsigned long expires);
/** del_timer() - disarm @p t. Its function may still be running elsewhere. @return 1 if it was pending. */
int del_timer(struct timer_list *t);
/**
 * del_timer_sync() - disarm @p t and wait until its function is not running
 * on any CPU. Afterwards it does not run again unless re-armed: for a
 * self-re-arming timer, stop the re-arming first. Must not be called from
 * the timer's own function (BUG).
 * @return 1 if it was pending.
 */
int del_timer_sync(struct timer_list *t);
/** timer_pending() - true while @p t is armed. */
bool timer_pending(const struct timer_list *t);

/** @} */
#endif
