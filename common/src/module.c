/*
 * module.c - loadable modules on dlopen()/dlclose().
 *
 * Rule kept here: rmmod() leaves no way to reach the module's old code.
 * dlclose() alone does not promise that (another object may be loaded at the
 * same address and silently run instead), so after it we check the object is
 * gone and map its old ranges PROT_NONE: every later call there faults.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "internal.h"

#define MAX_RANGES 8

struct module {
	char name[64];
	char path[4096];
	void *handle;
	bool loaded;
	int nr_ranges;
	struct { uintptr_t start, end; } ranges[MAX_RANGES];
	void (*exit)(void);
	uintptr_t base;         /* where it was loaded: its symbols' offsets start here */
	enum exit_phase { NOT_EXITING, EXITING, EXITED } phase;   /* of its exit function */
	char at_rmmod[256];     /* what was left when it returned (rmmod_leftovers()) */
};

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *modules;
static int nr_modules, cap_modules;

/*
 * The lowest and highest address any module ever held. Ranges are never
 * dropped (an unloaded module's stay fenced, see module_unmap()), so the
 * bounds only widen; they are stored under mod_lock before the module's init
 * runs, so whoever holds a module's address can see them. An address outside
 * them is in no module, known without mod_lock: call_rcu() and every callback
 * invoked ask, and most callbacks are the kernel's or a test's.
 */
static _Atomic uintptr_t mod_lo = UINTPTR_MAX, mod_hi;

/*
 * callback_name()'s cache. A trace names every callback queued and every one
 * invoked, and dladdr() searches the symbol tables each time: for a test that
 * queues 10^5 callbacks, most of its time under memcheck. An address may
 * change owner when a module is loaded or unloaded, so every entry is dropped
 * then (names_gen). name_lock is a leaf: nothing is taken while it is held.
 */
#define NAME_CACHE 64
#define NAME_LEN 64     /* more than a trace event keeps (struct trace_ev) */
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	rcu_callback_t fn;
	unsigned long gen;
	char name[NAME_LEN];
} name_cache[NAME_CACHE];
static _Atomic unsigned long names_gen = 1;

/*
 * Who queued each callback into a module. Several wrong exit functions end
 * in the one BUG "callback into unloaded module": what tells them apart is
 * who queued the late callback, from where, and whether the exit function
 * was already running. A ring keyed by rcu_head, under mod_lock: an entry
 * overwritten by newer ones only shortens a report.
 */
#define QUEUERS 256
enum queuer_kind { Q_TEST, Q_TASK, Q_IRQ, Q_CALLBACK };
static struct queuer {
	const struct rcu_head *head;
	enum queuer_kind kind;
	char comm[TASK_COMM_LEN];
	int cpu;
	uintptr_t fn;           /* the timer function (Q_IRQ) or callback (Q_CALLBACK) */
	enum exit_phase phase;  /* of the module's exit function when it was queued */
} queuers[QUEUERS];
static unsigned int next_queuer;
/* The callback this thread is invoking (a callback that queues re-posts). */
static _Thread_local rcu_callback_t invoking;

/* A module was loaded or unloaded: the names cached so far may be wrong. */
static void names_forget(void)
{
	atomic_fetch_add(&names_gen, 1);
}

/* module_counts(), by name: they outlive unloads and add up over reloads. */
#define MAX_COUNTED 16
static struct { char name[64]; struct module_counts c; } counted[MAX_COUNTED];

static struct module_counts *counts_locked(const char *name)
{
	sim_assert_held(&mod_lock);
	for (int i = 0; i < MAX_COUNTED; i++) {
		if (!strcmp(counted[i].name, name))
			return &counted[i].c;
		if (!counted[i].name[0]) {
			snprintf(counted[i].name, sizeof(counted[i].name), "%s", name);
			return &counted[i].c;
		}
	}
	return NULL;
}

/* Add one to the count that @field picks, for the module @name. */
static void count(const char *name, size_t field)
{
	sim_lock_take(&mod_lock);
	struct module_counts *c = counts_locked(name);

	if (c)
		(*(long *)((char *)c + field))++;
	sim_lock_drop(&mod_lock);
}

struct module_counts module_counts(const char *name)
{
	struct module_counts none = { 0 };

	sim_lock_take(&mod_lock);
	for (int i = 0; i < MAX_COUNTED && counted[i].name[0]; i++)
		if (!strcmp(counted[i].name, name))
			none = counted[i].c;
	sim_lock_drop(&mod_lock);
	return none;
}

void modules_reset_counts(void)
{
	sim_lock_take(&mod_lock);
	memset(counted, 0, sizeof(counted));
	memset(queuers, 0, sizeof(queuers));
	sim_lock_drop(&mod_lock);
}

struct find_ranges {
	uintptr_t base;
	struct module *m;
};

static int collect_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_ranges *f = arg;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	(void)size;
	if (info->dlpi_addr != f->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && f->m->nr_ranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		uintptr_t e = s + ph->p_memsz;

		f->m->ranges[f->m->nr_ranges].start = s & ~(page - 1);
		f->m->ranges[f->m->nr_ranges].end = (e + page - 1) & ~(page - 1);
		if (f->m->ranges[f->m->nr_ranges].start < atomic_load(&mod_lo))
			atomic_store(&mod_lo, f->m->ranges[f->m->nr_ranges].start);
		if (f->m->ranges[f->m->nr_ranges].end > atomic_load(&mod_hi))
			atomic_store(&mod_hi, f->m->ranges[f->m->nr_ranges].end);
		f->m->nr_ranges++;
	}
	return 1;
}

static struct module *module_find(const char *name, bool loaded_only)
{
	for (int i = nr_modules - 1; i >= 0; i--)
		if (!strcmp(modules[i].name, name) && (!loaded_only || modules[i].loaded))
			return &modules[i];
	return NULL;
}

/* Is @a in one of @m's ranges? */
static bool module_has(const struct module *m, uintptr_t a)
{
	for (int r = 0; r < m->nr_ranges; r++)
		if (a >= m->ranges[r].start && a < m->ranges[r].end)
			return true;
	return false;
}

/* The module (loaded or not, the newest first) whose ranges hold @a, or NULL. */
static struct module *module_at_locked(uintptr_t a)
{
	sim_assert_held(&mod_lock);
	for (int i = nr_modules - 1; i >= 0; i--)
		if (module_has(&modules[i], a))
			return &modules[i];
	return NULL;
}

static struct module *module_new(void)
{
	if (nr_modules == cap_modules) {
		int cap = cap_modules ? 2 * cap_modules : 8;
		struct module *n = realloc(modules, sizeof(*n) * (size_t)cap);

		if (!n)
			sim_bug(__FILE__, __LINE__, "out of memory loading a module");
		modules = n;
		cap_modules = cap;
	}
	struct module *m = &modules[nr_modules++];

	memset(m, 0, sizeof(*m));
	return m;
}

/* Who is queueing a callback now, into @q. */
static void note_queuer(struct queuer *q)
{
	struct task_struct *t = sim_current;

	q->kind = Q_TASK;
	q->fn = 0;
	q->cpu = t ? t->cpu : -1;
	snprintf(q->comm, sizeof(q->comm), "%s", t ? t->comm : "");
	if (!t || t->cpu < 0) {
		q->kind = Q_TEST;
	} else if (cpu_of(t->cpu)->hardirq > 0) {
		q->kind = Q_IRQ;
		q->fn = (uintptr_t)timer_fn_running_on(t->cpu);
	} else if (invoking) {
		q->kind = Q_CALLBACK;
		q->fn = (uintptr_t)invoking;
	}
}

/* A callback was queued (trace_rcu_callback_queued()): count it if it is a module's, and say who. */
void module_note_queued(const struct rcu_head *head)
{
	bool unloaded = false;
	const char *mod = module_of_address((const void *)(uintptr_t)head->func, &unloaded);
	struct queuer q = { .head = head };

	if (!mod || unloaded)
		return;
	count(mod, offsetof(struct module_counts, queued));
	note_queuer(&q);
	sim_lock_take(&mod_lock);
	struct module *m = module_at_locked((uintptr_t)head->func);
	unsigned int slot = next_queuer++ % QUEUERS;

	for (unsigned int i = 0; i < QUEUERS; i++)
		if (queuers[i].head == head)
			slot = i;
	q.phase = m ? m->phase : NOT_EXITING;
	queuers[slot] = q;
	sim_lock_drop(&mod_lock);
}

int insmod(const char *path)
{
	might_sleep();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "insmod: %s\n", dlerror());
		return -ENOENT;
	}
	void *name_sym = dlsym(h, "__sim_module_name");
	void *init_sym = dlsym(h, "__sim_module_init");
	void *exit_sym = dlsym(h, "__sim_module_exit");
	Dl_info di;

	if (!name_sym || !init_sym || !dladdr(name_sym, &di)) {
		fprintf(stderr, "insmod: %s has no MODULE_NAME() or module_init()\n", path);
		dlclose(h);
		return -ENOENT;
	}
	/* entry points are functions (see module.h): dlsym() gives their addresses */
	const char *(*name_fn)(void) = (const char *(*)(void))(uintptr_t)name_sym;
	int (*init_fn)(void) = (int (*)(void))(uintptr_t)init_sym;
	void (*exit_fn)(void) = (void (*)(void))(uintptr_t)exit_sym;
	const char *name = name_fn();

	sim_lock_take(&mod_lock);
	if (module_find(name, true)) {
		sim_lock_drop(&mod_lock);
		dlclose(h);
		fprintf(stderr, "insmod: module %s is already loaded\n", name);
		return -EEXIST;
	}
	struct module *m = module_new();
	struct find_ranges f = { (uintptr_t)di.dli_fbase, m };

	m->base = (uintptr_t)di.dli_fbase;

	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->path, sizeof(m->path), "%s", di.dli_fname);
	m->handle = h;
	m->loaded = true;
	m->exit = exit_fn;
	dl_iterate_phdr(collect_ranges, &f);
	names_forget();
	char tname[64];

	snprintf(tname, sizeof(tname), "%s", m->name);
	sim_lock_drop(&mod_lock);
	trace_emit(sim_current ? sim_current->cpu : -1, sim_current, TR_MODULE_LOAD, tname, 0);
	int err = init_fn();

	if (!err)
		count(tname, offsetof(struct module_counts, inits));
	if (err) {
		sim_lock_take(&mod_lock);
		m = module_find(tname, true);
		m->loaded = false;
		dlclose(m->handle);
		names_forget();
		sim_lock_drop(&mod_lock);
	}
	return err;
}

/* Unmap for good: after dlclose(), fence the old ranges so stale calls fault. */
static void module_unmap(struct module *m)
{
	dlclose(m->handle);
	void *again = dlopen(m->path, RTLD_NOW | RTLD_NOLOAD);

	if (again) {
		dlclose(again);
		sim_bug(__FILE__, __LINE__, "rmmod %s: the object is still mapped after "
			"dlclose() (RTLD_NODELETE or unique symbols?)", m->name);
	}
	for (int i = 0; i < m->nr_ranges; i++)
		mmap((void *)m->ranges[i].start, m->ranges[i].end - m->ranges[i].start,
		     PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		     -1, 0);
	m->loaded = false;
	names_forget();
	kcsan_modules_changed(); /* its addresses may be reused: forget their lines */
}

/*
 * The name of the function at ADDR in module M, from the .symtab of its file:
 * a module's timer functions are static, and dladdr() reads only the
 * dynamic symbols. False when the file has no such symbol (stripped).
 */
static bool module_symbol(const struct module *m, uintptr_t addr, char *buf, size_t len)
{
	bool found = false;
	off_t size;
	int fd;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size = lseek(fd, 0, SEEK_END);      /* <sys/stat.h> clashes with the kernel's headers */
	void *map = size <= 0 ? MAP_FAILED :
		    mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);

	close(fd);
	if (map == MAP_FAILED)
		return false;
	const ElfW(Ehdr) *eh = map;
	const ElfW(Shdr) *sh = (const void *)((const char *)map + eh->e_shoff);
	uintptr_t off = addr - m->base;

	for (int i = 0; !found && i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		const ElfW(Sym) *sym = (const void *)((const char *)map + sh[i].sh_offset);
		const char *str = (const char *)map + sh[sh[i].sh_link].sh_offset;
		size_t n = sh[i].sh_size / sizeof(*sym);

		for (size_t k = 0; k < n; k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && off >= sym[k].st_value &&
			    off < sym[k].st_value + (sym[k].st_size ? sym[k].st_size : 1)) {
				snprintf(buf, len, "%s", str + sym[k].st_name);
				found = true;
				break;
			}
	}
	munmap(map, (size_t)size);
	return found;
}

/*
 * Before unmapping: a timer of the module still armed (or running) would
 * send the timer interrupt walking the armed list into unmapped memory, a
 * crash without a name. Say which timer, and what the exit function lacks.
 */
static void check_no_timers_left(int idx)
{
	struct module m;

	if (!S.booted)
		return;
	sim_lock_take(&mod_lock);
	m = modules[idx];
	sim_lock_drop(&mod_lock);
	for (int r = 0; r < m.nr_ranges; r++) {
		bool running = false;
		struct timer_list *t;
		Dl_info di;
		const char *fn = NULL;

		uintptr_t fa = 0;
		char name[128];

		SIM_LOCK();
		t = timer_in_range_locked(m.ranges[r].start, m.ranges[r].end, &running);
		if (t)
			fa = (uintptr_t)t->function;
		SIM_UNLOCK();
		if (t && dladdr((void *)fa, &di) && di.dli_sname)
			fn = di.dli_sname;
		else if (t && module_symbol(&m, fa, name, sizeof(name)))
			fn = name;
		if (t)
			sim_bug(__FILE__, __LINE__, "rmmod %s: a timer of the module%s%s%s is "
				"still %s after its exit function returned: it would run (or the "
				"timer list would be walked) in unmapped memory: del_timer_sync() "
				"before rmmod", m.name, fn ? " (" : "", fn ? fn : "",
				fn ? "())" : "", running ? "running" : "armed");
	}
}

/*
 * What the exit function left behind when it returned, said later if one of
 * the module's callbacks runs after all: its callbacks still queued, and its
 * kthreads still running.
 */
static void rmmod_leftovers(int idx)
{
	struct module_counts c;
	struct module m;
	struct task_struct *t;
	char threads[96] = "";
	size_t used = 0;

	sim_lock_take(&mod_lock);
	m = modules[idx];
	sim_lock_drop(&mod_lock);
	c = module_counts(m.name);
	if (S.booted) {
		SIM_LOCK();
		list_for_each_entry(t, &S.tasks, all_node)
			if (t->fn && !t->exited && module_has(&m, (uintptr_t)t->fn) &&
			    used < sizeof(threads) - 1)
				used += (size_t)snprintf(threads + used, sizeof(threads) - used,
							 "%s%s", used ? ", " : "", t->comm);
		SIM_UNLOCK();
	}
	sim_lock_take(&mod_lock);
	snprintf(modules[idx].at_rmmod, sizeof(modules[idx].at_rmmod),
		 "when its exit function returned, %ld of its callbacks %s still queued%s%s%s",
		 c.queued - c.invoked, c.queued - c.invoked == 1 ? "was" : "were",
		 threads[0] ? " and its kthread(s) " : "", threads,
		 threads[0] ? " still running" : "");
	modules[idx].phase = EXITED;
	sim_lock_drop(&mod_lock);
}

int rmmod(const char *name)
{
	might_sleep();
	sim_lock_take(&mod_lock);
	struct module *m = module_find(name, true);

	if (!m) {
		sim_lock_drop(&mod_lock);
		return -ENOENT;
	}
	void (*exit_fn)(void) = m->exit;
	int idx = (int)(m - modules);

	m->phase = EXITING;
	sim_lock_drop(&mod_lock);
	if (exit_fn)
		exit_fn();
	count(name, offsetof(struct module_counts, exits));
	rmmod_leftovers(idx);
	check_no_timers_left(idx);
	sim_lock_take(&mod_lock);
	m = &modules[idx];
	module_unmap(m);
	sim_lock_drop(&mod_lock);
	trace_emit(sim_current ? sim_current->cpu : -1, sim_current, TR_MODULE_UNLOAD, name, 0);
	return 0;
}

/* Might @addr be a module's (now or once)? Without mod_lock: a crash may hold it. */
bool module_range_may_hold(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	return a >= atomic_load(&mod_lo) && a < atomic_load(&mod_hi);
}

const char *module_of_address(const void *addr, bool *unloaded)
{
	uintptr_t a = (uintptr_t)addr;
	struct module *m;

	if (a < atomic_load(&mod_lo) || a >= atomic_load(&mod_hi))
		return NULL;
	sim_lock_take(&mod_lock);
	m = module_at_locked(a);
	if (m && unloaded)
		*unloaded = !m->loaded;
	sim_lock_drop(&mod_lock);
	return m ? m->name : NULL;
}

bool module_is_loaded(const char *name)
{
	sim_lock_take(&mod_lock);
	bool loaded = module_find(name, true) != NULL;

	sim_lock_drop(&mod_lock);
	return loaded;
}

void modules_halt(void)
{
	sim_lock_take(&mod_lock);
	for (int i = 0; i < nr_modules; i++)
		if (modules[i].loaded) {
			fprintf(stderr, "warning: module %s still loaded at shutdown; "
				"unmapping it without its exit function\n", modules[i].name);
			module_unmap(&modules[i]);
		}
	sim_lock_drop(&mod_lock);
}

/* The name, looked up: its symbol, else its module's name, else "callback". */
/*
 * A static function has no dynamic symbol for dladdr(): its name comes from
 * the debug information (kcsan_classify.c's lookup; +1, since that lookup takes a
 * return address and steps back one byte). False if there is none.
 */
static bool static_function_name(rcu_callback_t fn, char *out)
{
	char name[NAME_LEN], where[8];

	kcsan_split_pc((uintptr_t)fn + 1, name, sizeof(name), where, sizeof(where));
	if (!name[0] || name[0] == '?' || !strncmp(name, "0x", 2))
		return false;
	snprintf(out, NAME_LEN, "%s", name);
	return true;
}

static void callback_lookup(rcu_callback_t fn, char *out)
{
	bool unloaded = false;
	const char *mod = module_of_address((const void *)(uintptr_t)fn, &unloaded);
	Dl_info di;
	const char *sym = NULL;

	if (__is_kfree_rcu_offset((unsigned long)(uintptr_t)fn))
		sym = "kfree_rcu";   /* an offset, not a function: no symbol to look up */
	else if (!unloaded && dladdr((void *)(uintptr_t)fn, &di))
		sym = di.dli_sname;
	if (!sym && !unloaded && static_function_name(fn, out))
		return;
	snprintf(out, NAME_LEN, "%s", sym ? sym : (mod ? mod : "callback"));
}

const char *callback_name(rcu_callback_t fn)
{
	static _Thread_local char out[NAME_LEN];
	unsigned long gen = atomic_load(&names_gen);
	unsigned int slot = (unsigned int)(((uintptr_t)fn >> 4) % NAME_CACHE);

	pthread_mutex_lock(&name_lock);
	if (name_cache[slot].fn == fn && name_cache[slot].gen == gen) {
		memcpy(out, name_cache[slot].name, NAME_LEN);
		pthread_mutex_unlock(&name_lock);
		return out;
	}
	pthread_mutex_unlock(&name_lock);
	callback_lookup(fn, out);
	pthread_mutex_lock(&name_lock);
	name_cache[slot].fn = fn;
	name_cache[slot].gen = gen;
	memcpy(name_cache[slot].name, out, NAME_LEN);
	pthread_mutex_unlock(&name_lock);
	return out;
}

/* The name of the function at @fn: from @m's symbol table if it lies there. */
static void function_name(const struct module *m, uintptr_t fn, char *buf, size_t len)
{
	if (!m || !module_has(m, fn) || !module_symbol(m, fn, buf, len))
		snprintf(buf, len, "%s", callback_name((rcu_callback_t)fn));
}

/* "queued by ..., while the exit function ran": who queued @q's callback, @cb. */
static void describe_queuer(const struct module *m, const struct queuer *q, uintptr_t cb,
			    char *buf, size_t len)
{
	static const char *const when_of[] = {
		[NOT_EXITING] = "before the exit function began",
		[EXITING] = "while the exit function ran",
		[EXITED] = "after the exit function returned",
	};
	const char *when = when_of[q->phase];
	char fn[64];

	function_name(m, q->fn, fn, sizeof(fn));
	switch (q->kind) {
	case Q_TEST:
		snprintf(buf, len, "queued by the test's own thread %s", when);
		break;
	case Q_IRQ:
		snprintf(buf, len, "queued from an interrupt on CPU %d%s%s%s %s", q->cpu,
			 q->fn ? " (the timer function " : "", q->fn ? fn : "",
			 q->fn ? "())" : "", when);
		break;
	case Q_CALLBACK:
		snprintf(buf, len, "queued by the callback %s()%s (in %s on CPU %d), %s", fn,
			 q->fn == cb ? " itself, re-posting" : "", q->comm, q->cpu, when);
		break;
	default:
		snprintf(buf, len, "queued by %s on CPU %d %s", q->comm, q->cpu, when);
	}
}

/* A callback of the unloaded module @mod is about to run: say whose it was. */
__attribute__((noreturn)) static void late_callback_bug(const struct rcu_head *head,
							 const char *mod)
{
	char who[192] = "", cb[64];
	struct queuer q = { 0 };
	struct module m = { 0 };

	sim_lock_take(&mod_lock);
	for (unsigned int i = 0; i < QUEUERS; i++)
		if (queuers[i].head == head)
			q = queuers[i];
	/* the very instance the callback's code was in: a module may be reloaded */
	struct module *found = module_at_locked((uintptr_t)head->func);

	if (found)
		m = *found;
	sim_lock_drop(&mod_lock);
	function_name(&m, (uintptr_t)head->func, cb, sizeof(cb));
	if (q.head)
		describe_queuer(&m, &q, (uintptr_t)head->func, who, sizeof(who));
	sim_bug(__FILE__, __LINE__, "callback into unloaded module %s: %s()%s%s%s%s", mod, cb,
		who[0] ? ", " : "", who, m.at_rmmod[0] ? "; " : "", m.at_rmmod);
}

rcu_callback_t rcu_invoking_callback(void)
{
	return invoking;
}

/*
 * Debug objects' check, CONFIG_DEBUG_OBJECTS_RCU_HEAD's way: an rcu_head in
 * freed memory has been invoked already (its callback freed it) or was freed
 * while queued; either way a list still links it. Said before its poisoned
 * ->func is called, with who freed it.
 */
static void check_head_not_freed(struct rcu_head *head)
{
	struct kmem_free_site s;
	uintptr_t base;
	char fn[128] = "?", where[PATH_MAX + 16] = "?";

	/* ->func only: taking it off a list may have written ->next already */
	if (!kmem_is_poisoned(&head->func, sizeof(head->func)))
		return;
	if (!kmem_freed_site((uintptr_t)head, &base, &s)) {
		sim_bug(__FILE__, __LINE__, "rcu_invoke_callback(): the rcu_head at %p lies in "
			"freed memory (kfree()'s poison): its callback ran already, or its object "
			"was freed while queued, and a callback list still links it", (void *)head);
	}
	kcsan_split_pc(s.caller, fn, sizeof(fn), where, sizeof(where));
	sim_bug(__FILE__, __LINE__, "rcu_invoke_callback(): the rcu_head at %p lies in freed "
		"memory, kfree()d by %s() at %s in task %s on CPU %d: its callback ran already, "
		"or its object was freed while queued, and a callback list still links it",
		(void *)head, fn, where, s.comm, s.cpu);
}

void rcu_invoke_callback(struct rcu_head *head)
{
	check_head_not_freed(head);
	rcu_callback_t fn = head->func;
	bool unloaded = false;

	if (__is_kfree_rcu_offset((unsigned long)(uintptr_t)fn))
		sim_bug(__FILE__, __LINE__, "a kfree_rcu() callback (offset %lu, not a function) "
			"invoked as a function: it holds where its rcu_head lies in the object to "
			"kfree(), and the RCU core must free that object itself",
			(unsigned long)(uintptr_t)fn);
	const char *mod = module_of_address((const void *)(uintptr_t)fn, &unloaded);

	if (mod && unloaded && S.cfg.check_module_callbacks)
		late_callback_bug(head, mod);
	if (mod && !unloaded)
		count(mod, offsetof(struct module_counts, invoked));
	if (S.cfg.trace)
		trace_emit(sim_current ? sim_current->cpu : -1, sim_current, TR_CB_INVOKE,
			   callback_name(fn), 0);
	rcu_callback_t outer = invoking;

	invoking = fn;
	fn(head);
	invoking = outer;
}

void sim_set_check_module_callbacks(bool on)
{
	SIM_LOCK();
	S.cfg.check_module_callbacks = on;
	SIM_UNLOCK();
}
