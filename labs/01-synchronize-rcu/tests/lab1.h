/*
 * lab1.h - what lab 1's tests share: the item they put on RCU lists, and
 * the reader and updater kthreads the forced schedules use.
 *
 * Rule kept here: a kthread never asserts (cr_assert belongs to the test's
 * own thread); it records what it saw in its struct, and the test asserts on
 * that afterwards.
 */
#ifndef LAB1_TESTS_H
#define LAB1_TESTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <sim/test.h>
#include "rculist.h"

/** The element every test puts on a list. */
struct item {
	long key;
	long val;
	struct list_head list;
	int age; /* torture: 1 when retired, +1 per grace period after */
	struct list_head retired_node; /* torture: the writer's own list */
};

/*
 * The bytes of an item a reader checks for poison: key and val, which
 * nobody writes after publication (the list pointers and age are written
 * while readers may look, and a plain read of them would be a data race).
 */
#define LAB1_FIELDS offsetof(struct item, list)

/** A list walker met a poisoned ->next (list_del_rcu() wrote LIST_POISON1). */
static inline bool lab1_is_list_poison(const struct list_head *p)
{
	return (uintptr_t)p == (uintptr_t)LIST_POISON1 ||
	       (uintptr_t)p == (uintptr_t)LIST_POISON2 || (uintptr_t)p < 4096;
}

/** A new item with @key, @val = 100 * @key, not on any list. */
static inline struct item *lab1_item(long key)
{
	struct item *it = kzalloc(sizeof(*it), GFP_KERNEL);

	it->key = key;
	it->val = 100 * key;
	return it;
}

/**
 * Free every item of @head without readers (the caller knows none is left):
 * plain list_del() is fine here.
 */
static inline void lab1_free_all(struct list_head *head)
{
	struct item *it, *n;

	list_for_each_entry_safe(it, n, head, list) {
		list_del(&it->list);
		kfree(it);
	}
}

/**
 * lab1_reclaim() - how a test's list ends: once a grace period has passed,
 * no reader can hold an item any more, so kfree() the @n items of @deleted
 * (already list_del_rcu()'d) and every item still on @head. The test's own
 * task may call synchronize_rcu(): it holds no CPU, so it is no reader.
 */
static inline void lab1_reclaim(struct list_head *head, struct item *const deleted[], int n)
{
	synchronize_rcu();
	for (int i = 0; i < n; i++)
		kfree(deleted[i]);
	lab1_free_all(head);
}

/* A reader that enters, stops at a named point inside, and leaves. */
struct held_reader {
	const char *point;
	int inside; /* 1 between rcu_read_lock() and rcu_read_unlock() */
	int done;
};

static inline int lab1_held_reader(void *arg)
{
	struct held_reader *r = arg;

	rcu_read_lock();
	WRITE_ONCE(r->inside, 1);
	sim_point(r->point);
	WRITE_ONCE(r->inside, 0);
	rcu_read_unlock();
	WRITE_ONCE(r->done, 1);
	return 0;
}

/* An updater: synchronize_rcu(), then say so. */
struct updater {
	int started;
	int done;
};

static inline int lab1_updater(void *arg)
{
	struct updater *u = arg;

	WRITE_ONCE(u->started, 1);
	synchronize_rcu();
	WRITE_ONCE(u->done, 1);
	return 0;
}

#endif
