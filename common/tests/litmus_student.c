/*
 * litmus_student.c - the threads of the kernel's litmus tests
 * (tools/memory-model/litmus-tests/ in Linux), written anew for
 * test_litmus.c.
 *
 * Rule kept here: this file is student code to the simulated kernel
 * (compiled with -fsanitize=thread, listed as a student file), so every
 * access is a scheduling point and every store goes through the store
 * buffer, exactly as a lab's code would. Each function is one process of
 * one test, named TEST_Pn; its registers go to r[0], r[1], ... Marked
 * accesses only (READ_ONCE(), WRITE_ONCE(), acquire, release): a test's
 * shape, not its data races, is what is under test.
 */
#include <linux/compiler.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include "litmus_student.h"

#define W(v, n) WRITE_ONCE(lt->v, n)
#define R(v) READ_ONCE(lt->v)
#define REL(v, n) smp_store_release(&lt->v, n)
#define ACQ(v) smp_load_acquire(&lt->v)
#define LOCK() spin_lock(&lt->s)
#define UNLOCK() spin_unlock(&lt->s)

/* ---- coherence ---------------------------------------------------------- */
void CoRR_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); }
void CoRR_P1(struct lt_vars *lt, long *r) { r[0] = R(x); r[1] = R(x); }
void CoRW_P0(struct lt_vars *lt, long *r) { r[0] = R(x); W(x, 1); }
void CoRW_P1(struct lt_vars *lt, long *r) { (void)r; W(x, 2); }
void CoWR_P0(struct lt_vars *lt, long *r) { W(x, 1); r[0] = R(x); }
void CoWR_P1(struct lt_vars *lt, long *r) { (void)r; W(x, 2); }
void CoWW_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); W(x, 2); }

/* ---- message passing ---------------------------------------------------- */
void MP_po_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); W(y, 1); }
void MP_po_P1(struct lt_vars *lt, long *r) { r[0] = R(y); r[1] = R(x); }
void MP_wmb_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); smp_wmb(); W(y, 1); }
void MP_rmb_P1(struct lt_vars *lt, long *r) { r[0] = R(y); smp_rmb(); r[1] = R(x); }
void MP_rel_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); REL(y, 1); }
void MP_acq_P1(struct lt_vars *lt, long *r) { r[0] = ACQ(y); r[1] = R(x); }
void MP_locks_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); LOCK(); W(y, 1); UNLOCK(); }
void MP_locks_P1(struct lt_vars *lt, long *r) { LOCK(); r[0] = R(y); UNLOCK(); r[1] = R(x); }
void MP_revlocks_P0(struct lt_vars *lt, long *r) { (void)r; LOCK(); W(x, 1); UNLOCK(); W(y, 1); }
void MP_revlocks_P1(struct lt_vars *lt, long *r) { r[0] = R(y); LOCK(); r[1] = R(x); UNLOCK(); }

void MP_unlocklock_P0(struct lt_vars *lt, long *r)
{
	(void)r;
	LOCK();
	W(x, 1);
	UNLOCK();
	LOCK();
	W(y, 1);
	UNLOCK();
}

/* rcu_assign_pointer() is a release store; rcu_dereference() a READ_ONCE(). */
void MP_assign_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); REL(p, &lt->x); }

void MP_deref_P1(struct lt_vars *lt, long *r)
{
	long *q = READ_ONCE(lt->p);

	r[0] = (long)q;
	r[1] = READ_ONCE(*q);
}

/* ---- store buffering, R, S, 2+2W ------------------------------------------ */
void SB_po_P0(struct lt_vars *lt, long *r) { W(x, 1); r[0] = R(y); }
void SB_po_P1(struct lt_vars *lt, long *r) { W(y, 1); r[0] = R(x); }
void SB_mb_P0(struct lt_vars *lt, long *r) { W(x, 1); smp_mb(); r[0] = R(y); }
void SB_mb_P1(struct lt_vars *lt, long *r) { W(y, 1); smp_mb(); r[0] = R(x); }
void SB_rfi_P0(struct lt_vars *lt, long *r) { W(x, 1); r[0] = R(x); r[1] = R(y); }
void SB_rfi_P1(struct lt_vars *lt, long *r) { W(y, 1); r[0] = R(y); r[1] = R(x); }
void R_po_P1(struct lt_vars *lt, long *r) { W(y, 2); r[0] = R(x); }
void R_mb_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); smp_mb(); W(y, 1); }
void R_mb_P1(struct lt_vars *lt, long *r) { W(y, 2); smp_mb(); r[0] = R(x); }
void S_po_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 2); W(y, 1); }
void S_po_P1(struct lt_vars *lt, long *r) { r[0] = R(y); W(x, 1); }
void S_wmb_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 2); smp_wmb(); W(y, 1); }
void S_acq_P1(struct lt_vars *lt, long *r) { r[0] = ACQ(y); W(x, 1); }
void W2_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); W(y, 2); }
void W2_P1(struct lt_vars *lt, long *r) { (void)r; W(y, 1); W(x, 2); }

/* ---- load buffering ----------------------------------------------------- */
void LB_po_P0(struct lt_vars *lt, long *r) { r[0] = R(x); W(y, 1); }
void LB_po_P1(struct lt_vars *lt, long *r) { r[0] = R(y); W(x, 1); }
void LB_ctrl_P0(struct lt_vars *lt, long *r)
{
	r[0] = R(x);
	if (r[0])
		W(y, 1);
}
void LB_mb_P1(struct lt_vars *lt, long *r) { r[0] = R(y); smp_mb(); W(x, 1); }
void LB_rel_P0(struct lt_vars *lt, long *r) { r[0] = R(x); REL(y, 1); }
void LB_acq_P1(struct lt_vars *lt, long *r) { r[0] = ACQ(y); W(x, 1); }

void LB_unlocklock_P0(struct lt_vars *lt, long *r)
{
	LOCK();
	r[0] = R(x);
	UNLOCK();
	LOCK();
	W(y, 1);
	UNLOCK();
}

/* ---- three and four processes ------------------------------------------- */
void X1_P0(struct lt_vars *lt, long *r) { (void)r; W(x, 1); }
void Y1_P0(struct lt_vars *lt, long *r) { (void)r; W(y, 1); }
void IRIW_po_P1(struct lt_vars *lt, long *r) { r[0] = R(x); r[1] = R(y); }
void IRIW_po_P3(struct lt_vars *lt, long *r) { r[0] = R(y); r[1] = R(x); }
void IRIW_mb_P1(struct lt_vars *lt, long *r) { r[0] = R(x); smp_mb(); r[1] = R(y); }
void IRIW_mb_P3(struct lt_vars *lt, long *r) { r[0] = R(y); smp_mb(); r[1] = R(x); }
void WRC_po_P1(struct lt_vars *lt, long *r) { r[0] = R(x); W(y, 1); }
void WRC_rel_P1(struct lt_vars *lt, long *r) { r[0] = R(x); REL(y, 1); }
void WRC_po_P2(struct lt_vars *lt, long *r) { r[0] = R(y); r[1] = R(x); }
void WRC_rmb_P2(struct lt_vars *lt, long *r) { r[0] = R(y); smp_rmb(); r[1] = R(x); }
void ISA2_po_P1(struct lt_vars *lt, long *r) { r[0] = R(y); W(z, 1); }
void ISA2_po_P2(struct lt_vars *lt, long *r) { r[0] = R(z); r[1] = R(x); }
void ISA2_lock_P0(struct lt_vars *lt, long *r) { (void)r; LOCK(); W(x, 1); W(y, 1); UNLOCK(); }
void ISA2_lock_P1(struct lt_vars *lt, long *r) { LOCK(); r[0] = R(y); W(z, 1); UNLOCK(); }
void ISA2_mb_P2(struct lt_vars *lt, long *r) { r[0] = R(z); smp_mb(); r[1] = R(x); }
void ISA2_acqrel_P1(struct lt_vars *lt, long *r) { r[0] = ACQ(y); REL(z, 1); }
void ISA2_acq_P2(struct lt_vars *lt, long *r) { r[0] = ACQ(z); r[1] = R(x); }

/* smp_mb__after_spinlock() is a full barrier after the lock. */
void Z6_lockmb_P1(struct lt_vars *lt, long *r)
{
	LOCK();
	smp_mb();
	r[0] = R(y);
	W(z, 1);
	UNLOCK();
}

void Z6_mb_P2(struct lt_vars *lt, long *r) { W(z, 2); smp_mb(); r[0] = R(x); }

/*
 * ---- RCU (Documentation/litmus-tests/rcu/ in Linux) -----------------------
 * The grace-period guarantee: a read-side section cannot span a grace
 * period. rcu_read_lock() and synchronize_rcu() are test_litmus.c's toy RCU.
 */
void RCU_free_P0(struct lt_vars *lt, long *r)
{
	long *q;

	rcu_read_lock();
	q = READ_ONCE(lt->p);           /* rcu_dereference() */
	r[0] = (long)q;
	r[1] = READ_ONCE(*q);
	rcu_read_unlock();
}

void RCU_free_P1(struct lt_vars *lt, long *r)
{
	(void)r;
	REL(p, &lt->z);                  /* rcu_assign_pointer() */
	synchronize_rcu();
	W(x, 0);
}

/* The same without its grace period: the free may come first. */
void RCU_nosync_free_P1(struct lt_vars *lt, long *r)
{
	(void)r;
	REL(p, &lt->z);
	W(x, 0);
}

void RCU_read_P0(struct lt_vars *lt, long *r)
{
	(void)r;
	rcu_read_lock();
	W(x, 1);
	W(y, 1);
	rcu_read_unlock();
}

void RCU_read_P1(struct lt_vars *lt, long *r)
{
	r[0] = R(x);
	synchronize_rcu();
	r[1] = R(y);
}

void RCU_nosync_read_P1(struct lt_vars *lt, long *r) { r[0] = R(x); r[1] = R(y); }
