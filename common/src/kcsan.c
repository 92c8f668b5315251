/*
 * kcsan.c - the runtime behind -fsanitize=thread in student code: every
 * access of student code is a scheduling point, and its plain stores sit in
 * a store buffer (the kernel's KCSAN does the same with the same compiler
 * pass and its own runtime).
 *
 * Rule kept here: only student code is interleaved and buffered; the tests'
 * own code and common/ keep their meaning (they are never made scheduling
 * points or reordered here), and in deterministic mode every choice comes
 * from the seed.
 *
 * Which code is the student's is kcsan_classify.c's to say (kc_lookup(),
 * one hash probe a hit).
 *
 * Store buffer. In deterministic mode one task runs at a time, so the
 * simulated memory a task sees can be switched with the token: a plain (or
 * relaxed atomic) store of student code records the bytes it overwrites and
 * lets the compiler store; whenever the token leaves the task, the old bytes
 * are swapped back in (other CPUs see the old value), and the task's own
 * bytes return when it runs again (store-to-load forwarding; later stores of
 * the same CPU to the same address stay later). The entries drain (are simply
 * forgotten, memory already holding the new bytes) at the CPU's next release
 * or full barrier, lock release, context switch, or the end of the function
 * (__tsan_func_exit); with sim_config::late_stores, not at the function's end
 * but after 1 to KC_LATE_MAX more accesses of the CPU, drawn from the seed.
 * Some entries also drain, in any order, when the token leaves the task;
 * none while the test holds it (sim_commit_store() drains the one the test
 * chooses). sim_store() uses the same buffer.
 *
 * Cost per access: a cache hit and a TLS check, plus in deterministic mode
 * a scheduling decision drawn from the seed (the simulation lock only when
 * the decision says "may switch"). Measured on the 2-CPU machine at load
 * ~10, one task calling a store-and-reload function 200000 times: about
 * 110 ns per access with no switching (deterministic or parallel mode),
 * about 195 ns with the default 1-in-2 decisions, against 1.3 ns for the
 * same call uninstrumented. Data races are found only against stores still
 * in a buffer (the buffer is the watchpoint); a marked access against a
 * plain store is not reported (KCSAN's ASSUME_PLAIN_WRITES_ATOMIC).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "kcsan_classify.h"

/* ---- per-task state (each task is a thread of its own) ----------------- */

#define KC_SB_MAX 64
#define KC_STACK 256
#define KC_WIDE 16          /* widest store the buffer holds */
#define KC_LATE_MAX 8       /* late stores: at most this many accesses late */

enum kc_kind { KC_PLAIN, KC_SIMSTORE };

struct kc_entry {
	unsigned char *p;
	unsigned char size;
	unsigned char kind;
	bool marked;                 /* a relaxed atomic store: not a data race */
	short cpu;
	short ttl;                   /* late stores: this CPU's accesses before it drains by itself */
	unsigned char old[KC_WIDE];  /* what other CPUs see */
	unsigned char mine[KC_WIDE]; /* what this CPU sees, while swapped out */
	uintptr_t pc;
};

struct kc_task {
	struct kc_entry sb[KC_SB_MAX];
	int sb_len;
	int reg;                     /* index in kc_buffers + 1, or 0 */
	struct task_struct *task;
	bool swapped_out;
	int depth;
	unsigned char stack[KC_STACK];
	uintptr_t stack_lo, stack_hi; /* this thread's stack, once asked (own_stack_stores_drain()) */
};

static _Thread_local struct kc_task kc;

/* Deterministic mode runs one task at a time: these need no lock there. */
static uint64_t kc_rng;
static long kc_cpu_accesses[NR_CPUS];
static long kc_hold_at[NR_CPUS];     /* stop at this access count, or 0 */
static struct { long at; irq_handler_t fn; void *data; const char *name; } kc_irq_at[NR_CPUS];
static _Atomic int kc_armed;           /* holds or IRQs armed at an access */
static __attribute__((unused)) bool kc_instrumented;           /* __tsan_init ran: some object is instrumented */

/*
 * Deterministic mode: the tasks whose buffers hold stores, so that an access
 * of another CPU can find a store it races with (a buffered plain store is
 * watched until it drains). Only the token holder touches them.
 */
#define KC_MAX_BUFFERS 64
static struct kc_task *kc_buffers[KC_MAX_BUFFERS];
static int kc_nbuffers;

static void buffers_update(void)
{
	if (kc.sb_len && !kc.reg && kc_nbuffers < KC_MAX_BUFFERS) {
		kc_buffers[kc_nbuffers++] = &kc;
		kc.reg = kc_nbuffers;
		kc.task = sim_current;
	} else if (!kc.sb_len && kc.reg) {
		int i = kc.reg - 1;

		kc_buffers[i] = kc_buffers[--kc_nbuffers];
		if (i < kc_nbuffers)
			kc_buffers[i]->reg = i + 1;
		kc.reg = 0;
	}
}

/* ---- the store buffer -------------------------------------------------- */

static bool overlaps(const void *a, size_t an, const void *b, size_t bn)
{
	const char *x = a, *y = b;

	return x < y + bn && y < x + an;
}

static void swap_bytes(struct kc_entry *e, unsigned char *save, const unsigned char *put)
{
	memcpy(save, e->p, e->size);
	memcpy(e->p, put, e->size);
}

static uint64_t kc_rand(void);

/*
 * The entries @commit marks, and the older entries to the same bytes (a
 * CPU's stores to one address stay in order), leave @o's buffer. The
 * buffer's owner is running (memory holds its view already) or, with
 * @swapped_out, switched out (memory holds the old bytes: the committed
 * ones are written, oldest first).
 */
static void commit_marked(struct kc_task *o, bool *commit, bool swapped_out)
{
	int keep = 0;

	for (int i = o->sb_len - 1; i >= 0; i--) {
		if (!commit[i])
			continue;
		for (int j = i - 1; j >= 0; j--)
			if (overlaps(o->sb[i].p, o->sb[i].size, o->sb[j].p, o->sb[j].size))
				commit[j] = true;
	}
	for (int i = 0; i < o->sb_len; i++) {
		if (!commit[i]) {
			o->sb[keep++] = o->sb[i];
			continue;
		}
		if (swapped_out)
			memcpy(o->sb[i].p, o->sb[i].mine, o->sb[i].size);
		views_commit(o->sb[i].cpu, o->sb[i].p, o->sb[i].size);
	}
	o->sb_len = keep;
}

/*
 * Some stores reach memory while the CPU runs on, in no particular order
 * between addresses (the kernel's memory model allows it): before the
 * token leaves, each entry commits with probability 1/4, drawn from the
 * seed (the exhaustive explorer tries both ways), together with the older
 * entries to the same bytes. A sim_store() waits for its barrier, as it
 * promises. Called with S.lock held (the scheduler's switch).
 */
static void commit_some(void)
{
	bool commit[KC_SB_MAX] = { false };

	for (int i = kc.sb_len - 1; i >= 0; i--) {
		int c;

		if (kc.sb[i].kind != KC_PLAIN)
			continue;
		c = explore_choose_locked(2);  /* the exhaustive explorer tries both */
		commit[i] = c >= 0 ? c == 1 : (kc_rand() & 3) == 0;
	}
	commit_marked(&kc, commit, false);
	buffers_update();
}

/*
 * Late stores: each of this CPU's accesses brings its buffered plain
 * stores one step closer to memory; a store whose delay (drawn from the
 * seed when it was made) is over drains by itself, wherever the CPU is.
 */
static void age_stores(void)
{
	bool commit[KC_SB_MAX] = { false };
	bool any = false;

	for (int i = 0; i < kc.sb_len; i++)
		if (kc.sb[i].kind == KC_PLAIN && kc.sb[i].ttl > 0 && --kc.sb[i].ttl == 0)
			any = commit[i] = true;
	if (!any)
		return;
	commit_marked(&kc, commit, false);
	buffers_update();
}

/*
 * The stores a held task keeps buffered are what a forced schedule is about:
 * other CPUs read the old values. Mark them on its lane, by the function that
 * made the newest, so that a failure's picture shows where the late store
 * was made (a trace name is short: the function only).
 */
static void mark_unseen_stores(void)
{
	char fn[96], where[256], text[128];

	if (kcsan_split_pc_nowait(kc.sb[kc.sb_len - 1].pc, fn, sizeof(fn), where, sizeof(where)))
		snprintf(text, sizeof(text), "store unseen: %s()", fn);
	else
		snprintf(text, sizeof(text), "store unseen");
	trace_emit(sim_current->cpu, sim_current, TR_MARK, text, 0);
}

/*
 * A task held by the test (a named point, sim_hold_access()) keeps its
 * buffer as it is: what drains while it stands there is what the test
 * drains, with sim_commit_store(), so a forced schedule stays forced.
 */
void kcsan_swap_out(void)
{
	views_settle();        /* other CPUs see memory, not this CPU's early values */
	if (!kc.sb_len || kc.swapped_out)
		return;
	if (!(sim_current && sim_current->held_at))
		commit_some();
	else
		mark_unseen_stores();
	for (int i = kc.sb_len - 1; i >= 0; i--)
		swap_bytes(&kc.sb[i], kc.sb[i].mine, kc.sb[i].old);
	kc.swapped_out = true;
}

void kcsan_swap_in(void)
{
	if (!kc.swapped_out)
		return;
	/* What other CPUs stored meanwhile is what they will see until we drain. */
	for (int i = 0; i < kc.sb_len; i++)
		swap_bytes(&kc.sb[i], kc.sb[i].old, kc.sb[i].mine);
	kc.swapped_out = false;
}

/* Memory already holds this CPU's view: forgetting the entries commits them. */
void kcsan_drain(void)
{
	for (int i = 0; i < kc.sb_len; i++)
		views_commit(kc.sb[i].cpu, kc.sb[i].p, kc.sb[i].size);
	kc.sb_len = 0;
	kc.swapped_out = false;
	buffers_update();
}

/*
 * Commit the entries that overlap [p, p+n) and, to keep each address's
 * stores in order, every older entry overlapping those.
 */
static void drain_range(const void *p, size_t n)
{
	int last = -1;

	for (int i = kc.sb_len - 1; i >= 0; i--)
		if (overlaps(kc.sb[i].p, kc.sb[i].size, p, n)) {
			last = i;
			break;
		}
	if (last < 0)
		return;
	/* Simple and safe: commit everything up to the newest overlapping one. */
	int keep = 0;

	for (int i = 0; i <= last; i++)
		views_commit(kc.sb[i].cpu, kc.sb[i].p, kc.sb[i].size);
	for (int i = last + 1; i < kc.sb_len; i++)
		kc.sb[keep++] = kc.sb[i];
	kc.sb_len = keep;
	buffers_update();
}

static __attribute__((unused)) void drain_kind(enum kc_kind kind)
{
	int last = -1;

	for (int i = kc.sb_len - 1; i >= 0; i--)
		if (kc.sb[i].kind == kind) {
			last = i;
			break;
		}
	if (last < 0)
		return;
	/* Entries of the other kind older than the last drained one overlapping
	 * it must drain too (same-address order); keep it simple: commit every
	 * entry up to that one that overlaps any drained entry, keep the rest. */
	int keep = 0;

	for (int i = 0; i < kc.sb_len; i++) {
		bool drain = i <= last && kc.sb[i].kind == kind;

		for (int j = i + 1; !drain && j <= last; j++)
			if (kc.sb[j].kind == kind &&
			    overlaps(kc.sb[i].p, kc.sb[i].size, kc.sb[j].p, kc.sb[j].size))
				drain = true;
		if (!drain)
			kc.sb[keep++] = kc.sb[i];
		else
			views_commit(kc.sb[i].cpu, kc.sb[i].p, kc.sb[i].size);
	}
	kc.sb_len = keep;
	buffers_update();
}

/* Does this CPU still buffer a store to these bytes? Its load forwards it. */
static bool own_buffered(const void *p, size_t size)
{
	for (int i = 0; i < kc.sb_len; i++)
		if (overlaps(kc.sb[i].p, kc.sb[i].size, p, size))
			return true;
	return false;
}

static bool may_buffer(struct task_struct *t)
{
	return S.det && S.booted && t && t->cpu >= 0 && S.cfg.weak_memory;
}

/* How many more accesses of its CPU a late store waits before it drains by itself. */
static int late_store_ttl(void)
{
	if (S.cfg.late_store_delay > 0)
		return S.cfg.late_store_delay < SHRT_MAX ? S.cfg.late_store_delay : SHRT_MAX;
	return 1 + (int)(kc_rand() % KC_LATE_MAX);
}

/* Record the bytes a store of this CPU is about to overwrite. */
static void buffer_store(void *p, size_t size, int kind, bool marked, uintptr_t pc)
{
	if (size > KC_WIDE)
		return;
	if (kc.sb_len == KC_SB_MAX)
		kcsan_drain();
	if (S.cfg.early_loads && !own_buffered(p, size))
		views_before_store(p, size);   /* memory holds the committed value */
	struct kc_entry *e = &kc.sb[kc.sb_len++];

	e->p = p;
	e->size = (unsigned char)size;
	e->kind = (unsigned char)kind;
	e->marked = marked;
	e->cpu = (short)(sim_current ? sim_current->cpu : -1);
	e->ttl = (short)(S.cfg.late_stores && kind == KC_PLAIN ? late_store_ttl() : 0);
	e->pc = pc;
	memcpy(e->old, p, size);
	buffers_update();
}

bool kcsan_store_buffered(void *p, long v, size_t size)
{
	struct task_struct *t = sim_current;

	if (!may_buffer(t))
		return false;
	buffer_store(p, size, KC_SIMSTORE, true, 0);
	memcpy(p, &v, size);
	return true;
}

void kcsan_fence(void)
{
	if (kc.sb_len)
		kcsan_drain();
}

void kcsan_forget_range(const void *p, size_t n)
{
	if (kc.sb_len)
		drain_range(p, n);
	views_forget(p, n);
}

/* ---- boot, accounting and the test's controls -------------------------- */

void kcsan_boot(uint64_t seed)
{
	kc_rng = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	memset(kc_cpu_accesses, 0, sizeof(kc_cpu_accesses));
	memset(kc_hold_at, 0, sizeof(kc_hold_at));
	memset(kc_irq_at, 0, sizeof(kc_irq_at));
	atomic_store(&kc_armed, 0);
	kcsan_drain();
	watch_boot();
	views_boot(seed);
	kc_nbuffers = 0;
	kc.reg = 0;
	kc.depth = 0;
}

void kcsan_halt(void)
{
	kcsan_drain();
	kc.depth = 0;
}

bool sim_kcsan_enabled(void)
{
#ifdef WORKBOOK_HAVE_LIBDW
	return kc_instrumented;
#else
	return false;
#endif
}

long sim_access_count(int cpu)
{
	if (cpu < 0 || cpu >= NR_CPUS)
		return 0;
	return __atomic_load_n(&kc_cpu_accesses[cpu], __ATOMIC_RELAXED);
}

void sim_hold_access(int cpu, long k)
{
	if (cpu < 0 || cpu >= NR_CPUS || k < 1)
		sim_bug(__FILE__, __LINE__, "sim_hold_access(%d, %ld): no such CPU or k < 1", cpu, k);
	sim_hold_point(SIM_ACCESS_POINT);
	kc_hold_at[cpu] = sim_access_count(cpu) + k;
	atomic_fetch_add(&kc_armed, 1);
}

void sim_irq_at_access(int cpu, long k, void (*fn)(void *data), void *data, const char *name)
{
	if (cpu < 0 || cpu >= NR_CPUS || k < 1)
		sim_bug(__FILE__, __LINE__, "sim_irq_at_access(%d, %ld): no such CPU or k < 1", cpu, k);
	kc_irq_at[cpu].at = sim_access_count(cpu) + k;
	kc_irq_at[cpu].fn = fn;
	kc_irq_at[cpu].data = data;
	kc_irq_at[cpu].name = name;
	atomic_fetch_add(&kc_armed, 1);
}

/* The buffer of the task that holds @cpu, if it buffers anything. */
static struct kc_task *buffer_of_cpu(int cpu)
{
	struct task_struct *t;

	if (cpu < 0 || cpu >= NR_CPUS || !S.booted)
		return NULL;
	t = cpu_of(cpu)->curr;
	for (int i = 0; t && i < kc_nbuffers; i++)
		if (kc_buffers[i]->task == t)
			return kc_buffers[i];
	return NULL;
}

int sim_buffered_stores(int cpu)
{
	struct kc_task *o = buffer_of_cpu(cpu);

	return o && o != &kc ? o->sb_len : 0;
}

bool sim_commit_store(int cpu, int i)
{
	struct kc_task *o = buffer_of_cpu(cpu);
	bool commit[KC_SB_MAX] = { false };

	if (!o || o == &kc || i < 0 || i >= o->sb_len)
		return false;
	commit[o->sb_len - 1 - i] = true;
	trace_emit(cpu, o->task, TR_MARK, "store made visible first", 0);
	commit_marked(o, commit, o->swapped_out);
	if (!o->sb_len) {             /* as buffers_update() does for its own thread */
		int r = o->reg - 1;

		kc_buffers[r] = kc_buffers[--kc_nbuffers];
		if (r < kc_nbuffers)
			kc_buffers[r]->reg = r + 1;
		o->reg = 0;
		o->swapped_out = false;
	}
	return true;
}

/* A test armed something at this CPU's @n-th access. */
static void fire_armed(struct task_struct *t, int cpu, long n, const char *file, int line)
{
	if (kc_irq_at[cpu].at == n) {
		kc_irq_at[cpu].at = 0;
		atomic_fetch_sub(&kc_armed, 1);
		raise_irq(cpu, kc_irq_at[cpu].fn, kc_irq_at[cpu].data, kc_irq_at[cpu].name);
	}
	if (kc_hold_at[cpu] == n) {
		kc_hold_at[cpu] = 0;
		atomic_fetch_sub(&kc_armed, 1);
		sim_point_at(SIM_ACCESS_POINT, file, line);
	}
	(void)t;
}

static uint64_t kc_rand(void)
{
	uint64_t z = (kc_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- an access of student code ----------------------------------------- */

static long kc_par_count; /* parallel mode: a yield now and then */

static void student_point(struct task_struct *t, struct kc_slot *s)
{
	const char *file = kc_files[s->file];
	int cpu = t->cpu;

	if (cpu >= 0) {
		long n = __atomic_add_fetch(&kc_cpu_accesses[cpu], 1, __ATOMIC_RELAXED);

		if (atomic_load_explicit(&kc_armed, memory_order_relaxed))
			fire_armed(t, cpu, n, file, s->line);
	}
	if (S.det) {
		t->file = file;
		t->line = s->line;
		int every = S.cfg.access_preempt;

		if (every > 0 && kc_rand() % (uint64_t)every == 0)
			sched_access_point(t);
	} else if ((__atomic_add_fetch(&kc_par_count, 1, __ATOMIC_RELAXED) & 1023) == 0) {
		sched_yield();
	}
}

/* Interrupts pending on the task's CPU are taken between two accesses. */
static inline void take_irqs(struct task_struct *t)
{
	if (t->cpu >= 0 &&
	    atomic_load_explicit(&cpu_of(t->cpu)->nr_irqs, memory_order_relaxed))
		deliver_irqs(t);
}

/* An access's type: a read unless KC_WRITE; KC_ATOMIC and KC_VOLATILE are marked. */
enum { KC_READ = 0, KC_WRITE = WATCH_WRITE, KC_ATOMIC = WATCH_MARKED, KC_VOLATILE = 4 };

/* A plain access meets a plain store another CPU still buffers (watch.c reports it). */
static __attribute__((noreturn)) void report_race(const struct kc_task *other,
						 const struct kc_entry *e, struct task_struct *t,
						 uintptr_t pc, const void *p, size_t size, int type)
{
	struct race_access a = { other->task, e->cpu, e->p, e->size, WATCH_WRITE, e->pc };
	struct race_access b = { t, t->cpu, p, size, type, pc };
	char note[96];

	snprintf(note, sizeof(note), "still in cpu %d's store buffer: no release, barrier or "
		 "unlock since", e->cpu);
	watch_report(&a, note, &b, false);
}

/*
 * A plain access of student code meets a plain store another CPU still
 * buffers. A marked access (READ_ONCE(), an atomic) against a plain aligned
 * store is not reported, as the kernel's default
 * CONFIG_KCSAN_ASSUME_PLAIN_WRITES_ATOMIC=y does not: the lockless
 * "is the queue empty?" check under a lock-protected update stays quiet.
 */
static void check_races(struct task_struct *t, uintptr_t pc, const void *p, size_t size,
			int type)
{
	if (type & KC_ATOMIC)
		return;
	for (int i = 0; i < kc_nbuffers; i++) {
		const struct kc_task *o = kc_buffers[i];

		if (o == &kc)
			continue;
		for (int j = 0; j < o->sb_len; j++) {
			const struct kc_entry *e = &o->sb[j];

			if (e->kind != KC_PLAIN || e->marked || e->cpu == t->cpu || e->cpu < 0)
				continue;
			if (overlaps(e->p, e->size, p, size))
				report_race(o, e, t, pc, p, size, type);
		}
	}
}

static inline int class_of_access(struct kc_slot *s)
{
	int c = s->cls;

	if (c == KC_HEADER)
		c = kc.depth > 0 ? kc.stack[kc.depth - 1 < KC_STACK ? kc.depth - 1 : KC_STACK - 1]
				 : KC_TEST;
	return c;
}

/*
 * Returns the task when the access is student code's and the kernel runs;
 * @p is NULL for a point that is no access (a function's end).
 */
static inline struct task_struct *student_access(uintptr_t pc, const void *p, size_t size,
						 int type)
{
	struct task_struct *t = sim_current;

	if (!t || !S.booted || !S.cfg.kcsan)
		return NULL;
	struct kc_slot *s = kc_lookup(pc);

	if (class_of_access(s) != KC_STUDENT)
		return NULL;
	views_settle();
	int slot = -1;

	if (p && S.det && S.cfg.race_watch) {
		int wtype = (type & (KC_WRITE | KC_ATOMIC)) | ((type & KC_VOLATILE) ? WATCH_MARKED : 0);

		watch_check(t, pc, p, size, wtype);
		slot = watch_begin(t, pc, p, size, wtype);
	}
	if (p && kc.sb_len && S.cfg.late_stores)
		age_stores();
	student_point(t, s);   /* in progress while switched out here */
	watch_end(slot);
	take_irqs(t);
	if (p && kc_nbuffers && S.det && S.cfg.races && t->cpu >= 0)
		check_races(t, pc, p, size, type & (KC_WRITE | KC_ATOMIC));
	return t;
}

static inline struct task_struct *student(uintptr_t pc)
{
	return student_access(pc, NULL, 0, 0);
}

static inline void plain_access(uintptr_t pc, void *p, size_t size, int type)
{
	struct task_struct *t = student_access(pc, p, size, type);

	if (t && (type & KC_WRITE) && may_buffer(t))
		buffer_store(p, size, KC_PLAIN, false, pc);
	else if (t && !(type & KC_WRITE) && S.cfg.early_loads && !own_buffered(p, size))
		views_load(t->cpu, p, size, type & KC_VOLATILE);
}

/*
 * A barrier called from student code (smp_mb(), smp_wmb(): sim_fence()) is
 * one of its accesses: the stores before it may be seen, in any order, by a
 * CPU that runs while this one stands there.
 */
void kcsan_fence_point(uintptr_t pc)
{
	student(pc);
}

/* ---- the hooks gcc emits ----------------------------------------------- */
#ifndef __SANITIZE_THREAD__

#define PC() ((uintptr_t)__builtin_return_address(0))

void __tsan_init(void)
{
	kc_instrumented = true;
}

void __tsan_func_entry(void *call_pc)
{
	(void)call_pc;
	struct kc_slot *s = kc_lookup(PC());
	int c = s->cls;

	if (c == KC_HEADER || c == KC_NONE)
		c = kc.depth > 0 ? kc.stack[(kc.depth - 1) % KC_STACK] : KC_TEST;
	if (kc.depth < KC_STACK)
		kc.stack[kc.depth] = (unsigned char)c;
	kc.depth++;
	if (c == KC_STUDENT && sim_current && S.cfg.early_loads)
		views_sync(sim_current->cpu);   /* early loads stay inside one function */
}

/* The end of a student function: a scheduling point, then its stores drain. */
/*
 * A late store to this thread's own stack must not outlive its function:
 * its frame is dead once the function returns and is soon another frame,
 * which a later swap of the buffer's bytes would overwrite. Such a store
 * drains at every function exit (as if it reached its CPU's cache at once;
 * nobody else reads a dead frame). Stores to other threads' stacks, which
 * the labs' cross-calls make, stay buffered.
 */
static void own_stack_stores_drain(void)
{
	bool commit[KC_SB_MAX] = { false };
	bool any = false;

	if (!kc.stack_hi) {
		pthread_attr_t a;
		void *lo;
		size_t size;

		if (pthread_getattr_np(pthread_self(), &a))
			return;
		if (!pthread_attr_getstack(&a, &lo, &size)) {
			kc.stack_lo = (uintptr_t)lo;
			kc.stack_hi = (uintptr_t)lo + size;
		}
		pthread_attr_destroy(&a);
	}
	for (int i = 0; i < kc.sb_len; i++) {
		uintptr_t p = (uintptr_t)kc.sb[i].p;

		if (p >= kc.stack_lo && p < kc.stack_hi)
			any = commit[i] = true;
	}
	if (!any)
		return;
	commit_marked(&kc, commit, false);
	buffers_update();
}

void __tsan_func_exit(void *unused)
{
	(void)unused;
	views_settle();
	if (kc.sb_len)
		student(PC());
	if (sim_current && S.cfg.early_loads)
		views_sync(sim_current->cpu);
	if (kc.depth > 0)
		kc.depth--;
	if (kc.sb_len && !S.cfg.late_stores)
		drain_kind(KC_PLAIN);   /* else they outlive the function (age_stores()) */
	else if (kc.sb_len)
		own_stack_stores_drain();
}

#define KC_RW(n)                                                            \
	void __tsan_read##n(void *p) { plain_access(PC(), p, n, KC_READ); }  \
	void __tsan_write##n(void *p) { plain_access(PC(), p, n, KC_WRITE); } \
	void __tsan_unaligned_read##n(void *p) { plain_access(PC(), p, n, KC_READ); }  \
	void __tsan_unaligned_write##n(void *p) { plain_access(PC(), p, n, KC_WRITE); } \
	void __tsan_volatile_read##n(void *p) { plain_access(PC(), p, n, KC_READ | KC_VOLATILE); }  \
	void __tsan_volatile_write##n(void *p) { plain_access(PC(), p, n, KC_WRITE | KC_VOLATILE); } \
	void __tsan_read##n##_pc(void *p, void *pc) { plain_access((uintptr_t)pc, p, n, KC_READ); } \
	void __tsan_write##n##_pc(void *p, void *pc) { plain_access((uintptr_t)pc, p, n, KC_WRITE); }

/* Declarations first: these have no header (gcc knows them as builtins). */
#define KC_RW_DECL(n)                                                       \
	void __tsan_read##n(void *p); void __tsan_write##n(void *p);         \
	void __tsan_unaligned_read##n(void *p); void __tsan_unaligned_write##n(void *p); \
	void __tsan_volatile_read##n(void *p); void __tsan_volatile_write##n(void *p); \
	void __tsan_read##n##_pc(void *p, void *pc); void __tsan_write##n##_pc(void *p, void *pc);
KC_RW_DECL(1) KC_RW_DECL(2) KC_RW_DECL(4) KC_RW_DECL(8) KC_RW_DECL(16)
void __tsan_init(void);
void __tsan_func_entry(void *call_pc);
void __tsan_func_exit(void *unused);
void __tsan_read_range(void *p, long size);
void __tsan_write_range(void *p, long size);
void __tsan_vptr_update(void *vptr_p, void *new_val);
void __tsan_vptr_read(void *vptr_p);
void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);

KC_RW(1) KC_RW(2) KC_RW(4) KC_RW(8) KC_RW(16)

void __tsan_read_range(void *p, long size)
{
	plain_access(PC(), p, (size_t)size, KC_READ);
}

void __tsan_write_range(void *p, long size)
{
	plain_access(PC(), p, (size_t)size, KC_WRITE);
}

void __tsan_vptr_update(void *vptr_p, void *new_val)
{
	(void)new_val;
	plain_access(PC(), vptr_p, sizeof(void *), KC_WRITE);
}

void __tsan_vptr_read(void *vptr_p)
{
	plain_access(PC(), vptr_p, sizeof(void *), KC_READ);
}

static inline bool releases(int mo)
{
	mo &= 0xffff;
	return mo == __ATOMIC_RELEASE || mo == __ATOMIC_ACQ_REL || mo == __ATOMIC_SEQ_CST;
}

static inline bool acquires(int mo)
{
	mo &= 0xffff;
	return mo == __ATOMIC_ACQUIRE || mo == __ATOMIC_CONSUME || mo == __ATOMIC_ACQ_REL ||
	       mo == __ATOMIC_SEQ_CST;
}

/* smp_rmb() is an acquire fence: later loads see what earlier ones did. */
void __tsan_atomic_thread_fence(int mo)
{
	struct task_struct *t = student(PC());

	if (t && releases(mo))
		kcsan_fence();
	if (t && (mo & 0xffff) == __ATOMIC_SEQ_CST)
		views_sync(t->cpu);
	else if (t && acquires(mo))
		views_rmb(t->cpu);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* A compiler barrier: orders nothing between CPUs. */
void __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * Atomics. The hook performs the operation itself (always seq_cst on the
 * real machine: stronger is safe); the simulated order is @mo's: a relaxed
 * store is buffered like a plain one, a release drains the buffer first, a
 * read-modify-write goes to memory at once (after the older stores to the
 * same bytes, which it commits).
 */
#define SC __ATOMIC_SEQ_CST

enum kc_atomic { AT_LOAD, AT_STORE, AT_RMW };

/*
 * A load reads this CPU's own view (its buffered stores are in memory while
 * it runs), so it forwards from the buffer and drains nothing; a
 * read-modify-write is a write to the race watch too.
 */
static inline struct task_struct *atomic_pre(uintptr_t pc, volatile void *p, size_t n, int mo,
					     enum kc_atomic kind)
{
	struct task_struct *t = student_access(pc, (const void *)p, n,
					       KC_ATOMIC | (kind != AT_LOAD ? KC_WRITE : 0));

	if (!t)
		return NULL;
	if (releases(mo))
		kcsan_fence();
	else if (kind == AT_RMW && kc.sb_len)
		drain_range((const void *)p, n);
	if (kind != AT_LOAD && S.cfg.early_loads && !own_buffered((const void *)p, n))
		views_before_store((const void *)p, n);
	if (kind == AT_STORE && !releases(mo) && may_buffer(t))
		buffer_store((void *)p, n, KC_PLAIN, true, pc);
	return t;
}

/*
 * After the operation: a store that went to memory, and every
 * read-modify-write, is a commit; an acquire load orders the loads after
 * it behind the entry it read (@t).
 */
static inline void atomic_post(struct task_struct *tk, volatile void *p, size_t n, int mo,
			       enum kc_atomic kind, uint64_t t)
{
	if (kind == AT_LOAD) {
		views_settle();
		if (acquires(mo))
			views_acquire(tk->cpu, t);
	} else if (kind == AT_RMW || releases(mo) || !may_buffer(tk)) {
		views_commit(tk->cpu, (const void *)p, n);
		if (kind == AT_RMW && acquires(mo))
			views_sync(tk->cpu);
	}
}

#define KC_ATOMIC_OPS(bits, T)                                                          \
	T __tsan_atomic##bits##_load(const volatile void *a_, int mo);                      \
	void __tsan_atomic##bits##_store(volatile void *a_, T v, int mo);                   \
	T __tsan_atomic##bits##_exchange(volatile void *a_, T v, int mo);                   \
	T __tsan_atomic##bits##_fetch_add(volatile void *a_, T v, int mo);                  \
	T __tsan_atomic##bits##_fetch_sub(volatile void *a_, T v, int mo);                  \
	T __tsan_atomic##bits##_fetch_and(volatile void *a_, T v, int mo);                  \
	T __tsan_atomic##bits##_fetch_or(volatile void *a_, T v, int mo);                   \
	T __tsan_atomic##bits##_fetch_xor(volatile void *a_, T v, int mo);                  \
	T __tsan_atomic##bits##_fetch_nand(volatile void *a_, T v, int mo);                 \
	bool __tsan_atomic##bits##_compare_exchange_strong(volatile void *a_, void *c_, T v,     \
							   int mo, int fmo);            \
	bool __tsan_atomic##bits##_compare_exchange_weak(volatile void *a_, void *c_, T v,       \
							 int mo, int fmo);              \
	T __tsan_atomic##bits##_compare_exchange_val(volatile void *a_, T c, T v, int mo,   \
						      int fmo);                         \
	T __tsan_atomic##bits##_load(const volatile void *a_, int mo)                       \
	{                                                                               \
		volatile T *a = (volatile T *)a_;                                       \
		struct task_struct *tk = atomic_pre(PC(), a, sizeof(T), __ATOMIC_RELAXED, AT_LOAD); \
		uint64_t t = tk ? views_load(tk->cpu, (void *)a, sizeof(T), true) : 0;  \
		T r = __atomic_load_n(a, SC);                                           \
		if (tk)                                                                 \
			atomic_post(tk, a, sizeof(T), mo, AT_LOAD, t);                  \
		return r;                                                               \
	}                                                                               \
	void __tsan_atomic##bits##_store(volatile void *a_, T v, int mo)                    \
	{                                                                               \
		volatile T *a = a_;                                                     \
		struct task_struct *tk = atomic_pre(PC(), a, sizeof(T), mo, AT_STORE);  \
		__atomic_store_n(a, v, SC);                                             \
		if (tk)                                                                 \
			atomic_post(tk, a, sizeof(T), mo, AT_STORE, 0);                 \
	}                                                                               \
	KC_RMW(bits, T, exchange, __atomic_exchange_n(a, v, SC))                        \
	KC_RMW(bits, T, fetch_add, __atomic_fetch_add(a, v, SC))                        \
	KC_RMW(bits, T, fetch_sub, __atomic_fetch_sub(a, v, SC))                        \
	KC_RMW(bits, T, fetch_and, __atomic_fetch_and(a, v, SC))                        \
	KC_RMW(bits, T, fetch_or, __atomic_fetch_or(a, v, SC))                          \
	KC_RMW(bits, T, fetch_xor, __atomic_fetch_xor(a, v, SC))                        \
	KC_RMW(bits, T, fetch_nand, __atomic_fetch_nand(a, v, SC))                      \
	KC_CAS(bits, T, strong)                                                         \
	KC_CAS(bits, T, weak)                                                           \
	T __tsan_atomic##bits##_compare_exchange_val(volatile void *a_, T c, T v, int mo,   \
						      int fmo)                          \
	{                                                                               \
		volatile T *a = a_;                                                     \
		(void)fmo;                                                              \
		struct task_struct *tk = atomic_pre(PC(), a, sizeof(T), mo, AT_RMW);    \
		__atomic_compare_exchange_n(a, &c, v, false, SC, SC);                   \
		if (tk)                                                                 \
			atomic_post(tk, a, sizeof(T), mo, AT_RMW, 0);                   \
		return c;                                                               \
	}

#define KC_RMW(bits, T, op, expr)                                                       \
	T __tsan_atomic##bits##_##op(volatile void *a_, T v, int mo)                        \
	{                                                                               \
		volatile T *a = a_;                                                     \
		struct task_struct *tk = atomic_pre(PC(), a, sizeof(T), mo, AT_RMW);    \
		T r = expr;                                                             \
		if (tk)                                                                 \
			atomic_post(tk, a, sizeof(T), mo, AT_RMW, 0);                   \
		return r;                                                               \
	}

/* A weak compare-exchange may fail spuriously; this one never does: both are strong. */
#define KC_CAS(bits, T, kind)                                                           \
	bool __tsan_atomic##bits##_compare_exchange_##kind(volatile void *a_, void *c_, T v,     \
							   int mo, int fmo)             \
	{                                                                               \
		volatile T *a = a_;                                                     \
		(void)fmo;                                                              \
		struct task_struct *tk = atomic_pre(PC(), a, sizeof(T), mo, AT_RMW);    \
		bool r = __atomic_compare_exchange_n(a, (T *)c_, v, false, SC, SC);     \
		if (tk)                                                                 \
			atomic_post(tk, a, sizeof(T), mo, AT_RMW, 0);                   \
		return r;                                                               \
	}

KC_ATOMIC_OPS(8, unsigned char)
KC_ATOMIC_OPS(16, unsigned short)
KC_ATOMIC_OPS(32, unsigned int)
KC_ATOMIC_OPS(64, unsigned long)

#endif /* !__SANITIZE_THREAD__ */
