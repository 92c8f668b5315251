/*
 * test_reclaim.c - list_del_rcu(); synchronize_rcu(); kfree(); - the whole
 * point of RCU: a reader never reads freed memory.
 *
 * Rule kept here: kfree() poisons what it frees (kmem_is_poisoned()), so a
 * reader that reads an item after it was freed sees it at once; the forced
 * schedule makes that reader exist on every seed, and the bug demo shows
 * what happens without the grace period.
 */
#include <string.h>
#include "lab1.h"

#define SEED ((unsigned long long)sim_seed())

/* A reader that finds @key, stops holding it, then reads it again. */
struct holder {
	struct list_head *head;
	long key;
	bool found;
	long key_after;   /* ->key read after the hold */
	bool poisoned;    /* the item was poisoned (freed) when read after the hold */
};

static int hold_item(void *arg)
{
	struct holder *h = arg;
	struct item *it, *mine = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(it, h->head, list) {
		if (lab1_is_list_poison(&it->list))
			break;
		if (it->key == h->key) {
			mine = it;
			break;
		}
	}
	if (mine) {
		h->found = true;
		sim_point("reader-has-item");
		h->poisoned = kmem_is_poisoned(mine, LAB1_FIELDS);
		h->key_after = READ_ONCE(mine->key);
	}
	rcu_read_unlock();
	return 0;
}

struct remover {
	struct item *victim;
	bool grace_period; /* false: the bug demo, kfree() at once */
	int done;
};

static int remove_item(void *arg)
{
	struct remover *r = arg;

	list_del_rcu(&r->victim->list);
	if (r->grace_period)
		synchronize_rcu();
	kfree(r->victim);
	WRITE_ONCE(r->done, 1);
	return 0;
}

static void del_and_free(bool grace_period)
{
	LIST_HEAD(head);
	struct item *it[4];
	struct holder h = { .head = &head, .key = 2 };
	struct remover r = { .grace_period = grace_period };
	int rcpu = (int)(sim_seed() % 4);
	int ucpu = (rcpu + 1 + (int)(sim_seed() / 4) % 3) % 4;

	for (int k = 1; k <= 3; k++) {
		it[k] = lab1_item(k);
		list_add_tail_rcu(&it[k]->list, &head);
	}
	r.victim = it[2];
	struct task_struct *rk = sim_kthread_run_held("reader-has-item", hold_item, &h, rcpu,
						      "reader");

	cr_assert(h.found && sim_tasks_at_point("reader-has-item") == 1,
		  "seed %llu: the reader did not find item 2 on the list: check "
		  "list_add_tail_rcu() (TODO 6) and list_for_each_entry_rcu() (TODO 8)", SEED);
	struct task_struct *uk = kthread_run_on_cpu(remove_item, &r, ucpu, "remover");

	sim_run_until_idle();
	if (grace_period)
		cr_assert(!READ_ONCE(r.done),
			  "seed %llu: the remover on CPU %d got past synchronize_rcu() and freed "
			  "item 2 while the reader on CPU %d still held it", SEED, ucpu, rcpu);
	sim_release_point("reader-has-item");
	kthread_stop(rk);
	kthread_stop(uk);
	cr_assert(READ_ONCE(r.done), "the remover did not finish");
	if (grace_period) {
		cr_assert(!h.poisoned && h.key_after == 2,
			  "seed %llu: the reader on CPU %d read freed memory (key %ld, poisoned: "
			  "%d): synchronize_rcu() on CPU %d returned before it left its "
			  "read-side critical section", SEED, rcpu, h.key_after, h.poisoned, ucpu);
	} else {
		/* The bug, made visible: without a grace period the reader's
		 * item is freed (and poisoned) under it. */
		cr_assert(h.poisoned,
			  "seed %llu: expected the reader to see the item freed under it "
			  "(kfree() without synchronize_rcu()), but it read key %ld", SEED,
			  h.key_after);
		cr_log_info("bug demo, seed %llu: without a grace period the reader read "
			    "key %#lx from freed memory", SEED, (unsigned long)h.key_after);
	}
	lab1_free_all(&head);
}

static void with_grace_period(void *arg)
{
	(void)arg;
	del_and_free(true);
}

static void without_grace_period(void *arg)
{
	(void)arg;
	del_and_free(false);
}

SIM_TEST_SEEDS(reclaim, no_reader_sees_freed_item, with_grace_period,
	       .description = "list_del_rcu(); synchronize_rcu(); kfree(); never frees under a "
			      "reader")

SIM_TEST_SEEDS(reclaim, kfree_without_grace_period_is_seen, without_grace_period,
	       .description = "the bug made visible: kfree() right after list_del_rcu() "
			      "frees an item a reader still holds")

/* ---- reclaim/free_running_sweep: no holds, every interleaving the seeds give */

#define SWEEP_ITEMS 6
#define SWEEP_READERS 3
#define SWEEP_WALKS 12

struct sweep {
	struct list_head head;
	long items_seen;
	long poison_seen;
	int bad_key;
};

static int sweep_reader(void *arg)
{
	struct sweep *s = arg;
	struct item *it;

	for (int n = 0; n < SWEEP_WALKS; n++) {
		rcu_read_lock();
		list_for_each_entry_rcu(it, &s->head, list) {
			if (lab1_is_list_poison(&it->list)) {
				s->poison_seen++;
				break;
			}
			cpu_relax(); /* let the writer in between the loads */
			if (kmem_is_poisoned(it, LAB1_FIELDS)) {
				s->poison_seen++;
				break;
			}
			if (it->val != 100 * it->key)
				s->bad_key++;
			s->items_seen++;
		}
		rcu_read_unlock();
		cond_resched();
	}
	return 0;
}

static int sweep_writer(void *arg)
{
	struct sweep *s = arg;
	struct item *it;

	while (!list_empty(&s->head)) {
		it = list_first_entry(&s->head, struct item, list);
		list_del_rcu(&it->list);
		synchronize_rcu();
		kfree(it);
		cond_resched();
	}
	return 0;
}

static void free_running(void *arg)
{
	struct sweep s;
	struct task_struct *k[SWEEP_READERS + 1];

	(void)arg;
	memset(&s, 0, sizeof(s));
	INIT_LIST_HEAD(&s.head);
	for (int key = 1; key <= SWEEP_ITEMS; key++)
		list_add_tail_rcu(&lab1_item(key)->list, &s.head);
	for (int i = 0; i < SWEEP_READERS; i++)
		k[i] = kthread_run_on_cpu(sweep_reader, &s, i, "reader/%u");
	k[SWEEP_READERS] = kthread_run_on_cpu(sweep_writer, &s, SWEEP_READERS, "writer");
	for (int i = 0; i <= SWEEP_READERS; i++)
		kthread_stop(k[i]);
	cr_assert(s.items_seen > 0,
		  "seed %llu: the readers never saw an item: check list_add_tail_rcu() and "
		  "list_for_each_entry_rcu()", SEED);
	cr_assert_eq(s.poison_seen, 0,
		     "seed %llu: readers read freed memory %ld times (of %ld items read)",
		     SEED, s.poison_seen, s.items_seen);
	cr_assert_eq(s.bad_key, 0, "seed %llu: readers saw %d half-initialised items", SEED,
		     s.bad_key);
	lab1_free_all(&s.head);
}

SIM_TEST_SEEDS(reclaim, free_running_sweep, free_running,
	       .description = "readers walking while a writer deletes and frees: no poison, any "
			      "seed")
