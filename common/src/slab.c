/*
 * slab.c - kmalloc() and kfree() with poisoning and a quarantine.
 *
 * Rule kept here: a freed object is poisoned and parked in a FIFO quarantine
 * of QUARANTINE objects before its memory is really freed, so that a reader
 * that arrives late finds POISON_FREE rather than a new owner's data; and
 * every object is on the live list until kfree(), so shutdown can name leaks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/slab.h>
#include <linux/bug.h>
#include "internal.h"

#define QUARANTINE 1024
#define KMALLOC_MAGIC 0x6b6d616c6c6f6321ull
#define KFREE_MAGIC 0x6b667265656421ffull

struct kmem_hdr {
	uint64_t magic;
	size_t size;
	struct kmem_hdr *prev, *next; /* live list */
	struct kmem_free_site freed;  /* once kfree()d: who, for a crash report */
	_Alignas(16) unsigned char data[];
};

static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmem_hdr live = { .prev = &live, .next = &live };
static long nr_live;
static struct kmem_hdr *quarantine[QUARANTINE];
static int q_head, q_len;

void slab_reset(void)
{
	pthread_mutex_lock(&slab_lock);
	live.prev = live.next = &live;
	nr_live = 0;
	q_head = q_len = 0;
	pthread_mutex_unlock(&slab_lock);
}

void *kmalloc(size_t size, gfp_t flags)
{
	struct kmem_hdr *h = malloc(sizeof(*h) + size);

	if (!h)
		sim_bug(__FILE__, __LINE__, "kmalloc(%zu): out of memory", size);
	h->magic = KMALLOC_MAGIC;
	h->size = size;
	if (flags & __GFP_ZERO)
		memset(h->data, 0, size);
	pthread_mutex_lock(&slab_lock);
	h->next = live.next;
	h->prev = &live;
	live.next->prev = h;
	live.next = h;
	nr_live++;
	pthread_mutex_unlock(&slab_lock);
	return h->data;
}

void *kzalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags | __GFP_ZERO);
}

/* Who frees: the caller, its task and CPU, and the task's last scheduling point. */
static void note_free_site(struct kmem_free_site *s, uintptr_t caller)
{
	struct task_struct *t = sim_current;

	s->caller = caller;
	s->cpu = t ? t->cpu : -1;
	snprintf(s->comm, sizeof(s->comm), "%s", t ? t->comm : "(no task)");
	/* a module's __FILE__ may be unmapped by the time a crash reads it */
	s->last_file = t && !module_range_may_hold(t->file) ? t->file : NULL;
	s->last_line = t ? t->line : 0;
}

void kfree(const void *p)
{
	if (!p)
		return;
	struct kmem_hdr *h = container_of((void *)p, struct kmem_hdr, data);

	if (h->magic == KFREE_MAGIC)
		sim_bug(__FILE__, __LINE__, "kfree(): double free of %p", p);
	if (h->magic != KMALLOC_MAGIC)
		sim_bug(__FILE__, __LINE__, "kfree(): %p was not returned by kmalloc()", p);
	kcsan_forget_range(p, h->size); /* a buffered store must not land on freed memory */
	note_free_site(&h->freed, (uintptr_t)__builtin_return_address(0));
	pthread_mutex_lock(&slab_lock);
	h->prev->next = h->next;
	h->next->prev = h->prev;
	nr_live--;
	h->magic = KFREE_MAGIC;
	memset(h->data, POISON_FREE, h->size);
	struct kmem_hdr *evict = NULL;

	if (q_len == QUARANTINE) {
		evict = quarantine[q_head];
		q_head = (q_head + 1) % QUARANTINE;
		q_len--;
	}
	quarantine[(q_head + q_len) % QUARANTINE] = h;
	q_len++;
	pthread_mutex_unlock(&slab_lock);
	free(evict);
}

/* If @addr lies in an object still in quarantine: where it starts, and who freed it. */
static bool freed_site_locked(uintptr_t addr, uintptr_t *base, struct kmem_free_site *out)
{
	bool found = false;

	sim_assert_held(&slab_lock);
	for (int i = 0; i < q_len && !found; i++) {
		struct kmem_hdr *h = quarantine[(q_head + i) % QUARANTINE];
		uintptr_t d = (uintptr_t)h->data;

		if (addr >= d && addr < d + h->size) {
			*base = d;
			*out = h->freed;
			found = true;
		}
	}
	return found;
}

bool kmem_freed_site(uintptr_t addr, uintptr_t *base, struct kmem_free_site *out)
{
	sim_lock_take(&slab_lock);
	bool found = freed_site_locked(addr, base, out);

	sim_lock_drop(&slab_lock);
	return found;
}

/* For a crash handler: false rather than wait for a lock the crash may hold. */
bool kmem_freed_site_nowait(uintptr_t addr, uintptr_t *base, struct kmem_free_site *out)
{
	if (!sim_lock_try(&slab_lock))
		return false;
	bool found = freed_site_locked(addr, base, out);

	sim_lock_drop(&slab_lock);
	return found;
}

bool kmem_is_poisoned(const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (__atomic_load_n(&b[i], __ATOMIC_RELAXED) != POISON_FREE)
			return false;
	return len > 0;
}

long kmem_live_objects(void)
{
	pthread_mutex_lock(&slab_lock);
	long n = nr_live;

	pthread_mutex_unlock(&slab_lock);
	return n;
}

/* Shutdown: empty the quarantine, report and free what was never freed. */
long slab_halt(void)
{
	long leaks = 0;

	pthread_mutex_lock(&slab_lock);
	while (q_len) {
		free(quarantine[q_head]);
		q_head = (q_head + 1) % QUARANTINE;
		q_len--;
	}
	while (live.next != &live) {
		struct kmem_hdr *h = live.next;

		fprintf(stderr, "memory leak: %zu-byte object at %p was kmalloc()ed and "
			"never kfree()d\n", h->size, (void *)h->data);
		live.next = h->next;
		free(h);
		leaks++;
	}
	live.prev = &live;
	nr_live = 0;
	pthread_mutex_unlock(&slab_lock);
	return leaks;
}
