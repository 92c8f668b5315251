/*
 * watch.c - data races found as the kernel's KCSAN finds them: a plain
 * access of student code is watched while it is in progress, and any
 * conflicting access another task makes meanwhile is a data race.
 *
 * Rule kept here: a race is reported only between two accesses that really
 * overlapped in the simulated schedule (one was in progress, switched out at
 * its own scheduling point, when the other came), at least one of them a
 * write and at least one of them plain. Nothing here changes what memory
 * holds or which task runs; it only watches and reports.
 *
 * KCSAN sets a watchpoint on a sampled plain access and delays it a little;
 * another CPU that touches the same bytes meanwhile finds the watchpoint.
 * Here every plain access of student code is a scheduling point already
 * (kcsan.c), so the delay is free: the watch lasts exactly as long as the
 * task is switched out (or held by the test) at that access. Which accesses
 * overlap is decided by the seed, as every other choice of the schedule.
 *
 * What is watched follows KCSAN's defaults: plain reads, and plain writes
 * that are not aligned words (CONFIG_KCSAN_ASSUME_PLAIN_WRITES_ATOMIC=y
 * takes an aligned write of up to 8 bytes as atomic). So a plain read
 * against WRITE_ONCE() or rcu_assign_pointer() is a race; a READ_ONCE()
 * against a plain aligned write is not; two marked accesses never are.
 * Volatile accesses count as marked, as in the kernel.
 *
 * Not promised: races with accesses that are not student code (the tests'
 * own code, common/) are not seen, nor races in parallel mode, where no
 * access is ever in progress at a known instant.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct watchpoint {
	struct task_struct *task;   /* NULL: the slot is free */
	int cpu;
	const void *p;
	size_t size;
	int type;                   /* WATCH_* */
	uintptr_t pc;
};

#define MAX_WATCHPOINTS 64

/* Deterministic mode: only the token holder touches these. */
static struct watchpoint watchpoints[MAX_WATCHPOINTS];
static int nr_watched;

void watch_boot(void)
{
	memset(watchpoints, 0, sizeof(watchpoints));
	nr_watched = 0;
}

static bool is_aligned_word(const void *p, size_t size)
{
	return (size == 1 || size == 2 || size == 4 || size == 8) &&
	       ((uintptr_t)p & (size - 1)) == 0;
}

/* Does KCSAN set a watchpoint on this access? */
static bool watched(const void *p, size_t size, int type)
{
	if (type & WATCH_MARKED)
		return false;
	return !(type & WATCH_WRITE) || !is_aligned_word(p, size);
}

static bool overlaps(const void *a, size_t an, const void *b, size_t bn)
{
	const char *x = a, *y = b;

	return x < y + bn && y < x + an;
}

static const char *kind(int type)
{
	if (type & WATCH_WRITE)
		return (type & WATCH_MARKED) ? "write (marked)" : "write";
	return (type & WATCH_MARKED) ? "read (marked)" : "read";
}

/*
 * Report in KCSAN's own layout: the access that began first, with @note on
 * how it is still in progress, then the one that met it. The BUG that
 * follows adds the seed, the tasks and the timeline (where @a's lane is
 * marked too), and is placed at @a when @at_first (a watched access is plain,
 * the other may be marked), else at @b.
 */
void watch_report(const struct race_access *a, const char *note,
		  const struct race_access *b, bool at_first)
{
	char fa[256], wa[PATH_MAX], fb[256], wb[PATH_MAX];
	char *where, *colon;
	int line;

	kcsan_split_pc(a->pc, fa, sizeof(fa), wa, sizeof(wa));
	kcsan_split_pc(b->pc, fb, sizeof(fb), wb, sizeof(wb));
	fflush(stdout);
	fprintf(stderr, "\n==================================================================\n"
		"BUG: KCSAN: data-race in %s / %s\n\n"
		"%s to %p of %zu bytes by task %s (pid %d) on cpu %d:\n %s\n %s\n"
		"  (%s)\n\n"
		"%s to %p of %zu bytes by task %s (pid %d) on cpu %d:\n %s\n %s\n\n"
		"A plain access of memory that another CPU writes at the same time may be\n"
		"torn, fused or repeated by the compiler and is unordered: make the read a\n"
		"marked one (READ_ONCE(), rcu_dereference(), smp_load_acquire()) or hold\n"
		"the lock that the writer holds.\n"
		"==================================================================\n",
		fa, fb, kind(a->type), a->p, a->size, task_comm(a->task), task_pid(a->task),
		a->cpu, fa, wa, note, kind(b->type), b->p, b->size, task_comm(b->task),
		task_pid(b->task), b->cpu, fb, wb);
	where = at_first ? wa : wb;
	colon = strrchr(where, ':');
	line = colon ? atoi(colon + 1) : 0;
	if (colon)
		*colon = 0;
	SIM_LOCK();
	trace_emit(a->cpu, a->task, TR_MARK,
		   (a->type & WATCH_WRITE) ? "racing plain write" : "racing plain read", 0);
	sim_bug_locked(strdup(where), line, "KCSAN: data-race in %s / %s", fa, fb);
}

static __attribute__((noreturn)) void report(const struct watchpoint *w,
					     struct task_struct *t, uintptr_t pc,
					     const void *p, size_t size, int type)
{
	struct race_access a = { w->task, w->cpu, w->p, w->size, w->type, w->pc };
	struct race_access b = { t, t->cpu, p, size, type, pc };

	watch_report(&a, "in progress: the task was switched out at this access", &b, true);
	abort();   /* sim_bug_locked() does not return */
}

void watch_check(struct task_struct *t, uintptr_t pc, const void *p, size_t size, int type)
{
	for (int i = 0, seen = 0; seen < nr_watched && i < MAX_WATCHPOINTS; i++) {
		const struct watchpoint *w = &watchpoints[i];

		if (!w->task)
			continue;
		seen++;
		if (w->task == t || !overlaps(w->p, w->size, p, size))
			continue;
		if ((w->type | type) & WATCH_WRITE)
			report(w, t, pc, p, size, type);
	}
}

int watch_begin(struct task_struct *t, uintptr_t pc, const void *p, size_t size, int type)
{
	if (!watched(p, size, type))
		return -1;
	for (int i = 0; i < MAX_WATCHPOINTS; i++) {
		struct watchpoint *w = &watchpoints[i];

		if (w->task)
			continue;
		*w = (struct watchpoint){ .task = t, .cpu = t->cpu, .p = p, .size = size,
					  .type = type, .pc = pc };
		nr_watched++;
		return i;
	}
	return -1;  /* more tasks in accesses than slots: this one goes unwatched */
}

void watch_end(int slot)
{
	if (slot < 0)
		return;
	watchpoints[slot].task = NULL;
	nr_watched--;
}
