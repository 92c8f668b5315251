/**
 * @file slab.h
 * @brief kmalloc() and kfree(), with use-after-free made visible.
 *
 * Rule kept here: freed memory is never handed out again at once. kfree()
 * fills the object with ::POISON_FREE and parks it in a quarantine; only
 * later is it really freed, so a reader that arrives late reads poison
 * (testable with kmem_is_poisoned()) instead of somebody else's data. Every
 * object still live at shutdown is a reported leak.
 * @ingroup memory
 */
#ifndef LINUX_SLAB_H
#define LINUX_SLAB_H

#include <stdbool.h>
#include <stddef.h>

/** @addtogroup memory
 * @{ */

/** Byte written over freed objects (the kernel's slab poison). */
#define POISON_FREE 0x6b
/** Allocation flags, kept for the kernel's signatures; all behave alike. */
typedef unsigned int gfp_t;
/** May sleep. */
#define GFP_KERNEL 0u
/** Must not sleep (IRQ context). */
#define GFP_ATOMIC 1u
/** Zero the object. */
#define __GFP_ZERO 0x100u

/**
 * kmalloc() - allocate @p size bytes. Contents are garbage unless
 * __GFP_ZERO; never NULL (exhaustion is a BUG). Safe from any context.
 */
void *kmalloc(size_t size, gfp_t flags);
/** kzalloc() - kmalloc() zeroed. */
void *kzalloc(size_t size, gfp_t flags);
/**
 * kfree() - free @p p (NULL is fine). Poisons it and quarantines it; freeing
 * twice, or a pointer kmalloc() did not return, is a BUG. Any context.
 */
void kfree(const void *p);

/**
 * kmem_is_poisoned() - Simulation only: true if the @p len bytes at @p p all hold
 * ::POISON_FREE: what a reader finds in an object freed under it. Only
 * meaningful for memory kmalloc() returned.
 */
bool kmem_is_poisoned(const void *p, size_t len);
/** kmem_live_objects() - Simulation only: objects allocated and not yet freed. */
long kmem_live_objects(void);

/** @} */
#endif
