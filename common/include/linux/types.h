/**
 * @file types.h
 * @brief Basic kernel types: list_head and rcu_head.
 * @ingroup sync
 */
#ifndef LINUX_TYPES_H
#define LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** @addtogroup sync
 * @{ */

/** A doubly-linked list node, embedded in the structure it links. */
struct list_head {
	struct list_head *next; /**< next node, or the head */
	struct list_head *prev; /**< previous node, or the head */
};

struct rcu_head;
/** An RCU callback: receives the rcu_head embedded in the object to free. */
typedef void (*rcu_callback_t)(struct rcu_head *head);

/**
 * The handle that call_rcu() queues. Embed it in the object the callback
 * frees, and recover the object with container_of().
 */
struct rcu_head {
	struct rcu_head *next; /**< link in a callback queue */
	rcu_callback_t func;   /**< the function to invoke after a grace period */
};

/** @} */
#endif
