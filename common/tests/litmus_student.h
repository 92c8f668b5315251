/*
 * litmus_student.h - the processes of the litmus tests (litmus_student.c).
 *
 * Rule kept here: declarations only; each process takes the shared
 * variables and its own registers.
 */
#ifndef LITMUS_STUDENT_H
#define LITMUS_STUDENT_H

#include <linux/spinlock.h>

/**
 * The shared variables of one litmus test, all 0 at its start but p (&y),
 * unless the test gives its own initial state.
 */
struct lt_vars {
	long x, y, z;
	long *p;
	spinlock_t s;
};

/** One process: the shared variables, and its registers r[0], r[1]. */
typedef void (*lt_proc)(struct lt_vars *lt, long *r);

#define LT_PROCS(X) \
	X(CoRR_P0) X(CoRR_P1) X(CoRW_P0) X(CoRW_P1) X(CoWR_P0) X(CoWR_P1) X(CoWW_P0) \
	X(MP_po_P0) X(MP_po_P1) X(MP_wmb_P0) X(MP_rmb_P1) X(MP_rel_P0) X(MP_acq_P1) \
	X(MP_locks_P0) X(MP_locks_P1) X(MP_revlocks_P0) X(MP_revlocks_P1) \
	X(MP_unlocklock_P0) X(MP_assign_P0) X(MP_deref_P1) \
	X(SB_po_P0) X(SB_po_P1) X(SB_mb_P0) X(SB_mb_P1) X(SB_rfi_P0) X(SB_rfi_P1) \
	X(R_po_P1) X(R_mb_P0) X(R_mb_P1) X(S_po_P0) X(S_po_P1) X(S_wmb_P0) X(S_acq_P1) \
	X(W2_P0) X(W2_P1) \
	X(LB_po_P0) X(LB_po_P1) X(LB_ctrl_P0) X(LB_mb_P1) X(LB_rel_P0) X(LB_acq_P1) \
	X(LB_unlocklock_P0) \
	X(X1_P0) X(Y1_P0) X(IRIW_po_P1) X(IRIW_po_P3) X(IRIW_mb_P1) X(IRIW_mb_P3) \
	X(WRC_po_P1) X(WRC_rel_P1) X(WRC_po_P2) X(WRC_rmb_P2) \
	X(ISA2_po_P1) X(ISA2_po_P2) X(ISA2_lock_P0) X(ISA2_lock_P1) X(ISA2_mb_P2) \
	X(ISA2_acqrel_P1) X(ISA2_acq_P2) X(Z6_lockmb_P1) X(Z6_mb_P2) \
	X(RCU_free_P0) X(RCU_free_P1) X(RCU_nosync_free_P1) X(RCU_read_P0) X(RCU_read_P1) \
	X(RCU_nosync_read_P1)

#define LT_DECLARE(f) void f(struct lt_vars *lt, long *r);
LT_PROCS(LT_DECLARE)
#undef LT_DECLARE

#endif
