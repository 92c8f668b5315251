/*
 * test_hotplug.c - rcu_barrier() and CPU hotplug: an offline CPU gets no
 * cross-call, so the barrier links its marker itself; a dead CPU's
 * callbacks move, marker and all, in order, behind a live CPU's; a dead
 * CPU's callbacks moved while a barrier runs get a marker from the move.
 * And a parallel-mode churn of barriers while CPUs go down and up.
 */
#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <sim/test.h>
#include "lab6_util.h"

static struct rec_cb dead_cbs[3];

static void note_dead_cbs_ran(struct barrier_caller *bc)
{
	for (int i = 0; i < 3; i++)
		if (READ_ONCE(dead_cbs[i].times) != 1)
			bc->early = 1;
}

/* CPU 3 is offline, its callbacks not yet moved (the hotplug core held at CPUHP_DEAD_POINT). */
static void offline_gets_marker(void *arg)
{
	static struct barrier_caller bc;
	static struct downer d;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	queue_ready_held(3, dead_cbs, 3);
	sim_hold_point(CPUHP_DEAD_POINT);
	downer_start(&d, 3, 1);
	sim_run_until_idle();
	cr_assert(!cpu_online(3) && sim_tasks_at_point(CPUHP_DEAD_POINT) == 1);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_dead_cbs_ran };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() returned while 3 callbacks queued on CPU 3 before it "
		  "waited there: CPU 3 had gone offline, and the hotplug callback that moves its "
		  "list had not run yet. An offline CPU takes no cross-call "
		  "(smp_call_function_single() returns -ENXIO): the barrier links its marker "
		  "itself, from its own CPU, under barrier_lock (TODO 7)",
		  (unsigned long long)sim_seed());
	trace_mark("CPU 3's hotplug callback runs");
	sim_release_point(CPUHP_DEAD_POINT);
	sim_run_until_idle();
	cr_assert(READ_ONCE(bc.returned) && !bc.early, "rcu_barrier() did not return once CPU 3's "
		  "callbacks had moved and run, or returned before (TODO 7, 8)");
	cr_assert_eq(d.ret, 0);
	downer_stop(&d);
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(hotplug, offline_cpu_callbacks_get_a_marker)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, offline_gets_marker, NULL);
}

/* CPU 3 holds 3 ready callbacks and the barrier's marker behind them, then goes down. */
static void migrate_with_marker(void *arg)
{
	static struct barrier_caller bc;
	static struct downer d;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	queue_ready_held(3, dead_cbs, 3);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_dead_cbs_ran };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	cr_assert(!READ_ONCE(bc.returned), "rcu_barrier() returned while CPU 3's ready callbacks, "
		  "queued before it, were held (TODO 6, 7)");
	trace_mark("CPU 3 goes down");
	downer_start(&d, 3, 1);
	sim_run_until_idle();
	cr_assert(!cpu_online(3) && d.ret == 0, "cpu_down(3) did not complete");
	cr_assert(READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() never returned after CPU 3, which held its marker "
		  "behind 3 ready callbacks, went offline: CPU 3's list, marker included, stayed "
		  "with the dead CPU, where no kthread invokes it (TODO 8: rcutree_dead_cpu(), "
		  "rcu_segcblist_merge())", (unsigned long long)sim_seed());
	cr_assert(!bc.early, "rcu_barrier() returned before CPU 3's callbacks had run: its "
		  "marker must stay behind them when they move (TODO 8)");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(dead_cbs[i].ran_on, 1, "a callback of dead CPU 3 ran on CPU %d: they "
			     "move to the CPU that runs the hotplug callback (CPU 1 here: the "
			     "caller of cpu_down()) (TODO 8)", dead_cbs[i].ran_on);
		cr_assert(i == 0 || dead_cbs[i].seq > dead_cbs[i - 1].seq,
			  "dead CPU 3's callbacks ran out of order after the move (TODO 8)");
	}
	downer_stop(&d);
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(hotplug, callbacks_migrate_with_their_marker)
{
	struct sim_config cfg = sim_default_config();

	sim_run_seeds(&cfg, migrate_with_marker, NULL);
}

/*
 * hotplug/migration_entrains_for_a_barrier_in_progress: a reader holds
 * every grace period up. The barrier, on CPU 0, has seen to CPUs 0 and 1
 * (no callbacks) and is stopped just after its cross-call to CPU 2 returned;
 * then CPU 3 goes down and its callbacks move to CPU 1, whose passes are
 * held. The barrier goes on: CPU 3 is empty now.
 */
static int reader_fn(void *arg)
{
	(void)arg;
	rcu_read_lock();
	sim_point("lab6_reader");
	rcu_read_unlock();
	return 0;
}

static struct rec_cb on2, on3[2];

static void note_moved_ran(struct barrier_caller *bc)
{
	bc->early = READ_ONCE(on3[0].times) != 1 || READ_ONCE(on3[1].times) != 1 ||
		    READ_ONCE(on2.times) != 1;
}

static void migration_entrains(void *arg)
{
	static struct barrier_caller bc;
	static struct downer d;
	struct task_struct *reader;
	long gps;

	(void)arg;
	rec_cb_reset();
	rcu_callbacks_init();
	sim_hold_point("lab6_reader");
	reader = kthread_run_on_cpu(reader_fn, NULL, 4, "reader");
	sim_run_until_idle();
	rec_cb_init(&on2, 2);
	gps = trace_count(TR_GP_START);
	queue_hurry_on(2, &on2.rh, rec_cb_func);
	for (int i = 0; i < 2; i++) {
		rec_cb_init(&on3[i], 3);
		queue_hurry_on(3, &on3[i].rh, rec_cb_func);
	}
	sim_run_until_idle();
	expect_gp_started(gps, 2);
	sim_hold_point(SMP_CALL_RETURN_POINT);
	bc = (struct barrier_caller){ .do_barrier = rcu_barrier, .at_return = note_moved_ran };
	barrier_caller_start(&bc, 0);
	sim_run_until_idle();
	trace_mark("CPU 3 goes down");
	sim_hold_point(pass_point(1));
	downer_start(&d, 3, 1);
	sim_run_until_idle();
	cr_assert(!cpu_online(3) && d.ret == 0, "cpu_down(3) did not complete");
	sim_release_point(SMP_CALL_RETURN_POINT);
	trace_mark("the reader leaves");
	sim_release_point("lab6_reader");
	sim_run_until_idle();
	kthread_stop(reader);
	cr_assert(!READ_ONCE(bc.returned),
		  "seed %llu: rcu_barrier() returned while the 2 callbacks CPU 3 had queued before "
		  "it were still waiting (moved to CPU 1, whose passes are held): CPU 3 went "
		  "offline while the barrier ran but before it reached CPU 3, and the move left "
		  "them without a marker: the barrier had already seen to CPU 1, and found CPU 3 "
		  "empty (TODO 8: what rcutree_dead_cpu() owes a barrier in progress)",
		  (unsigned long long)sim_seed());
	sim_release_point(pass_point(1));
	sim_run_until_idle();
	cr_assert(READ_ONCE(bc.returned) && !bc.early, "rcu_barrier() did not return once every "
		  "callback had run, or returned before (TODO 7, 8)");
	downer_stop(&d);
	barrier_caller_stop(&bc);
	lab6_end();
}

SIM_TEST(hotplug, migration_entrains_for_a_barrier_in_progress)
{
	struct sim_config cfg = sim_default_config();

	/* A reader held inside keeps its grace period waiting: a forced schedule. */
	cfg.mode = SIM_DETERMINISTIC;

	cfg.nr_cpus = 5;
	sim_run_seeds(&cfg, migration_entrains, NULL);
}

/* ---- parallel mode: barriers while CPUs 2 and 3 go down and come back ------ */

#define CHURN_CBS 96
#define CHURN_EVERY 24
#define CHURN_HOTPLUGS 6

struct counted {
	struct rcu_head rh;
	atomic_t *freed;
};

static void counted_free(struct rcu_head *rh)
{
	struct counted *c = container_of(rh, struct counted, rh);

	atomic_inc(c->freed);
	kfree(c);
}

struct churner {
	atomic_t freed;
	int early;
};

/* Queue lazy, hurried and kfree_rcu() callbacks; a barrier every CHURN_EVERY. */
static int churner_fn(void *arg)
{
	struct churner *ch = arg;

	for (int i = 1; i <= CHURN_CBS; i++) {
		struct counted *c = kmalloc(sizeof(*c), GFP_KERNEL);

		c->freed = &ch->freed;
		if (i % 3 == 0)
			call_rcu_hurry(&c->rh, counted_free);
		else
			call_rcu(&c->rh, counted_free);
		c = kmalloc(sizeof(*c), GFP_KERNEL);
		kfree_rcu(c, rh);
		if (i % CHURN_EVERY == 0) {
			rcu_barrier();
			if (atomic_read(&ch->freed) != i)
				ch->early++;
		}
		if (i % 5 == 0)
			schedule();
	}
	return 0;
}

struct plugger {
	int bad;
};

static int plugger_fn(void *arg)
{
	struct plugger *p = arg;

	for (int i = 0; i < CHURN_HOTPLUGS; i++) {
		unsigned int cpu = 2 + i % 2;

		if (cpu_down(cpu) || cpu_up(cpu))
			p->bad++;
		schedule();
	}
	return 0;
}

static void parallel_churn(void *arg)
{
	static struct churner ch[2];
	struct plugger pl = { 0 };
	struct task_struct *k[3];

	(void)arg;
	rcu_callbacks_init();
	for (int i = 0; i < 2; i++) {
		atomic_set(&ch[i].freed, 0);
		ch[i].early = 0;
		k[i] = kthread_run_on_cpu(churner_fn, &ch[i], (unsigned int)i, "churner/%u");
	}
	k[2] = kthread_run_on_cpu(plugger_fn, &pl, 0, "plugger");
	for (int i = 0; i < 3; i++)
		kthread_stop(k[i]);
	cr_assert_eq(pl.bad, 0, "cpu_down()/cpu_up() failed %d time(s)", pl.bad);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ch[i].early, 0, "CPU %d: rcu_barrier() returned %d time(s) before the "
			     "callbacks its caller had queued before it had run, while CPUs 2 and "
			     "3 went down and up (TODO 6-8)", i, ch[i].early);
	migrate_to_cpu(1);
	rcu_barrier();
	migrate_to_cpu(-1);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(atomic_read(&ch[i].freed), CHURN_CBS);
	lab6_end();
}

SIM_TEST(stress, parallel_barriers_during_hotplug, .timeout = 120)
{
	struct sim_config cfg = sim_default_config();

	cfg.mode = SIM_PARALLEL;
	sim_run_seeds(&cfg, parallel_churn, NULL);
}
