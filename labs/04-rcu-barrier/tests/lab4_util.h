/*
 * lab4_util.h - what lab 4's tests share beyond the workbook's test library
 * (sim/testlib.h: callbacks that block until released or record where they
 * ran, kthreads that call a barrier): lab 3's one-callback barrier, which
 * the tests show failing on per-CPU queues.
 *
 * Rule kept here: a test never sleeps; it forces a schedule by holding
 * things (a callback that waits for its release, a CPU's interrupts, a named
 * point) and lets the rest run with sim_run_until_idle(). Kthreads and
 * callbacks only record; the test's own thread asserts.
 */
#ifndef LAB4_UTIL_H
#define LAB4_UTIL_H

#include <sim/testlib.h>

/* Lab 3's barrier: one callback on this CPU's queue, wait for it. Wrong here. */
void lab3_one_callback_barrier(void);

#endif
