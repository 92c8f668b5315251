/**
 * @file spinlock.h
 * @brief Spinlocks: busy-waiting locks for code that must not sleep.
 *
 * Rule kept here: a lock spins only at scheduling points (cpu_relax()), and a
 * CPU that asks for a lock it already holds (typically: an interrupt handler
 * asks for a lock that the task it interrupted holds) is reported at once as
 * a deadlock BUG instead of hanging. Taking a spinlock disables preemption.
 * @ingroup sync
 */
#ifndef LINUX_SPINLOCK_H
#define LINUX_SPINLOCK_H

#include <stdatomic.h>
#include <linux/interrupt.h>

/** @addtogroup sync
 * @{ */

/** A spinlock. Initialise with DEFINE_SPINLOCK() or spin_lock_init(). */
typedef struct {
	_Atomic int locked;    /**< 1 while held */
	_Atomic int owner_cpu; /**< CPU holding it, or -1 */
	const char *name;      /**< for reports */
	const char *file;      /**< where it was last taken */
	int line;              /**< where it was last taken */
} spinlock_t;

/** Static initialiser for a spinlock called @p n. */
#define __SPIN_LOCK_UNLOCKED(n) { 0, -1, #n, NULL, 0 }
/** Define an unlocked spinlock. */
#define DEFINE_SPINLOCK(x) spinlock_t x = __SPIN_LOCK_UNLOCKED(x)

/** Initialise @p l unlocked. */
void spin_lock_init(spinlock_t *l);
/**
 * spin_is_locked() - is @p l held now, by anyone? A snapshot for checks and
 * tests: it promises nothing about the next instant, so it orders nothing
 * and is no way to wait for a lock.
 */
static inline int spin_is_locked(spinlock_t *l)
{
	return atomic_load(&l->locked);
}
/** Simulation only: the implementation behind spin_lock(); call that. */
void sim_spin_lock(spinlock_t *l, const char *file, int line);
/** Simulation only: the implementation behind spin_unlock(); call that. */
void sim_spin_unlock(spinlock_t *l, const char *file, int line);
/** Simulation only: the implementation behind spin_trylock(); call that. */
int sim_spin_trylock(spinlock_t *l, const char *file, int line);

/**
 * spin_lock() - take @p l, spinning until it is free. Disables preemption;
 * leaves interrupts as they are, so an interrupt on this CPU whose handler
 * takes @p l would deadlock: that is reported as a BUG.
 */
#define spin_lock(l) sim_spin_lock((l), __FILE__, __LINE__)
/** spin_unlock() - release @p l (a release barrier) and re-enable preemption. */
#define spin_unlock(l) sim_spin_unlock((l), __FILE__, __LINE__)
/** spin_trylock() - take @p l if it is free. @return 1 if taken. */
#define spin_trylock(l) sim_spin_trylock((l), __FILE__, __LINE__)

/**
 * spin_lock_irqsave() - disable interrupts on this CPU, then take @p l.
 * The form to use when an interrupt handler may take the same lock.
 */
#define spin_lock_irqsave(l, flags)                \
	do {                                       \
		local_irq_save(flags);             \
		sim_spin_lock((l), __FILE__, __LINE__); \
	} while (0)
/** spin_unlock_irqrestore() - release @p l, then restore interrupts. */
#define spin_unlock_irqrestore(l, flags)              \
	do {                                          \
		sim_spin_unlock((l), __FILE__, __LINE__); \
		local_irq_restore(flags);             \
	} while (0)
/** spin_lock_irq() - disable interrupts and take @p l. */
#define spin_lock_irq(l) do { local_irq_disable(); spin_lock(l); } while (0)
/** spin_unlock_irq() - release @p l and enable interrupts. */
#define spin_unlock_irq(l) do { spin_unlock(l); local_irq_enable(); } while (0)

/** @} */
#endif
