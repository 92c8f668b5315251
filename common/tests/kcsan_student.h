/*
 * kcsan_student.h - the student-like functions test_kcsan.c calls.
 *
 * Rule kept here: declarations only; kcsan_student.c is the code under test.
 */
#ifndef KCSAN_STUDENT_H
#define KCSAN_STUDENT_H

#include <linux/spinlock.h>

struct ks_obj {
	long val;
};

struct ks_node {
	struct ks_node *next;
};

struct ks_queue {
	spinlock_t lock;
	struct ks_node *head;
	long len;
};

struct ks_counter {
	spinlock_t lock;
	long n;
};

void ks_publish_plain(struct ks_obj **slot, struct ks_obj *o, long v);
void ks_publish_release(struct ks_obj **slot, struct ks_obj *o, long v);
long ks_store_then_load(long *mine, long *other);
long ks_store_mb_load(long *mine, long *other);
long ks_store_and_reload(long *p, long v);
void ks_store_twice(long *p, long a, long b);
void ks_push(struct ks_queue *q, struct ks_node *n);
void ks_push_irqsafe(struct ks_queue *q, struct ks_node *n);
void ks_locked_inc(struct ks_counter *c);
void ks_racy_inc(struct ks_counter *c);
void ks_wait_flag(long *flag);
long ks_load_plain(long *p);
long ks_load_once(long *p);
void ks_store_once(long *p, long v);
void ks_store_plain(long *p, long v);

#endif
