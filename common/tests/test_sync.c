/* Spinlocks, mutexes, completions, wait queues and atomics. */
#include <linux/kthread.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/completion.h>
#include <linux/wait.h>
#include <linux/atomic.h>
#include <linux/smp.h>
#include <sim/test.h>

#define WORKERS 4
#define ROUNDS 200

static DEFINE_SPINLOCK(counter_lock);
static DEFINE_MUTEX(counter_mutex);
static long counter;
static int inside, max_inside;

static void critical_section(void)
{
	int now = ++inside;

	if (now > max_inside)
		max_inside = now;
	long c = counter;

	cpu_relax(); /* let others try to get in, if the lock lets them */
	counter = c + 1;
	inside--;
}

/* A worker that enters critical_section() ROUNDS times, taking @l around it. */
#define LOCKED_WORKER(name, lock, unlock, l)                                 \
	static int name(void *arg)                                           \
	{                                                                    \
		(void)arg;                                                   \
		for (int i = 0; i < ROUNDS; i++) {                           \
			lock(l);                                             \
			critical_section();                                  \
			unlock(l);                                           \
		}                                                            \
		return 0;                                                    \
	}

LOCKED_WORKER(spin_worker, spin_lock, spin_unlock, &counter_lock)
LOCKED_WORKER(mutex_worker, mutex_lock, mutex_unlock, &counter_mutex)

static void run_workers(int (*fn)(void *))
{
	struct task_struct *k[WORKERS];

	counter = 0;
	inside = max_inside = 0;
	for (int i = 0; i < WORKERS; i++)
		k[i] = kthread_run_on_cpu(fn, NULL, i, "worker/%u");
	for (int i = 0; i < WORKERS; i++)
		kthread_stop(k[i]);
}

static void spin_scenario(void *arg)
{
	(void)arg;
	run_workers(spin_worker);
	cr_assert_eq(max_inside, 1, "seed %llu: two CPUs were inside the spinlock at once",
		     (unsigned long long)sim_seed());
	cr_assert_eq(counter, WORKERS * ROUNDS, "seed %llu: lost updates",
		     (unsigned long long)sim_seed());
}

SIM_TEST_SEEDS(spinlock, mutual_exclusion_over_seeds, spin_scenario)

static void mutex_scenario(void *arg)
{
	(void)arg;
	run_workers(mutex_worker);
	cr_assert_eq(max_inside, 1, "seed %llu: two tasks held the mutex at once",
		     (unsigned long long)sim_seed());
	cr_assert_eq(counter, WORKERS * ROUNDS);
}

SIM_TEST_SEEDS(mutex, mutual_exclusion_over_seeds, mutex_scenario)

SIM_TEST(spinlock, parallel_mode_mutual_exclusion)
{
	struct sim_config cfg = sim_default_config();

	cfg.mode = SIM_PARALLEL;
	sim_boot(&cfg);
	run_workers(spin_worker);
	cr_assert_eq(max_inside, 1);
	cr_assert_eq(counter, WORKERS * ROUNDS);
}

static void take_in_irq(void *arg)
{
	spinlock_t *l = arg;

	spin_lock(l);
	spin_unlock(l);
}

static DEFINE_SPINLOCK(irq_lock);

static int hold_without_irqsave(void *arg)
{
	(void)arg;
	spin_lock(&irq_lock);
	raise_irq(smp_processor_id(), take_in_irq, &irq_lock, "takes irq_lock");
	spin_unlock(&irq_lock);	/* the IRQ lands at unlock's scheduling point */
	return 0;
}

SIM_TEST(spinlock, irq_on_same_cpu_deadlock_is_reported, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("spinlock recursion");
	kthread_stop(kthread_run_on_cpu(hold_without_irqsave, NULL, 1, "holder"));
}

static int hold_with_irqsave(void *arg)
{
	unsigned long flags;

	(void)arg;
	spin_lock_irqsave(&irq_lock, flags);
	raise_irq(smp_processor_id(), take_in_irq, &irq_lock, "takes irq_lock");
	spin_unlock_irqrestore(&irq_lock, flags);
	return 0;
}

SIM_TEST(spinlock, irqsave_defers_the_irq)
{
	sim_boot(NULL);
	kthread_stop(kthread_run_on_cpu(hold_with_irqsave, NULL, 1, "holder"));
	cr_assert_eq(sim_irqs_pending(1), 0, "the IRQ must run after the lock is dropped");
}

/* AB-BA: the kernel reports the deadlock instead of hanging. */
static DEFINE_MUTEX(ma);
static DEFINE_MUTEX(mb);

static int ab(void *arg)
{
	(void)arg;
	mutex_lock(&ma);
	sim_point("ab-has-a");
	mutex_lock(&mb);
	return 0;
}

static int ba(void *arg)
{
	(void)arg;
	mutex_lock(&mb);
	mutex_lock(&ma);
	return 0;
}

SIM_TEST(mutex, abba_deadlock_is_reported, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("deadlock");
	struct task_struct *t1 = sim_kthread_run_held("ab-has-a", ab, NULL, 0, "ab");

	struct task_struct *t2 = kthread_run_on_cpu(ba, NULL, 1, "ba");

	sim_run_until_idle();
	sim_release_point("ab-has-a");
	kthread_stop(t1);
	kthread_stop(t2);
}

/* ---- completions ---- */

static struct completion comp;
static int woke;

static int waiter(void *arg)
{
	(void)arg;
	wait_for_completion(&comp);
	woke++;
	return 0;
}

SIM_TEST(completion, one_complete_lets_one_waiter_through)
{
	struct task_struct *w[3];

	sim_boot(NULL);
	init_completion(&comp);
	woke = 0;
	for (int i = 0; i < 3; i++)
		w[i] = kthread_run_on_cpu(waiter, NULL, i, "waiter/%u");
	sim_run_until_idle();
	cr_assert_eq(woke, 0, "nobody may pass before complete()");
	complete(&comp);
	sim_run_until_idle();
	cr_assert_eq(woke, 1, "one complete() lets exactly one waiter through");
	complete_all(&comp);
	sim_run_until_idle();
	cr_assert_eq(woke, 3);
	cr_assert(completion_done(&comp));
	for (int i = 0; i < 3; i++)
		kthread_stop(w[i]);
}

SIM_TEST(completion, complete_before_wait_is_not_lost)
{
	sim_boot(NULL);
	init_completion(&comp);
	complete(&comp);
	cr_assert(completion_done(&comp));
	wait_for_completion(&comp);
	cr_assert(!completion_done(&comp));
	cr_assert(!try_wait_for_completion(&comp));
}

/* ---- wait queues ---- */

static DECLARE_WAIT_QUEUE_HEAD(wq);
static int cond_flag;

static int wq_woke;

static int wq_waiter(void *arg)
{
	(void)arg;
	wait_event(wq, READ_ONCE(cond_flag) || kthread_should_stop());
	WRITE_ONCE(wq_woke, 1);
	return READ_ONCE(cond_flag);
}

static void wq_scenario(void *arg)
{
	(void)arg;
	cond_flag = 0;
	struct task_struct *k = kthread_run_on_cpu(wq_waiter, NULL, 1, "wq-waiter");

	WRITE_ONCE(cond_flag, 1);
	wake_up(&wq);
	cr_assert_eq(kthread_stop(k), 1, "seed %llu: the wake-up was lost",
		     (unsigned long long)sim_seed());
}

SIM_TEST(waitqueue, wakeup_inside_the_window_is_not_lost)
{
	sim_boot(NULL);
	cond_flag = 0;
	wq_woke = 0;
	/* it finds the condition false and stops just before it sleeps */
	struct task_struct *k = sim_kthread_run_held("wait_event:sleep", wq_waiter, NULL, 1,
						     "wq-waiter");

	cr_assert_eq(sim_tasks_at_point("wait_event:sleep"), 1);
	WRITE_ONCE(cond_flag, 1);
	wake_up(&wq);
	sim_release_point("wait_event:sleep");
	sim_run_until_idle();
	cr_assert(READ_ONCE(wq_woke), "a wake_up() between the check and the sleep was lost");
	cr_assert_eq(kthread_stop(k), 1);
}

SIM_TEST_SEEDS(waitqueue, no_lost_wakeup_over_seeds, wq_scenario)

/* ---- atomics ---- */

static atomic_t refs;
static atomic_t zero_seen;

static int dropper(void *arg)
{
	(void)arg;
	if (atomic_dec_and_test(&refs))
		atomic_inc(&zero_seen);
	return 0;
}

static void atomic_scenario(void *arg)
{
	struct task_struct *k[4];

	(void)arg;
	atomic_set(&refs, 4);
	atomic_set(&zero_seen, 0);
	for (int i = 0; i < 4; i++)
		k[i] = kthread_run_on_cpu(dropper, NULL, i, "dropper/%u");
	for (int i = 0; i < 4; i++)
		kthread_stop(k[i]);
	cr_assert_eq(atomic_read(&zero_seen), 1,
		     "seed %llu: atomic_dec_and_test() saw zero %d times",
		     (unsigned long long)sim_seed(), atomic_read(&zero_seen));
}

SIM_TEST_SEEDS(atomic, dec_and_test_sees_zero_once, atomic_scenario)
