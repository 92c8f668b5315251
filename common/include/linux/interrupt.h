/**
 * @file interrupt.h
 * @brief Simulated interrupts: raising them, taking them, holding them off.
 *
 * Rule kept here: an interrupt runs on its CPU, in the thread of whatever
 * holds that CPU (the idle task when nobody does), never concurrently with
 * that CPU's task, and only where that task reaches a scheduling point with
 * interrupts enabled. Interrupts raised meanwhile wait, in order.
 * @ingroup irq
 */
#ifndef LINUX_INTERRUPT_H
#define LINUX_INTERRUPT_H

#include <stdbool.h>

/** @addtogroup irq
 * @{ */

/** An interrupt handler; it runs in IRQ context and must not sleep. */
typedef void (*irq_handler_t)(void *data);

/**
 * raise_irq() - Simulation only: post an interrupt to @p cpu. The handler runs there in IRQ
 * context at that CPU's next interrupt window, after interrupts raised
 * earlier. Safe from any context, the test's controller included.
 * @param cpu     target CPU.
 * @param handler function to run.
 * @param data    its argument.
 * @param name    shown in the trace and in bug reports (a string literal).
 */
void raise_irq(int cpu, irq_handler_t handler, void *data, const char *name);

/** in_irq() - true inside a hardware interrupt handler (cross-calls, timers included). */
bool in_irq(void);
/** in_interrupt() - true in any interrupt context: where sleeping is a BUG. */
bool in_interrupt(void);
/** irqs_disabled() - true while this CPU holds interrupts off. */
bool irqs_disabled(void);

/** local_irq_disable() - hold off interrupts on this CPU. Not nestable. */
void local_irq_disable(void);
/** local_irq_enable() - take interrupts again; those pending run now. */
void local_irq_enable(void);
/** Simulation only: the implementation behind local_irq_save(); call that. */
unsigned long sim_local_irq_save(void);
/** local_irq_save() - disable interrupts, remembering in @p flags whether they were on. */
#define local_irq_save(flags) ((flags) = sim_local_irq_save())
/** local_irq_restore() - put back the state saved in @p flags (nestable). */
void local_irq_restore(unsigned long flags);

/** @} */
#endif
