/**
 * @file trace.h
 * @brief The kernel's event trace and its timelines.
 *
 * Rule kept here: the trace records what happened in logical time (the
 * order of events, never wall-clock time), names rather than addresses, and
 * nothing that varies between runs of the same seed: in deterministic mode
 * the same seed gives the same trace, byte for byte. Memory is bounded: each
 * CPU keeps its last ::TRACE_RING_SIZE events.
 * @ingroup tracing
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stdio.h>

/** @addtogroup tracing
 * @{ */

/** Events kept per CPU (older ones are overwritten). */
#define TRACE_RING_SIZE 4096

/** What a trace event records. */
enum trace_type {
	TR_SWITCH,        /**< a task takes the CPU (name: task) */
	TR_IDLE,          /**< the CPU goes idle */
	TR_READ_LOCK,     /**< rcu_read_lock() (outermost) */
	TR_READ_UNLOCK,   /**< rcu_read_unlock() (outermost) */
	TR_GP_START,      /**< a grace period starts (arg: its number) */
	TR_GP_END,        /**< a grace period ends (arg: its number) */
	TR_CB_QUEUE,      /**< call_rcu() queued a callback (name: function) */
	TR_CB_INVOKE,     /**< a callback is invoked (name: function) */
	TR_IRQ_ENTER,     /**< interrupt handler starts (name: interrupt) */
	TR_IRQ_EXIT,      /**< interrupt handler ends */
	TR_IPI_SEND,      /**< cross-call sent (arg: target CPU) */
	TR_MODULE_LOAD,   /**< insmod() (name: module) */
	TR_MODULE_UNLOAD, /**< rmmod() unmapped the module (name: module) */
	TR_BUG,           /**< a BUG (name: headline) */
	TR_WARN,          /**< a warning */
	TR_MARK,          /**< a test's own mark (trace_mark()) */
	TR_HOLD,          /**< a task stopped at a held point (name: point) */
	TR_SRCU_LOCK,     /**< a test's srcu_read_lock() returned (name: domain, arg: index) */
	TR_SRCU_UNLOCK,   /**< a test's srcu_read_unlock() (name: domain, arg: index) */
	TR_SRCU_GP_START, /**< a test calls synchronize_srcu() (name: domain) */
	TR_SRCU_GP_END,   /**< that synchronize_srcu() returned (name: domain) */
	TR_NR_TYPES
};

/**
 * trace_event() - record an event on the current CPU (or the off-CPU lane).
 * @param type what happened.
 * @param name a short label; copied (up to 31 characters: a longer one is
 *             cut and ends in "...").
 * @param arg  a number to go with it (a grace-period number, a CPU).
 * Safe from any context; a no-op when tracing is off.
 */
void trace_event(enum trace_type type, const char *name, long arg);

/**
 * trace_mark() - a labelled mark of the test's own, drawn on the timeline.
 * The label is kept as trace_event() keeps a name: 31 characters at most.
 */
__attribute__((format(printf, 1, 2))) void trace_mark(const char *fmt, ...);

/**
 * trace_start_here() - the timeline drawn for a failure begins here: the
 * events traced so far are forgotten (trace_count() still counts them). For
 * a test that plays one scenario many times in one boot, stopping a task at
 * each of its accesses in turn: the picture shows the round that failed,
 * not every round before it squeezed into one width. A task's box or a
 * reader's bar that began earlier is drawn from the left edge, as after a
 * ring that wrapped; it does not promise anything about what began before.
 */
void trace_start_here(void);

/** trace_rcu_gp() - an RCU implementation reports a grace period's start (start=1) or end (start=0). */
void trace_rcu_gp(int start, unsigned long gp_seq);
struct rcu_head;
/**
 * trace_rcu_callback_queued() - an RCU implementation reports that call_rcu()
 * queued @p head; the trace names the callback @p head->func, as it names the
 * invocation (rcu_invoke_callback()). Call it while @p head is still yours:
 * once queued, another CPU may invoke and free it. Does not check or change
 * @p head, and records nothing when tracing is off.
 */
void trace_rcu_callback_queued(struct rcu_head *head);

/** trace_count() - events of @p type recorded since boot (also those overwritten). */
long trace_count(enum trace_type type);

/** trace_write_text() - the trace as one line per event, in logical-time order. @return 0 or -errno. */
int trace_write_text(FILE *f);
/** trace_write_json() - the trace in Chrome's trace-event format (opens in Perfetto). @return 0 or -errno. */
int trace_write_json(const char *path);
/**
 * trace_write_svg() - a self-contained SVG timeline: one lane per CPU with
 * the task holding it, interrupts, read-side sections, grace periods as
 * spans, callbacks as marks. @return 0 or -errno.
 */
int trace_write_svg(const char *path, const char *title);

/** @} */
#endif
