/**
 * @file compiler.h
 * @brief Compiler and memory-ordering primitives, built on C11 atomics.
 *
 * Rule kept here: every access that another CPU may race with goes through
 * READ_ONCE()/WRITE_ONCE() or an ordering primitive, so that ThreadSanitizer
 * sees a plain racy store in student code as the data race it is.
 * @ingroup sync
 */
#ifndef LINUX_COMPILER_H
#define LINUX_COMPILER_H

#include <stdatomic.h>
#include <stddef.h>

/** @addtogroup sync
 * @{ */

/** Branch hints, as in the kernel. */
#define likely(x) __builtin_expect(!!(x), 1)
/** Branch hint: @p x is rarely true. */
#define unlikely(x) __builtin_expect(!!(x), 0)

/**
 * container_of() - the structure that holds a member.
 * @param ptr    pointer to the member.
 * @param type   the type of the containing structure.
 * @param member the name of the member within @p type.
 *
 * The idiom behind every embedded list_head and rcu_head: a callback given
 * `struct rcu_head *` gets back its own object with
 * `container_of(rp, struct foo, rcu)`. It does no checking at all: give it a
 * pointer that is not inside a @p type and you get garbage.
 */
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/** Compiler barrier: the compiler may not move memory accesses across it. */
#define barrier() atomic_signal_fence(memory_order_seq_cst)

/**
 * READ_ONCE() - load @p x exactly once, untorn, as a relaxed atomic.
 *
 * Promises a single load the compiler cannot split, repeat or fuse; it does
 * not order the load against other accesses (use smp_load_acquire() for that).
 */
#define READ_ONCE(x) \
	__atomic_load_n(&(x), __ATOMIC_RELAXED)

/**
 * WRITE_ONCE() - store @p v into @p x exactly once, as a relaxed atomic.
 *
 * Does not order earlier stores before it: a reader on another CPU may see
 * this store before them. Publishing a pointer needs smp_store_release().
 */
#define WRITE_ONCE(x, v) \
	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/** Full memory barrier. Also drains the simulated store buffer (sim_store()). */
#define smp_mb() sim_fence(__ATOMIC_SEQ_CST)
/** Write barrier: earlier stores become visible before later ones. */
#define smp_wmb() sim_fence(__ATOMIC_RELEASE)
/** Read barrier: earlier loads complete before later ones. */
#define smp_rmb() atomic_thread_fence(memory_order_acquire)

/**
 * smp_store_release() - store @p v into @p *p after every earlier access.
 *
 * The publication primitive: a reader that sees the new value with
 * smp_load_acquire() (or an address dependency) also sees every store this
 * CPU made before. Drains this CPU's simulated store buffer first.
 */
#define smp_store_release(p, v)                               \
	do {                                                  \
		sim_fence(__ATOMIC_RELEASE);                  \
		__atomic_store_n((p), (v), __ATOMIC_RELEASE); \
	} while (0)

/** smp_load_acquire() - load @p *p; later accesses cannot move before it. */
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/**
 * sim_fence() - Simulation only: the simulated CPU's memory barrier.
 * @param order an __ATOMIC_* order for the real fence.
 *
 * Makes visible every store this CPU buffered with sim_store(), then issues
 * the real fence. Called by smp_mb(), smp_wmb(), smp_store_release(), lock
 * releases and context switches; rarely called directly.
 */
void sim_fence(int order);

/** @} */
#endif
