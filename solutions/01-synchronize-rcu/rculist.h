/*
 * rculist.h - publishing pointers and RCU-safe list operations (lab 1).
 *
 * Rule kept here: a writer makes an element fully initialised before one
 * release store publishes it, and a deleted element keeps its ->next so a
 * reader standing on it can walk on; readers only ever follow ->next.
 */
#ifndef RCULIST_H
#define RCULIST_H

#include <linux/list.h>
#include <linux/rcupdate.h>

/*
 * rcu_assign_pointer() - publish @v in @p: every store made before it is
 * visible to a reader that sees @v.
 */
/* TODO 4: a release store. */
/* BEGIN SOLUTION */
#define rcu_assign_pointer(p, v) smp_store_release(&(p), (v))
/* END SOLUTION */
/* STARTER: #define rcu_assign_pointer(p, v) ((p) = (v)) */

/* rcu_dereference() - load an RCU-protected pointer for reading. */
/* TODO 5: a load that is ordered before the loads through its result. */
/* BEGIN SOLUTION */
#define rcu_dereference(p) smp_load_acquire(&(p))
/* END SOLUTION */
/* STARTER: #define rcu_dereference(p) (p) */

/* The ->next pointer of @list, as an lvalue for rcu_assign_pointer(). */
#define list_next_rcu(list) (*((struct list_head **)(&(list)->next)))

static inline void __list_add_rcu(struct list_head *new, struct list_head *prev,
				  struct list_head *next)
{
	/* TODO 6: fill in @new, then publish it from @prev. */
	/* BEGIN SOLUTION */
	new->next = next;
	new->prev = prev;
	rcu_assign_pointer(list_next_rcu(prev), new);
	next->prev = new;
	/* END SOLUTION */
	/* STARTER: (void)new; (void)prev; (void)next; */
}

/* list_add_rcu() - insert @new after @head; readers may be walking the list. */
static inline void list_add_rcu(struct list_head *new, struct list_head *head)
{
	__list_add_rcu(new, head, head->next);
}

/* list_add_tail_rcu() - insert @new before @head, at the tail. */
static inline void list_add_tail_rcu(struct list_head *new, struct list_head *head)
{
	__list_add_rcu(new, head->prev, head);
}

/*
 * list_del_rcu() - unlink @entry while readers may stand on it. Its memory
 * may be freed only after a grace period.
 */
static inline void list_del_rcu(struct list_head *entry)
{
	/* TODO 7: unlink; keep ->next for readers, poison ->prev. */
	/* BEGIN SOLUTION */
	__list_del(entry->prev, entry->next);
	entry->prev = LIST_POISON2;
	/* END SOLUTION */
	/* STARTER: (void)entry; */
}

/* list_for_each_entry_rcu() - walk @head inside rcu_read_lock(). */
/* TODO 8: like list_for_each_entry(), loading each ->next with rcu_dereference(). */
/* BEGIN SOLUTION */
#define list_for_each_entry_rcu(pos, head, member)                                             \
	for (pos = list_entry(rcu_dereference(list_next_rcu(head)), __typeof__(*pos), member); \
	     &pos->member != (head);                                                           \
	     pos = list_entry(rcu_dereference(list_next_rcu(&pos->member)), __typeof__(*pos),  \
			      member))
/* END SOLUTION */
/* STARTER: #define list_for_each_entry_rcu(pos, head, member) for (pos = NULL; pos;) */

#endif
