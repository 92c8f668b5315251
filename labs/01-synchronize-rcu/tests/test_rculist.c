/*
 * test_rculist.c - rcu_assign_pointer(), list_add_rcu(), list_add_tail_rcu(),
 * list_del_rcu() and list_for_each_entry_rcu() (TODOs 4 to 8).
 *
 * Rule kept here: every schedule that matters is forced (a reader held at a
 * named point while the writer acts), so each test shows its bug on every
 * seed; the seed sweep adds interleavings around the forced ones.
 */
#include <stdio.h>
#include <string.h>
#include "lab1.h"

#define MAX_SEEN 16

/* A reader kthread that walks a list, optionally stopping on one key. */
struct walker {
	struct list_head *head;
	long stop_at;          /* stop at sim_point("walker-on-item") on this key; 0: never */
	long seen[MAX_SEEN];
	long vals[MAX_SEEN];
	int n;
	bool reached_end;      /* the walk came back to the head */
	bool hit_poison;       /* the walk followed a poisoned pointer */
	bool overran;          /* more than MAX_SEEN items: a cycle? */
};

static int walk(void *arg)
{
	struct walker *w = arg;
	struct item *it;

	rcu_read_lock();
	list_for_each_entry_rcu(it, w->head, list) {
		if (lab1_is_list_poison(&it->list)) {
			w->hit_poison = true;
			break;
		}
		if (w->n == MAX_SEEN) {
			w->overran = true;
			break;
		}
		w->seen[w->n] = it->key;
		w->vals[w->n] = it->val;
		w->n++;
		if (it->key == w->stop_at)
			sim_point("walker-on-item");
	}
	if (!w->hit_poison && !w->overran)
		w->reached_end = (&it->list == w->head);
	rcu_read_unlock();
	return 0;
}

static void seen_str(const struct walker *w, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < w->n && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%ld", i ? "," : "", w->seen[i]);
}

static void assert_walk(const struct walker *w, const long *want, int nwant,
			const char *what)
{
	char got[128];

	seen_str(w, got, sizeof(got));
	cr_assert(!w->hit_poison,
		  "seed %llu: %s: the reader followed a poisoned pointer after [%s]: the "
		  "->next of an entry it stood on had been poisoned (list_del_rcu(), TODO 7)",
		  (unsigned long long)sim_seed(), what, got);
	cr_assert(!w->overran, "seed %llu: %s: the walk did not end (a cycle?) [%s]",
		  (unsigned long long)sim_seed(), what, got);
	cr_assert_eq(w->n, nwant,
		     "seed %llu: %s: the reader saw %d items [%s], expected %d; "
		     "check list_add_rcu()/list_add_tail_rcu() (TODO 6) and "
		     "list_for_each_entry_rcu() (TODO 8)",
		     (unsigned long long)sim_seed(), what, w->n, got, nwant);
	for (int i = 0; i < nwant; i++)
		cr_assert_eq(w->seen[i], want[i],
			     "seed %llu: %s: item %d is key %ld, expected %ld (saw [%s])",
			     (unsigned long long)sim_seed(), what, i, w->seen[i], want[i], got);
	cr_assert(w->reached_end, "seed %llu: %s: the walk did not end at the list head",
		  (unsigned long long)sim_seed(), what);
}

/* ---- rculist/add_and_walk ------------------------------------------------ */

static void add_and_walk(void *arg)
{
	LIST_HEAD(head);
	struct item *it[5];
	struct walker w = { .head = &head };

	(void)arg;
	/* tail adds 1, 2, 3; head add 0; tail add 4: the list reads 0 1 2 3 4 */
	for (int k = 1; k <= 3; k++) {
		it[k] = lab1_item(k);
		list_add_tail_rcu(&it[k]->list, &head);
	}
	it[0] = lab1_item(0);
	list_add_rcu(&it[0]->list, &head);
	it[4] = lab1_item(4);
	list_add_tail_rcu(&it[4]->list, &head);

	kthread_stop(kthread_run_on_cpu(walk, &w, (int)(sim_seed() % 4), "walker"));
	assert_walk(&w, (const long[]){ 0, 1, 2, 3, 4 }, 5, "after adds");

	/* delete the middle, the head's first and the last (no reader inside) */
	struct list_head *old_next = it[2]->list.next;

	list_del_rcu(&it[2]->list);
	cr_assert_eq(it[2]->list.next, old_next,
		     "list_del_rcu() changed the deleted entry's ->next, which a reader "
		     "standing on the entry still follows (TODO 7)");
	cr_assert_eq(it[2]->list.prev, LIST_POISON2,
		     "after list_del_rcu() the deleted entry's ->prev is not LIST_POISON2 "
		     "(TODO 7)");
	list_del_rcu(&it[0]->list);
	list_del_rcu(&it[4]->list);
	memset(&w, 0, sizeof(w));
	w.head = &head;
	kthread_stop(kthread_run_on_cpu(walk, &w, (int)((sim_seed() + 1) % 4), "walker"));
	assert_walk(&w, (const long[]){ 1, 3 }, 2, "after deleting 2, 0 and 4");
	cr_assert_eq(head.prev, &it[3]->list,
		     "after list_del_rcu() of the last item, head->prev must be the new last");

	lab1_reclaim(&head, (struct item *[]){ it[0], it[2], it[4] }, 3);
}

SIM_TEST_SEEDS(rculist, add_and_walk, add_and_walk,
	       .description = "list_add_rcu()/list_add_tail_rcu() link in order, "
			      "list_for_each_entry_rcu() walks it, list_del_rcu() unlinks")

/* ---- rculist/reader_on_deleted_item_walks_on ------------------------------- */

static void reader_on_deleted(void *arg)
{
	LIST_HEAD(head);
	struct item *it[6];
	struct walker w = { .head = &head, .stop_at = 3 };
	int cpu = (int)(sim_seed() % 4);

	(void)arg;
	for (int k = 1; k <= 5; k++) {
		it[k] = lab1_item(k);
		list_add_tail_rcu(&it[k]->list, &head);
	}
	struct task_struct *k = sim_kthread_run_held("walker-on-item", walk, &w, cpu, "walker");

	cr_assert_eq(sim_tasks_at_point("walker-on-item"), 1,
		     "seed %llu: the reader never stood on item 3 (it saw %d items): "
		     "check list_add_tail_rcu() (TODO 6) and list_for_each_entry_rcu() (TODO 8)",
		     (unsigned long long)sim_seed(), w.n);

	/* The writer deletes the item the reader stands on, and the next one. */
	list_del_rcu(&it[3]->list);
	list_del_rcu(&it[4]->list);
	cr_assert_eq(it[3]->list.prev, LIST_POISON2,
		     "after list_del_rcu() the deleted entry's ->prev is not LIST_POISON2 "
		     "(TODO 7)");

	sim_release_point("walker-on-item");
	kthread_stop(k);
	/* 4 was deleted after the reader reached 3: 3's ->next still leads
	 * there, and 4's ->next leads on to 5. Both are fine for RCU. */
	assert_walk(&w, (const long[]){ 1, 2, 3, 4, 5 }, 5,
		    "a reader standing on item 3 while 3 and 4 were deleted");

	lab1_reclaim(&head, (struct item *[]){ it[3], it[4] }, 2);
}

SIM_TEST_SEEDS(rculist, reader_on_deleted_item_walks_on, reader_on_deleted,
	       .description = "a reader standing on an item while it is deleted walks on to the "
			      "end")

/* ---- rculist/publication_orders_init_before_link --------------------------- */

static int publisher(void *arg)
{
	struct list_head *head = arg;
	struct item *a = kzalloc(sizeof(*a), GFP_KERNEL);
	struct item *b = kzalloc(sizeof(*b), GFP_KERNEL);

	/* A weakly-ordered CPU: these stores sit in the store buffer until
	 * this CPU's next barrier. Only a release store drains it in time. */
	sim_store(&a->key, 7);
	sim_store(&a->val, 700);
	list_add_rcu(&a->list, head);
	sim_store(&b->key, 8);
	sim_store(&b->val, 800);
	list_add_tail_rcu(&b->list, head);
	sim_point("published"); /* held: no context switch drains it either */
	return 0;
}

static void publication(void *arg)
{
	LIST_HEAD(head);
	struct walker w = { .head = &head };
	int wcpu = (int)(sim_seed() % 4), rcpu = (wcpu + 1 + (int)(sim_seed() / 4) % 3) % 4;

	(void)arg;
	struct task_struct *pub = sim_kthread_run_held("published", publisher, &head, wcpu,
						       "publisher");

	cr_assert_eq(sim_tasks_at_point("published"), 1, "the publisher did not finish publishing");
	kthread_stop(kthread_run_on_cpu(walk, &w, rcpu, "reader"));
	cr_assert_eq(w.n, 2,
		     "seed %llu: the reader found %d items after two were published; check "
		     "__list_add_rcu() (TODO 6) and list_for_each_entry_rcu() (TODO 8)",
		     (unsigned long long)sim_seed(), w.n);
	for (int i = 0; i < 2; i++)
		cr_assert(w.seen[i] == 7 + i && w.vals[i] == 700 + 100 * i,
			  "seed %llu: a reader on CPU %d saw item %d as key %ld val %ld before "
			  "its fields were visible (want %d, %d): the store that linked the item "
			  "became visible before the stores that filled it in (look at the kind of "
			  "store rcu_assign_pointer() is, TODO 4, and at the order of the stores "
			  "in __list_add_rcu(), TODO 6)",
			  (unsigned long long)sim_seed(), rcpu, i, w.seen[i], w.vals[i], 7 + i,
			  700 + 100 * i);
	sim_release_point("published");
	kthread_stop(pub);
	lab1_reclaim(&head, NULL, 0);
}

SIM_TEST_SEEDS(rculist, publication_orders_init_before_link, publication,
	       .description = "a reader never sees an item before its fields are initialised")

/* ---- rculist/whole_walks_during_add_and_del -------------------------------- */

/*
 * One list update on the writer's CPU, stopped before its k-th student
 * access (sim_hold_access()) for k = 1, 2, ... until it no longer stops: at
 * each stop a reader on another CPU walks the WHOLE list. Every walk must
 * be the list before the update or after it, never a mix.
 */
enum lab1_update { ADD_HEAD, ADD_TAIL, DEL_MIDDLE };

struct one_update {
	struct list_head *head;
	struct item *it;
	enum lab1_update what;
	int done;
};

static int do_update(void *arg)
{
	struct one_update *u = arg;

	if (u->what == ADD_HEAD)
		list_add_rcu(&u->it->list, u->head);
	else if (u->what == ADD_TAIL)
		list_add_tail_rcu(&u->it->list, u->head);
	else
		list_del_rcu(&u->it->list);
	WRITE_ONCE(u->done, 1);
	return 0;
}

static bool walk_is(const struct walker *w, const long *want, int n)
{
	if (w->hit_poison || w->overran || !w->reached_end || w->n != n)
		return false;
	for (int i = 0; i < n; i++)
		if (w->seen[i] != want[i] || w->vals[i] != 100 * want[i])
			return false;
	return true;
}

static const char *const update_name[] = { "list_add_rcu() of key 0 at the head",
					  "list_add_tail_rcu() of key 4 at the tail",
					  "list_del_rcu() of key 2" };
static const char *const update_todo[] = { "TODO 6", "TODO 6", "TODO 7" };

/*
 * Returns false once the update ran to its end without reaching access k.
 * With @drain >= 0, the stopped updater's @drain-th newest buffered store
 * (0: the newest) becomes visible first, alone; *@drained says whether it
 * had that many.
 */
static bool walk_during_update(enum lab1_update what, long k, int wcpu, int rcpu, int drain,
			       bool *drained)
{
	static const long before[3][3] = { { 1, 2, 3 }, { 1, 2, 3 }, { 1, 2, 3 } };
	static const long after[3][4] = { { 0, 1, 2, 3 }, { 1, 2, 3, 4 }, { 1, 3 } };
	static const int nafter[3] = { 4, 4, 2 };
	LIST_HEAD(head);
	struct item *it[5];
	struct walker w = { .head = &head };
	struct one_update u = { .head = &head, .what = what };
	char got[128];

	for (int i = 1; i <= 3; i++) {
		it[i] = lab1_item(i);
		list_add_tail_rcu(&it[i]->list, &head);
	}
	synchronize_rcu(); /* the setup's stores are visible everywhere */
	u.it = what == DEL_MIDDLE ? it[2] : lab1_item(what == ADD_HEAD ? 0 : 4);
	sim_hold_access(wcpu, k);
	struct task_struct *uk = kthread_run_on_cpu(do_update, &u, wcpu, "updater");

	sim_run_until_idle();
	bool stopped = !READ_ONCE(u.done);
	bool early = drain >= 0 && stopped && sim_commit_store(wcpu, drain);
	char store[64] = "";

	if (drained)
		*drained = early;
	if (early)
		snprintf(store, sizeof(store), ", its %s buffered store visible before the others",
			 drain == 0 ? "newest" : drain == 1 ? "second newest" : "third newest or older");
	kthread_stop(kthread_run_on_cpu(walk, &w, rcpu, "reader"));
	sim_release_point(SIM_ACCESS_POINT);
	kthread_stop(uk);
	seen_str(&w, got, sizeof(got));
	cr_assert(walk_is(&w, before[what], 3) || walk_is(&w, after[what], nafter[what]),
		  "seed %llu: a reader on CPU %d walking the whole list 1,2,3 while %s ran on "
		  "CPU %d (stopped before its student access %ld%s) saw [%s]%s%s: neither the "
		  "list before nor the list after (%s%s)",
		  (unsigned long long)sim_seed(), rcpu, update_name[what], wcpu, k, store, got,
		  w.hit_poison ? ", then a poisoned or NULL ->next" : "",
		  w.overran ? ", then more than 16 items (a cycle?)" : "", update_todo[what],
		  early ? ", and TODO 4: on a weakly-ordered CPU the stores before the one "
			  "that publishes may become visible after it, unless a barrier stands "
			  "between them; a reader then finds the entry before its ->next"
			: ": what a reader can see between two stores of the update");
	/* item 2 is off the list only when the update deleted it */
	lab1_reclaim(&head, (struct item *[]){ it[2] }, what == DEL_MIDDLE ? 1 : 0);
	return stopped;
}

static void whole_walks(void *arg)
{
	int wcpu = 1 + (int)(sim_seed() % 3), rcpu = (wcpu % 3) + 1;

	(void)arg;
	for (int what = ADD_HEAD; what <= DEL_MIDDLE; what++)
		for (long k = 1; k < 200 && walk_during_update(what, k, wcpu, rcpu, -1, NULL); k++)
			;
}

SIM_TEST(rculist, whole_walks_during_add_and_del,
	 .description = "a reader walking the whole list while list_add_rcu(), "
			"list_add_tail_rcu() or list_del_rcu() runs on another CPU sees the "
			"list before or after, whatever access the update stopped at")
{
	struct sim_config cfg = sim_default_config();

	for (uint64_t seed = 1; seed <= 3; seed++) {
		cfg.seed = seed;
		sim_boot(&cfg);
		whole_walks(NULL);
		cr_assert_eq(sim_halt(), 0, "seed %llu: kmalloc()ed objects never kfree()d",
			     (unsigned long long)seed);
	}
}

/* ---- rculist/publication_survives_any_drain_order -------------------------- */

/*
 * As whole_walks, but at each stop one of the updater's buffered stores
 * becomes visible to the reader before the others, each in turn: a
 * weakly-ordered CPU drains its store buffer in any order between two
 * barriers. The list must still read as before or after the update.
 */
static void walks_store_by_store(void)
{
	int wcpu = 1 + (int)(sim_seed() % 3), rcpu = (wcpu % 3) + 1;
	long drains = 0;

	for (int what = ADD_HEAD; what <= DEL_MIDDLE; what++)
		for (long k = 1; k < 200; k++) {
			bool drained = true, stopped = true;

			for (int i = 0; stopped && drained; i++) {
				stopped = walk_during_update(what, k, wcpu, rcpu, i, &drained);
				drains += drained;
			}
			if (!stopped)
				break;
		}
	cr_log_info("seed %llu: %ld stops with a store drained first",
		    (unsigned long long)sim_seed(), drains);
	/* without the instrumentation (asan, tsan) nothing is buffered */
	cr_assert(drains > 0 || !sim_kcsan_enabled(),
		  "seed %llu: the updates left no store in the buffer at any stop: do "
		  "__list_add_rcu() and list_del_rcu() store anything (TODOs 6, 7)?",
		  (unsigned long long)sim_seed());
}

SIM_TEST(rculist, publication_survives_any_drain_order,
	 .description = "whatever store of list_add_rcu(), list_add_tail_rcu() or "
			"list_del_rcu() another CPU sees first, a reader sees the list before "
			"or after the update")
{
	struct sim_config cfg = sim_forced_config();

	cfg.weak_memory = true;   /* what this test is about, whatever the environment says */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		cfg.seed = seed;
		sim_boot(&cfg);
		walks_store_by_store();
		cr_assert_eq(sim_halt(), 0, "seed %llu: kmalloc()ed objects never kfree()d",
			     (unsigned long long)seed);
	}
}

/* ---- rculist/readers_subscribe_with_marked_loads --------------------------- */

/*
 * A reader walking 1,2,3 is stopped in the middle of its k-th student
 * access, for k = 1, 2, ... until it no longer stops (KCSAN delays an access
 * the same way to see who else touches its bytes meanwhile). While it is
 * stopped, a writer on another CPU publishes a new entry after the head and
 * after each of 1, 2 and 3: whichever ->next the reader was loading is
 * published at that instant. Only a marked load (rcu_dereference(), TODO 5)
 * may overlap a publication; a plain one is a data race, reported with both
 * accesses, and on a weakly-ordered CPU it may see the new entry before the
 * stores that filled it in.
 */
struct inserter {
	struct list_head *after[4]; /* the head, then items 1, 2, 3 */
	struct item *new[4];
};

static int insert_after_each(void *arg)
{
	struct inserter *in = arg;

	for (int i = 0; i < 4; i++)
		list_add_rcu(&in->new[i]->list, in->after[i]);
	return 0;
}

/* Returns false once the reader walked to its end without reaching access k. */
static bool walk_during_publication(long k, int rcpu, int wcpu)
{
	LIST_HEAD(head);
	struct walker w = { .head = &head };
	struct inserter in = { .after = { &head } };
	char got[128];

	for (int i = 1; i <= 3; i++) {
		struct item *it = lab1_item(i);

		list_add_tail_rcu(&it->list, &head);
		in.after[i] = &it->list;
	}
	for (int i = 0; i < 4; i++)
		in.new[i] = lab1_item(10 + i);
	synchronize_rcu(); /* the setup's stores are visible everywhere */
	sim_hold_access(rcpu, k);
	struct task_struct *r = kthread_run_on_cpu(walk, &w, rcpu, "reader");

	sim_run_until_idle();
	bool stopped = sim_tasks_at_point(SIM_ACCESS_POINT) == 1;

	kthread_stop(kthread_run_on_cpu(insert_after_each, &in, wcpu, "writer"));
	sim_release_point(SIM_ACCESS_POINT);
	kthread_stop(r);
	seen_str(&w, got, sizeof(got));
	cr_assert(!w.hit_poison && !w.overran && w.reached_end,
		  "seed %llu: a reader on CPU %d, stopped in its student access %ld while a "
		  "writer on CPU %d published four entries, saw [%s] and did not walk back to "
		  "the head (list_for_each_entry_rcu(), TODO 8)",
		  (unsigned long long)sim_seed(), rcpu, k, wcpu, got);
	for (int i = 0; i < w.n; i++)
		cr_assert_eq(w.vals[i], 100 * w.seen[i],
			     "seed %llu: a reader on CPU %d saw item %ld with val %ld, not %ld: it "
			     "found the entry before the stores that filled it in (TODOs 4, 5)",
			     (unsigned long long)sim_seed(), rcpu, w.seen[i], w.vals[i],
			     100 * w.seen[i]);
	lab1_reclaim(&head, NULL, 0);
	return stopped;
}

SIM_TEST(rculist, readers_subscribe_with_marked_loads,
	 .description = "every load of a ->next that a writer may publish at that instant is "
			"a marked load (rcu_dereference()): a plain one is a data race")
{
	struct sim_config cfg = sim_forced_config();

	cfg.race_watch = true;    /* what this test is about, whatever the environment says */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		int rcpu = 1 + (int)(seed % 3), wcpu = (rcpu % 3) + 1;

		long k = 1;

		cfg.seed = seed;
		sim_boot(&cfg);
		while (k < 200 && walk_during_publication(k, rcpu, wcpu))
			k++;
		/* without the instrumentation (asan, tsan) no access ever stops */
		cr_assert(k > 4 || !sim_kcsan_enabled(),
			  "seed %llu: the reader stopped at only %ld of its accesses in a walk "
			  "of three items: does list_for_each_entry_rcu() load each ->next "
			  "(TODO 8)?", (unsigned long long)seed, k - 1);
		cr_log_info("seed %llu: the reader stopped at each of its %ld accesses",
			    (unsigned long long)seed, k - 1);
		cr_assert_eq(sim_halt(), 0, "seed %llu: kmalloc()ed objects never kfree()d",
			     (unsigned long long)seed);
	}
}
