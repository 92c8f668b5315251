/*
 * lockdep.c - which of the simulated kernel's own locks this thread holds.
 *
 * Rule kept here: S.lock, mod_lock, kc_lock and the other pthread mutexes of
 * common/src are taken with sim_lock_take() and dropped with
 * sim_lock_drop() (internal.h), which keep a short per-thread list of the
 * locks held; a function whose name ends in _locked opens with
 * sim_assert_held(&its_lock), as Linux's open with lockdep_assert_held(). A
 * call without the lock is the simulator's own bug: it stops the run at once,
 * naming the function and the lock, instead of racing quietly. Only what the
 * thread itself took counts; a pthread condition wait keeps its lock on the
 * list, since the thread holds it again whenever it runs.
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"

_Thread_local pthread_mutex_t *sim_held[SIM_HELD_MAX];
_Thread_local int sim_nheld;

void sim_lock_bug(const char *fn, const char *lock, const char *what)
{
	void *pcs[16];
	int n = backtrace(pcs, 16);

	fflush(stdout);
	fprintf(stderr, "sim: internal: %s(): %s %s\n", fn, lock, what);
	backtrace_symbols_fd(pcs, n, 2);
	abort();
}
