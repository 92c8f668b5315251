/*
 * kcsan_student.c - student-like code for the tests of common/src/kcsan.c.
 *
 * Rule kept here: this file is compiled with -fsanitize=thread and listed as
 * student code, like a lab's files; test_kcsan.c calls it and checks what
 * the simulated kernel made of each access. Some functions here are wrong
 * on purpose (each says how).
 */
#include <linux/compiler.h>
#include <linux/spinlock.h>
#include "kcsan_student.h"

/* Wrong on purpose: plain stores publish, no release. */
void ks_publish_plain(struct ks_obj **slot, struct ks_obj *o, long v)
{
	o->val = v;
	*slot = o;
}

/* Right: initialise, then a release store publishes. */
void ks_publish_release(struct ks_obj **slot, struct ks_obj *o, long v)
{
	o->val = v;
	smp_store_release(slot, o);
}

/* Dekker's first half: store my flag, read the other's. */
long ks_store_then_load(long *mine, long *other)
{
	*mine = 1;
	return *other;
}

/* The same with a full barrier between: both cannot read 0. */
long ks_store_mb_load(long *mine, long *other)
{
	*mine = 1;
	smp_mb();
	return *other;
}

/* Store, then read it back: a CPU sees its own buffered store. */
long ks_store_and_reload(long *p, long v)
{
	*p = v;
	return *p;
}

/* Two stores to one address: the later one wins, also after draining. */
void ks_store_twice(long *p, long a, long b)
{
	*p = a;
	*p = b;
}

/* Wrong on purpose for IRQ handlers: a lockless push, interrupts on. */
void ks_push(struct ks_queue *q, struct ks_node *n)
{
	n->next = q->head;
	q->head = n;
	q->len++;
}

/* Right: the same under an IRQ-safe lock. */
void ks_push_irqsafe(struct ks_queue *q, struct ks_node *n)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	n->next = q->head;
	q->head = n;
	q->len++;
	spin_unlock_irqrestore(&q->lock, flags);
}

/* A correct counter: plain accesses, always under the lock. */
void ks_locked_inc(struct ks_counter *c)
{
	spin_lock(&c->lock);
	c->n++;
	spin_unlock(&c->lock);
}

/* Wrong on purpose: the same counter without the lock. */
void ks_racy_inc(struct ks_counter *c)
{
	c->n++;
}

/* Spins reading a flag with plain loads (no cpu_relax()). */
void ks_wait_flag(long *flag)
{
	while (!*flag)
		;
}

/* Wrong on purpose where another CPU writes *p: a plain load. */
long ks_load_plain(long *p)
{
	return *p;
}

/* A marked load: never a data race against a marked store. */
long ks_load_once(long *p)
{
	return READ_ONCE(*p);
}

/* A marked store. */
void ks_store_once(long *p, long v)
{
	WRITE_ONCE(*p, v);
}

/* A plain store of an aligned word (taken as atomic, as KCSAN takes it). */
void ks_store_plain(long *p, long v)
{
	*p = v;
}
