/**
 * @file list.h
 * @brief The kernel's circular doubly-linked list, without RCU.
 *
 * Rule kept here: these operations assume the caller excludes every other
 * writer *and reader*. The RCU variants (lab 1's rculist.h) are the ones that
 * tolerate concurrent readers.
 * @ingroup sync
 */
#ifndef LINUX_LIST_H
#define LINUX_LIST_H

#include <linux/compiler.h>
#include <linux/types.h>

/** @addtogroup sync
 * @{ */

/** Written into ->next of a deleted entry: any use faults. */
#define LIST_POISON1 ((struct list_head *)0x100)
/** Written into ->prev of a deleted entry: any use faults. */
#define LIST_POISON2 ((struct list_head *)0x122)

/** Initialiser for a list head named @p name. */
#define LIST_HEAD_INIT(name) { &(name), &(name) }
/** Define and initialise an empty list head. */
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

/** Make @p list an empty list (it points to itself both ways). */
static inline void INIT_LIST_HEAD(struct list_head *list)
{
	WRITE_ONCE(list->next, list);
	list->prev = list;
}

/**
 * __list_add() - link @p new between the adjacent entries @p prev and
 * @p next. The internal step of list_add() and list_add_tail(); the store
 * into `prev->next` comes last, but it is only WRITE_ONCE(): it publishes
 * nothing to concurrent readers (that is lab 1's __list_add_rcu()).
 */
static inline void __list_add(struct list_head *new, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = new;
	new->next = next;
	new->prev = prev;
	WRITE_ONCE(prev->next, new);
}

/** Insert @p new just after @p head (a stack push). */
static inline void list_add(struct list_head *new, struct list_head *head)
{
	__list_add(new, head, head->next);
}

/** Insert @p new just before @p head, at the tail (a queue push). */
static inline void list_add_tail(struct list_head *new, struct list_head *head)
{
	__list_add(new, head->prev, head);
}

/**
 * __list_del() - make the entries @p prev and @p next point at each other,
 * unlinking whatever lay between them. The internal step of list_del() and
 * lab 1's list_del_rcu(); it does not touch the unlinked entry.
 */
static inline void __list_del(struct list_head *prev, struct list_head *next)
{
	next->prev = prev;
	WRITE_ONCE(prev->next, next);
}

/**
 * Unlink @p entry and poison both its pointers, so that a walker still
 * standing on it faults. Not safe against concurrent readers: see
 * list_del_rcu() for why.
 */
static inline void list_del(struct list_head *entry)
{
	__list_del(entry->prev, entry->next);
	entry->next = LIST_POISON1;
	entry->prev = LIST_POISON2;
}

/** Unlink @p entry and make it an empty list of its own. */
static inline void list_del_init(struct list_head *entry)
{
	__list_del(entry->prev, entry->next);
	INIT_LIST_HEAD(entry);
}

/** True when @p head has no entries. */
static inline int list_empty(const struct list_head *head)
{
	return READ_ONCE(head->next) == head;
}

/** Move every entry of @p list to the tail of @p head; @p list becomes empty. */
static inline void list_splice_tail_init(struct list_head *list,
					 struct list_head *head)
{
	if (list_empty(list))
		return;
	struct list_head *first = list->next, *last = list->prev;
	struct list_head *at = head->prev;

	first->prev = at;
	at->next = first;
	last->next = head;
	head->prev = last;
	INIT_LIST_HEAD(list);
}

/** The structure of type @p type that embeds @p ptr as @p member. */
#define list_entry(ptr, type, member) container_of(ptr, type, member)
/** The first entry of a non-empty list. */
#define list_first_entry(head, type, member) \
	list_entry((head)->next, type, member)

/** Walk @p head; @p pos is a struct list_head pointer. */
#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

/** Walk the entries of @p head; @p pos points to the containing type. */
#define list_for_each_entry(pos, head, member)                          \
	for (pos = list_entry((head)->next, __typeof__(*pos), member);  \
	     &pos->member != (head);                                    \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))

/** Like list_for_each_entry(), but @p pos may be deleted inside the loop. */
#define list_for_each_entry_safe(pos, n, head, member)                   \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),   \
	     n = list_entry(pos->member.next, __typeof__(*pos), member); \
	     &pos->member != (head);                                     \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

/** @} */
#endif
