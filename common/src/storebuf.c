/*
 * storebuf.c - the simulated store buffer behind sim_store() and sim_fence().
 *
 * Rule kept here: a buffered store becomes visible to other CPUs only when its
 * CPU drains the buffer (a full fence, a full buffer, or the CPU handing
 * itself on), in the order it was made; plain stores never go through here.
 */
#include <string.h>
#include <linux/compiler.h>
#include "internal.h"

/*
 * The store buffer is touched under S.lock only; sb_pending lets every
 * barrier skip the lock when no test has buffered anything (the usual case).
 */
static _Atomic int sb_pending;

void storebuf_reset(void)
{
	atomic_store(&sb_pending, 0);
}

/*
 * Parallel mode: a buffered store is applied only if its bytes still hold
 * what they held when it was made, so a later store to the same address
 * stays later. (Deterministic mode buffers in kcsan.c instead, where the
 * storing CPU also reads its own store.)
 */
void sb_drain(struct sim_cpu *c)
{
	for (int i = 0; i < c->sb_len; i++)
		if (!memcmp(c->sb[i].p, &c->sb[i].old, c->sb[i].size))
			memcpy(c->sb[i].p, &c->sb[i].v, c->sb[i].size);
	atomic_fetch_sub(&sb_pending, c->sb_len);
	c->sb_len = 0;
}

void sim_store_buffered(void *p, long v, size_t size)
{
	struct task_struct *t = sim_current;

	if (size > sizeof(long))
		sim_bug(__FILE__, __LINE__, "sim_store() of a %zu-byte object", size);
	SIM_LOCK();
	if (!t || t->cpu < 0 || !S.booted) {
		memcpy(p, &v, size);
		SIM_UNLOCK();
		return;
	}
	if (kcsan_store_buffered(p, v, size)) {
		SIM_UNLOCK();
		return;
	}
	struct sim_cpu *c = cpu_of(t->cpu);

	if (c->sb_len == SB_MAX)
		sb_drain(c);
	c->sb[c->sb_len].p = p;
	c->sb[c->sb_len].v = v;
	memcpy(&c->sb[c->sb_len].old, p, size);
	c->sb[c->sb_len].size = size;
	c->sb_len++;
	atomic_fetch_add(&sb_pending, 1);
	SIM_UNLOCK();
}

void sim_fence(int order)
{
	struct task_struct *t = sim_current;

	kcsan_fence_point((uintptr_t)__builtin_return_address(0));
	kcsan_fence();
	if (order == __ATOMIC_SEQ_CST && t)
		views_sync(t->cpu);            /* later loads see everything made visible so far */
	if (t && atomic_load_explicit(&sb_pending, memory_order_relaxed)) {
		SIM_LOCK();
		if (t->cpu >= 0 && S.booted)
			sb_drain(cpu_of(t->cpu));
		SIM_UNLOCK();
	}
	atomic_thread_fence(memory_order_seq_cst);
}
