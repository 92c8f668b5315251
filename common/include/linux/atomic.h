/**
 * @file atomic.h
 * @brief atomic_t: an int that CPUs update without locks.
 *
 * Rule kept here: every operation is one C11 atomic operation and a
 * scheduling point, so the deterministic scheduler can interleave two CPUs
 * between any two of them (that is how a "decrement, then test" race shows).
 * Value-returning operations are fully ordered, as in the kernel; the others
 * (atomic_inc(), atomic_dec(), atomic_set(), atomic_read()) order nothing.
 * @ingroup sync
 */
#ifndef LINUX_ATOMIC_H
#define LINUX_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <linux/compiler.h>

/** @addtogroup sync
 * @{ */

/** An atomic counter. Initialise with ATOMIC_INIT() or atomic_set(). */
typedef struct {
	_Atomic int counter; /**< the value; use the accessors */
} atomic_t;

/** Static initialiser: `atomic_t n = ATOMIC_INIT(0);` */
#define ATOMIC_INIT(i) { (i) }

/** Simulation only: a scheduling point for the deterministic scheduler (see sim.h), behind the atomic_*() macros; Linux has none. */
void sim_sched_point(const char *file, int line);
/** Scheduling point at the caller's location. */
#define SIM_POINT_HERE() sim_sched_point(__FILE__, __LINE__)

/** Read the value (relaxed: orders nothing). */
#define atomic_read(v) (SIM_POINT_HERE(), atomic_load_explicit(&(v)->counter, memory_order_relaxed))
/** Set the value (relaxed: orders nothing). */
#define atomic_set(v, i) (SIM_POINT_HERE(), atomic_store_explicit(&(v)->counter, (i), memory_order_relaxed))
/** Add @p i (relaxed). */
#define atomic_add(i, v) ((void)(SIM_POINT_HERE(), atomic_fetch_add_explicit(&(v)->counter, (i), memory_order_relaxed)))
/** Subtract @p i (relaxed). */
#define atomic_sub(i, v) ((void)(SIM_POINT_HERE(), atomic_fetch_sub_explicit(&(v)->counter, (i), memory_order_relaxed)))
/** Add one (relaxed). */
#define atomic_inc(v) atomic_add(1, v)
/** Subtract one (relaxed). */
#define atomic_dec(v) atomic_sub(1, v)
/** Add @p i and return the new value (fully ordered). */
#define atomic_add_return(i, v) (SIM_POINT_HERE(), atomic_fetch_add(&(v)->counter, (i)) + (i))
/** Subtract @p i and return the new value (fully ordered). */
#define atomic_sub_return(i, v) (SIM_POINT_HERE(), atomic_fetch_sub(&(v)->counter, (i)) - (i))
/** Add one and return the new value (fully ordered). */
#define atomic_inc_return(v) atomic_add_return(1, v)
/** Subtract one and return the new value (fully ordered). */
#define atomic_dec_return(v) atomic_sub_return(1, v)
/**
 * atomic_dec_and_test() - subtract one; true if the result is zero.
 *
 * One indivisible step: of several CPUs decrementing to zero, exactly one
 * sees true. A separate atomic_dec() then atomic_read() == 0 does not promise
 * that: two CPUs can both read zero.
 */
#define atomic_dec_and_test(v) (atomic_sub_return(1, v) == 0)
/** Subtract @p i; true if the result is zero (fully ordered). */
#define atomic_sub_and_test(i, v) (atomic_sub_return(i, v) == 0)
/** Swap in @p n and return the old value (fully ordered). */
#define atomic_xchg(v, n) (SIM_POINT_HERE(), atomic_exchange(&(v)->counter, (n)))

/**
 * atomic_cmpxchg() - if the value is @p o, make it @p n.
 * @return the value found (equal to @p o when the swap happened).
 */
static inline int atomic_cmpxchg(atomic_t *v, int o, int n)
{
	SIM_POINT_HERE();
	atomic_compare_exchange_strong(&v->counter, &o, n);
	return o;
}

/** @} */
#endif
