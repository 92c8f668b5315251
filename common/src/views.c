/*
 * views.c - loads that may be early: each simulated CPU reads student
 * code's shared locations through a view that may lag behind memory.
 *
 * Rule kept here: a load returns a value some store really wrote to that
 * location, never older than what its CPU already read or wrote there
 * (coherence), nor older than what the CPU's barriers promise; nothing else
 * is promised, so each load may be satisfied early. No correct code is ever
 * shown an impossible value: when memory changed behind the model's back
 * (the tests' own code, common/), the location's history is forgotten and
 * only what memory holds can be read.
 *
 * The view-based operational style of the promising and C11 operational
 * semantics, without promises (so no load buffering: a load is never
 * satisfied after a later store of its CPU). Every store of student code
 * that becomes visible (it leaves a store buffer, or a release or an atomic
 * read-modify-write writes memory at once) is a commit: the location's
 * history gets its value and a time from one global clock. Each CPU has a
 * floor time: a load may return the history's newest entry no younger than
 * the floor, or any later one. The floor rises to now at a full barrier, a
 * lock taken, a context switch, any scheduling point of the kernel's own
 * (cpu_relax() included: a spinning CPU sees progress), a task taking the
 * CPU, an interrupt's entry, the end of a cross-call's wait, and a student
 * function's entry and return; to the newest entry the CPU has read at an
 * smp_rmb(); to the entry read at an acquire load. A load whose address lies
 * within 4 KiB above a pointer that a marked load of the same CPU returned
 * is taken to depend on it (an address dependency, as rcu_dereference()
 * gives) and sees at least what was visible when that pointer was stored.
 *
 * In deterministic mode only (one task runs at a time, so the memory a
 * task sees can be switched): the early value is written into memory just
 * before the load and the newest one put back at the task's next hook or
 * when it is switched out (views_settle()). Off unless sim_config's
 * early_loads is set.
 */
#include <string.h>
#include "internal.h"

#define VIEW_SLOTS 4096        /* locations tracked (open addressing) */
#define VIEW_DEPTH 4           /* history entries kept per location */
#define VIEW_DEPS 4            /* pointers remembered per CPU for dependencies */
#define VIEW_DEP_SPAN 4096     /* a load this far above such a pointer depends on it */

struct vloc {
	const void *p;             /* NULL: free slot */
	unsigned char size, n;
	struct { uint64_t t, v; } e[VIEW_DEPTH];   /* oldest first */
	uint64_t seen[NR_CPUS];    /* coherence: the newest entry each CPU read or wrote */
};

static struct vloc vtab[VIEW_SLOTS];
static int vused;
static uint64_t vclock;                /* the time of the newest commit */
static uint64_t vfloor[NR_CPUS];       /* no load of this CPU is older than this */
static uint64_t vread[NR_CPUS];        /* the newest entry this CPU has read */
static struct { uint64_t v, t; } vdep[NR_CPUS][VIEW_DEPS];
static int vdep_next[NR_CPUS];
static uint64_t vrng;
static struct { void *p; size_t size; uint64_t v; } vpending;  /* memory to put back */
static long vstale_at[NR_CPUS];        /* sim_stale_load(): this access reads early */

static bool on(void)
{
	return S.det && S.booted && S.cfg.early_loads;
}

void views_boot(uint64_t seed)
{
	memset(vtab, 0, sizeof(vtab));
	vused = 0;
	vclock = 0;
	memset(vfloor, 0, sizeof(vfloor));
	memset(vread, 0, sizeof(vread));
	memset(vdep, 0, sizeof(vdep));
	memset(vdep_next, 0, sizeof(vdep_next));
	memset(vstale_at, 0, sizeof(vstale_at));
	vrng = seed * 0xd1b54a32d192ed03ull + 7;
	vpending.p = NULL;
}

static uint64_t view_rand(void)
{
	uint64_t z = (vrng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t bytes_of(const void *p, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, p, size);
	return v;
}

/* The location @p of @size bytes, made when @make and there is room. */
static struct vloc *loc_of(const void *p, size_t size, bool make)
{
	uint32_t h = (uint32_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 52);

	for (unsigned i = 0; i < VIEW_SLOTS; i++) {
		struct vloc *l = &vtab[(h + i) & (VIEW_SLOTS - 1)];

		if (l->p == p && l->size == size)
			return l;
		if (!l->p) {
			if (!make || vused > VIEW_SLOTS / 2)
				return NULL;
			vused++;
			l->p = p;
			l->size = (unsigned char)size;
			return l;
		}
	}
	return NULL;
}

/* Start @l's history afresh from what memory holds now. */
static void reset(struct vloc *l, uint64_t v)
{
	l->n = 1;
	l->e[0].t = ++vclock;
	l->e[0].v = v;
	memset(l->seen, 0, sizeof(l->seen));
}

void views_settle(void)
{
	if (vpending.p) {
		memcpy(vpending.p, &vpending.v, vpending.size);
		vpending.p = NULL;
	}
}

void views_commit(int cpu, const void *p, size_t size)
{
	struct vloc *l;

	if (!on() || size > sizeof(uint64_t))
		return;
	views_settle();
	l = loc_of(p, size, true);
	if (!l)
		return;
	if (l->n == VIEW_DEPTH) {
		memmove(&l->e[0], &l->e[1], sizeof(l->e[0]) * (VIEW_DEPTH - 1));
		l->n--;
	}
	l->e[l->n].t = ++vclock;
	l->e[l->n].v = bytes_of(p, size);
	if (cpu >= 0)
		l->seen[cpu] = l->e[l->n].t;
	l->n++;
}

/*
 * A store of student code is about to change @p: if the model has no
 * history there yet, what memory holds now is its oldest entry (a value
 * every CPU could still read until a barrier says otherwise).
 */
void views_before_store(const void *p, size_t size)
{
	struct vloc *l;

	if (!on() || size > sizeof(uint64_t))
		return;
	views_settle();
	l = loc_of(p, size, true);
	if (l && !l->n) {
		l->n = 1;
		l->e[0].t = 0;
		l->e[0].v = bytes_of(p, size);
		memset(l->seen, 0, sizeof(l->seen));
	}
}

void views_forget(const void *p, size_t n)
{
	const char *a = p;

	if (!vused)
		return;
	views_settle();
	for (unsigned i = 0; i < VIEW_SLOTS; i++) {
		const char *q = vtab[i].p;

		if (q && q + vtab[i].size > a && q < a + n)
			vtab[i].n = 0;     /* keeps the slot; the next use starts afresh */
	}
}

/* The floor for a load of @p by @cpu: its own, or a pointer's it depends on. */
static uint64_t floor_of(int cpu, const void *p)
{
	uint64_t f = vfloor[cpu];

	for (int i = 0; i < VIEW_DEPS; i++) {
		uint64_t v = vdep[cpu][i].v;

		if (v && (uintptr_t)p >= v && (uintptr_t)p - v < VIEW_DEP_SPAN && vdep[cpu][i].t > f)
			f = vdep[cpu][i].t;
	}
	return f;
}

/* Which of the @n candidate entries (newest last) the load returns. */
static int choose(int n)
{
	int c = explore_choose_locked(n);   /* the explorer tries each, newest first */

	if (c >= 0)
		return n - 1 - c;
	if (view_rand() & 1)
		return n - 1;
	return (int)(view_rand() % (uint64_t)n);
}

uint64_t views_load(int cpu, void *p, size_t size, bool marked)
{
	struct vloc *l;
	uint64_t cur, f, lo;
	int first = 0, pick;

	if (!on() || cpu < 0 || size > sizeof(uint64_t))
		return 0;
	views_settle();
	cur = bytes_of(p, size);
	l = loc_of(p, size, true);
	if (!l)
		return 0;
	if (!l->n || l->e[l->n - 1].v != cur)
		reset(l, cur);         /* written behind the model's back */
	f = floor_of(cpu, p);
	/* the newest entry no younger than the floor, or the oldest one */
	for (int i = 0; i < l->n; i++)
		if (l->e[i].t <= f)
			first = i;
	lo = l->seen[cpu];
	while (first < l->n - 1 && l->e[first].t < lo)
		first++;
	if (vstale_at[cpu] && sim_access_count(cpu) == vstale_at[cpu])
		pick = first;          /* the test chose this load: the oldest it may see */
	else
		pick = first + choose(l->n - first);
	l->seen[cpu] = l->e[pick].t;
	if (l->e[pick].t > vread[cpu])
		vread[cpu] = l->e[pick].t;
	if (marked && l->e[pick].v >= VIEW_DEP_SPAN) {
		vdep[cpu][vdep_next[cpu]].v = l->e[pick].v;
		vdep[cpu][vdep_next[cpu]].t = l->e[pick].t;
		vdep_next[cpu] = (vdep_next[cpu] + 1) % VIEW_DEPS;
	}
	if (pick != l->n - 1) {
		trace_emit(cpu, sim_current, TR_MARK, "load satisfied early", 0);
		vpending.p = p;
		vpending.size = size;
		vpending.v = cur;
		memcpy(p, &l->e[pick].v, size);
	}
	return l->e[pick].t;
}

void views_sync(int cpu)
{
	if (cpu >= 0 && cpu < NR_CPUS && on())
		vfloor[cpu] = vclock;
}

void views_rmb(int cpu)
{
	if (cpu >= 0 && cpu < NR_CPUS && on() && vread[cpu] > vfloor[cpu])
		vfloor[cpu] = vread[cpu];
}

void views_acquire(int cpu, uint64_t t)
{
	if (cpu >= 0 && cpu < NR_CPUS && on() && t > vfloor[cpu])
		vfloor[cpu] = t;
}

void sim_stale_load(int cpu, long k)
{
	if (cpu < 0 || cpu >= NR_CPUS || k < 1)
		sim_bug(__FILE__, __LINE__, "sim_stale_load(%d, %ld): no such CPU or k < 1", cpu, k);
	vstale_at[cpu] = sim_access_count(cpu) + k;
}
