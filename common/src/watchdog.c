/*
 * watchdog.c - the real-time watchdog that turns a livelock into a BUG.
 *
 * Rule kept here: the watchdog only watches. It reads the progress counters
 * every 100 ms of real time under S.lock and reports a livelock after
 * cfg.livelock_ms without progress; it never schedules, wakes or moves a
 * task, so it cannot change a deterministic run's schedule.
 */
#include <time.h>
#include "internal.h"

static void *watchdog_main(void *arg)
{
	long last = -1;
	int still_ms = 0;

	(void)arg;
	SIM_LOCK();
	while (S.watchdog_run) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&S.watchdog_cv, &S.lock, &ts);
		if (!S.watchdog_run)
			break;
		explore_watchdog_tick_locked(100);
		long now = S.det ? S.steps : atomic_load(&S.progress);

		for (int cpu = 0; !S.det && cpu < nr_cpu_ids; cpu++)
			now += atomic_load_explicit(&cpu_of(cpu)->progress, memory_order_relaxed);

		if (now != last || S.quiescer) {
			last = now;
			still_ms = 0;
			continue;
		}
		still_ms += 100;
		if (still_ms >= S.cfg.livelock_ms) {
			struct task_struct *t = S.det ? S.token : NULL;

			sim_bug_locked(t && t->file ? t->file : "?", t ? t->line : 0,
				       "livelock: no progress for %d ms: tasks only spin in "
				       "cpu_relax() or never reach a scheduling point%s%s",
				       still_ms, t ? "; running: " : "", t ? t->comm : "");
		}
	}
	SIM_UNLOCK();
	return NULL;
}

void watchdog_start(void)
{
	SIM_LOCK();
	S.watchdog_run = true;
	pthread_cond_init(&S.watchdog_cv, NULL);
	SIM_UNLOCK();
	pthread_create(&S.watchdog, NULL, watchdog_main, NULL);
}

void watchdog_stop(void)
{
	SIM_LOCK();
	S.watchdog_run = false;
	pthread_cond_signal(&S.watchdog_cv);
	SIM_UNLOCK();
	pthread_join(S.watchdog, NULL);
	pthread_cond_destroy(&S.watchdog_cv);
}
