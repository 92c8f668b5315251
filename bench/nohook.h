/*
 * nohook.h - lab 1's rcu.c as a production kernel compiles it: the debug
 * hooks rcu_lock_acquire()/rcu_lock_release() (lockdep's, in Linux) become
 * empty inline functions, and lab 1's functions get names of their own so
 * that this copy can live next to the real one. Included first by
 * ref_read.c with -DBENCH_NOHOOK, before any kernel header.
 */
#ifndef BENCH_NOHOOK_H
#define BENCH_NOHOOK_H

static inline void bench_nohook(void)
{
}

#define rcu_lock_acquire bench_nohook
#define rcu_lock_release bench_nohook
#define rcu_read_lock bench_nohook_rcu_read_lock
#define rcu_read_unlock bench_nohook_rcu_read_unlock
#define synchronize_rcu bench_nohook_synchronize_rcu

#endif
