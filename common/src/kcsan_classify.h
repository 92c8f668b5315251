/*
 * kcsan_classify.h - which code is the student's (kcsan_classify.c): the
 * per-PC cache kcsan.c's hooks probe on every access.
 *
 * Rule kept here: kc_lookup() is the only way in on the hot path, one
 * lock-free hash probe a hit; a miss classifies under kc_lock.
 */
#ifndef KCSAN_CLASSIFY_H
#define KCSAN_CLASSIFY_H

#include <stdatomic.h>
#include <stdint.h>

enum kc_class { KC_UNKNOWN, KC_STUDENT, KC_TEST, KC_HEADER, KC_NONE };

#define KC_CACHE (1u << 16)
#define KC_FILES 512

/* A classified PC: its class, and the file (an index in kc_files) and line. */
struct kc_slot {
	_Atomic uintptr_t pc;
	unsigned char cls;
	unsigned short file;
	int line;
};

extern struct kc_slot kc_cache[KC_CACHE];
extern char *kc_files[KC_FILES];

/* The miss path of kc_lookup(): classify @pc and cache it. */
struct kc_slot *kcsan_classify_slow(uintptr_t pc);

static inline struct kc_slot *slot_of(uintptr_t pc)
{
	uint32_t h = (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) & (KC_CACHE - 1);

	for (unsigned i = 0; i < 64; i++) {
		struct kc_slot *s = &kc_cache[(h + i) & (KC_CACHE - 1)];
		uintptr_t v = atomic_load_explicit(&s->pc, memory_order_acquire);

		if (v == pc || v == 0)
			return s;
	}
	return NULL;
}

static inline struct kc_slot *kc_lookup(uintptr_t pc)
{
	struct kc_slot *s = slot_of(pc);

	if (s && atomic_load_explicit(&s->pc, memory_order_acquire) == pc)
		return s;
	return kcsan_classify_slow(pc);
}

#endif
