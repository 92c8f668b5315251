/*
 * test_litmus.c - the kernel's own litmus tests, run on the simulated
 * kernel's memory model by the exhaustive explorer.
 *
 * Rule kept here: a litmus test's verdict here is what the explorer reached,
 * never what it was told: each test runs every schedule (within a preemption
 * bound) and every choice of which buffered stores drain first, collects the
 * final states, and asks whether the test's "exists" clause held in any.
 * The model runs with every step on (weak_memory, early_loads). Every test
 * the Linux-kernel memory model (LKMM) says is Never must be Never here: a false alarm on correct code costs more than a missed
 * reordering. Where this kernel is stronger than LKMM (a Sometimes that is
 * Never here), the table says why.
 *
 * The tests and their LKMM verdicts are facts from Linux's
 * tools/memory-model/litmus-tests/ and Documentation/litmus-tests/rcu/
 * (each file's "Result:" line); the encodings are this workbook's
 * (litmus_student.c), and so are the two +nosync controls.
 */
/* this file defines the toy synchronize_rcu(): no test macro over its name */
#define SIM_NO_RETURN_MARKS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <valgrind/valgrind.h>
#include <sim/test.h>
#include "litmus_student.h"

#define LT_MAX_PROCS 4
#define LT_MAX_STATES 64

/* Why this kernel may say Never where LKMM says Sometimes. */
enum lt_why {
	SAME,        /* this kernel gives LKMM's verdict */
	NO_LB,       /* loads are never satisfied late: no load buffering */
	MB_GLOBAL,   /* smp_mb() makes a CPU see every store visible anywhere */
	LOCKS_FULL,  /* an unlock and the next lock order everything for every CPU */
};

static const char *const why_text[] = {
	[SAME] = "",
	[NO_LB] = "stronger here: a load is never satisfied after a later store of its CPU (no load buffering)",
	[MB_GLOBAL] = "stronger here: after smp_mb() a CPU sees every store that has left any store buffer, as if each store reached every CPU at once",
	[LOCKS_FULL] = "stronger here: spin_unlock() drains the whole store buffer, so a lock chain orders stores for every CPU",
};

struct litmus {
	const char *name;
	lt_proc proc[LT_MAX_PROCS];
	const char *exists;          /* "1:r0=1 /\ 1:r1=0 /\ x=2"; values: numbers, or x, y, z (their address) */
	bool lkmm_sometimes;         /* LKMM's verdict */
	enum lt_why here;            /* SAME, or why this kernel says Never */
	void (*init)(struct lt_vars *v);   /* the initial state, when not all 0 */
};

#define NEVER false
#define SOMETIMES true

/* RCU+sync+free's initial state: x = 1, y = &x, z = 1 (y is p here). */
static void rcu_free_init(struct lt_vars *v)
{
	v->x = 1;
	v->z = 1;
	v->p = &v->x;
}

/*
 * A row a test, on one line: the name, LKMM's verdict, the outcome asked
 * about, the processes. The few rows where this kernel says otherwise
 * (.here) or the test starts from other than all 0 (.init) are written out.
 */
#define LITMUS(n, verdict, outcome, ...)                                      \
	{ .name = (n), .lkmm_sometimes = (verdict), .exists = (outcome), .proc = { __VA_ARGS__ } }

static const struct litmus tests[] = {
	LITMUS("CoRR+poonceonce+Once", NEVER, "1:r0=1 /\\ 1:r1=0", CoRR_P0, CoRR_P1),
	LITMUS("CoRW+poonceonce+Once", NEVER, "x=2 /\\ 0:r0=2", CoRW_P0, CoRW_P1),
	LITMUS("CoWR+poonceonce+Once", NEVER, "x=1 /\\ 0:r0=2", CoWR_P0, CoWR_P1),
	LITMUS("CoWW+poonceonce", NEVER, "x=1", CoWW_P0),
	LITMUS("IRIW+fencembonceonces+OnceOnce", NEVER, "1:r0=1 /\\ 1:r1=0 /\\ 3:r0=1 /\\ 3:r1=0", X1_P0, IRIW_mb_P1, Y1_P0, IRIW_mb_P3),
	LITMUS("IRIW+poonceonces+OnceOnce", SOMETIMES, "1:r0=1 /\\ 1:r1=0 /\\ 3:r0=1 /\\ 3:r1=0", X1_P0, IRIW_po_P1, Y1_P0, IRIW_po_P3),
	LITMUS("ISA2+pooncelock+pooncelock+pombonce", NEVER, "1:r0=1 /\\ 2:r0=1 /\\ 2:r1=0", ISA2_lock_P0, ISA2_lock_P1, ISA2_mb_P2),
	LITMUS("ISA2+poonceonces", SOMETIMES, "1:r0=1 /\\ 2:r0=1 /\\ 2:r1=0", MP_po_P0, ISA2_po_P1, ISA2_po_P2),
	LITMUS("ISA2+pooncerelease+poacquirerelease+poacquireonce", NEVER, "1:r0=1 /\\ 2:r0=1 /\\ 2:r1=0", MP_rel_P0, ISA2_acqrel_P1, ISA2_acq_P2),
	LITMUS("LB+fencembonceonce+ctrlonceonce", NEVER, "0:r0=1 /\\ 1:r0=1", LB_ctrl_P0, LB_mb_P1),
	LITMUS("LB+poacquireonce+pooncerelease", NEVER, "0:r0=1 /\\ 1:r0=1", LB_rel_P0, LB_acq_P1),
	LITMUS("LB+unlocklockonceonce+poacquireonce", NEVER, "0:r0=1 /\\ 1:r0=1", LB_unlocklock_P0, LB_acq_P1),
	{ .name = "LB+poonceonces", .lkmm_sometimes = SOMETIMES, .exists = "0:r0=1 /\\ 1:r0=1",
	  .proc = { LB_po_P0, LB_po_P1 }, .here = NO_LB },
	LITMUS("MP+fencewmbonceonce+fencermbonceonce", NEVER, "1:r0=1 /\\ 1:r1=0", MP_wmb_P0, MP_rmb_P1),
	LITMUS("MP+onceassign+derefonce", NEVER, "1:r0=x /\\ 1:r1=0", MP_assign_P0, MP_deref_P1),
	LITMUS("MP+polocks", NEVER, "1:r0=1 /\\ 1:r1=0", MP_locks_P0, MP_locks_P1),
	LITMUS("MP+poonceonces", SOMETIMES, "1:r0=1 /\\ 1:r1=0", MP_po_P0, MP_po_P1),
	LITMUS("MP+pooncerelease+poacquireonce", NEVER, "1:r0=1 /\\ 1:r1=0", MP_rel_P0, MP_acq_P1),
	LITMUS("MP+porevlocks", NEVER, "1:r0=1 /\\ 1:r1=0", MP_revlocks_P0, MP_revlocks_P1),
	LITMUS("MP+unlocklockonceonce+fencermbonceonce", NEVER, "1:r0=1 /\\ 1:r1=0", MP_unlocklock_P0, MP_rmb_P1),
	LITMUS("R+fencembonceonces", NEVER, "y=2 /\\ 1:r0=0", R_mb_P0, R_mb_P1),
	LITMUS("R+poonceonces", SOMETIMES, "y=2 /\\ 1:r0=0", MP_po_P0, R_po_P1),
	LITMUS("S+fencewmbonceonce+poacquireonce", NEVER, "x=2 /\\ 1:r0=1", S_wmb_P0, S_acq_P1),
	LITMUS("S+poonceonces", SOMETIMES, "x=2 /\\ 1:r0=1", S_po_P0, S_po_P1),
	LITMUS("SB+fencembonceonces", NEVER, "0:r0=0 /\\ 1:r0=0", SB_mb_P0, SB_mb_P1),
	LITMUS("SB+poonceonces", SOMETIMES, "0:r0=0 /\\ 1:r0=0", SB_po_P0, SB_po_P1),
	LITMUS("SB+rfionceonce-poonceonces", SOMETIMES, "0:r0=1 /\\ 0:r1=0 /\\ 1:r0=1 /\\ 1:r1=0", SB_rfi_P0, SB_rfi_P1),
	LITMUS("WRC+pooncerelease+fencermbonceonce+Once", NEVER, "1:r0=1 /\\ 2:r0=1 /\\ 2:r1=0", X1_P0, WRC_rel_P1, WRC_rmb_P2),
	LITMUS("WRC+poonceonces+Once", SOMETIMES, "1:r0=1 /\\ 2:r0=1 /\\ 2:r1=0", X1_P0, WRC_po_P1, WRC_po_P2),
	LITMUS("Z6.0+pooncelock+poonceLock+pombonce", NEVER, "1:r0=1 /\\ z=2 /\\ 2:r0=0", ISA2_lock_P0, Z6_lockmb_P1, Z6_mb_P2),
	{ .name = "Z6.0+pooncelock+pooncelock+pombonce", .lkmm_sometimes = SOMETIMES,
	  .exists = "1:r0=1 /\\ z=2 /\\ 2:r0=0", .proc = { ISA2_lock_P0, ISA2_lock_P1, Z6_mb_P2 }, .here = LOCKS_FULL },
	{ .name = "Z6.0+pooncerelease+poacquirerelease+fencembonceonce", .lkmm_sometimes = SOMETIMES,
	  .exists = "1:r0=1 /\\ z=2 /\\ 2:r0=0", .proc = { MP_rel_P0, ISA2_acqrel_P1, Z6_mb_P2 }, .here = MB_GLOBAL },
	LITMUS("2+2W+poonceonces", SOMETIMES, "x=1 /\\ y=1", W2_P0, W2_P1),
	{ .name = "RCU+sync+free", .lkmm_sometimes = NEVER, .exists = "0:r0=x /\\ 0:r1=0",
	  .proc = { RCU_free_P0, RCU_free_P1 }, .init = rcu_free_init },
	LITMUS("RCU+sync+read", NEVER, "1:r0=1 /\\ 1:r1=0", RCU_read_P0, RCU_read_P1),
	/* controls, not in Linux: the two above without their grace period */
	{ .name = "RCU+nosync+free", .lkmm_sometimes = SOMETIMES, .exists = "0:r0=x /\\ 0:r1=0",
	  .proc = { RCU_free_P0, RCU_nosync_free_P1 }, .init = rcu_free_init },
	LITMUS("RCU+nosync+read", SOMETIMES, "1:r0=1 /\\ 1:r1=0", RCU_read_P0, RCU_nosync_read_P1),
};

#define NR_TESTS (sizeof(tests) / sizeof(tests[0]))

/*
 * ---- a toy RCU for the RCU tests ------------------------------------------
 * common_tests links no lab, so the RCU tests run on the classic toy RCU of
 * a non-preemptible kernel: a reader keeps its CPU for its whole section
 * (a task gives up its CPU here only by sleeping, scheduling or migrating),
 * so once the updater has run on every CPU, every section under way when
 * it began has ended. Its verdicts test the memory model's context
 * switches, not an RCU a lab writes.
 */
void rcu_read_lock(void)
{
	rcu_lock_acquire();
}

void rcu_read_unlock(void)
{
	rcu_lock_release();
}

void synchronize_rcu(void)
{
	int self = smp_processor_id(), cpu;

	smp_mb();
	for_each_online_cpu(cpu)
		migrate_to_cpu(cpu);
	migrate_to_cpu(self);
	smp_mb();
}

/* ---- one run, and what it ended in -------------------------------------- */

struct lt_state {
	long r[LT_MAX_PROCS][2];
	long x, y, z;
};

struct lt_run {
	const struct litmus *t;
	int nprocs;
	struct lt_vars v;
	struct lt_state st;
	struct lt_state states[LT_MAX_STATES];
	int nstates;
	bool seen;                   /* the exists clause held in some run */
};

struct lt_proc_arg {
	struct lt_run *run;
	int i;
};

static int lt_thread(void *arg)
{
	struct lt_proc_arg *a = arg;

	sim_point("litmus-go");         /* every process starts at once */
	a->run->t->proc[a->i](&a->run->v, a->run->st.r[a->i]);
	return 0;
}

static long lt_value(const struct lt_run *run, const char *s)
{
	if (!strcmp(s, "x"))
		return (long)&run->v.x;
	if (!strcmp(s, "y"))
		return (long)&run->v.y;
	if (!strcmp(s, "z"))
		return (long)&run->v.z;
	return atol(s);
}

/* Does the exists clause (terms joined by "/\") hold in the run's state? */
static bool lt_exists(const struct lt_run *run, const struct lt_state *st)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", run->t->exists);
	for (char *term = strtok_r(buf, "/\\ ", &save); term; term = strtok_r(NULL, "/\\ ", &save)) {
		char *eq = strchr(term, '=');
		long have;
		int p, reg;

		cr_assert(eq, "%s: bad term '%s'", run->t->name, term);
		*eq = 0;
		if (sscanf(term, "%d:r%d", &p, &reg) == 2)
			have = st->r[p][reg];
		else
			have = !strcmp(term, "x") ? st->x : !strcmp(term, "y") ? st->y : st->z;
		if (have != lt_value(run, eq + 1))
			return false;
	}
	return true;
}

static void lt_scenario(void *arg)
{
	struct lt_run *run = arg;
	struct lt_proc_arg a[LT_MAX_PROCS];
	struct task_struct *k[LT_MAX_PROCS];

	memset(&run->v, 0, sizeof(run->v));
	memset(&run->st, 0, sizeof(run->st));
	run->v.p = &run->v.y;
	if (run->t->init)
		run->t->init(&run->v);
	spin_lock_init(&run->v.s);
	sim_hold_point("litmus-go");
	for (int i = 0; i < run->nprocs; i++) {
		a[i] = (struct lt_proc_arg){ run, i };
		k[i] = sim_kthread_run_held("litmus-go", lt_thread, &a[i], i, "P%d");
	}
	sim_release_point("litmus-go");
	for (int i = 0; i < run->nprocs; i++)
		kthread_stop(k[i]);
	run->st.x = run->v.x;
	run->st.y = run->v.y;
	run->st.z = run->v.z;
	if (lt_exists(run, &run->st))
		run->seen = true;
	for (int i = 0; i < run->nstates; i++)
		if (!memcmp(&run->states[i], &run->st, sizeof(run->st)))
			return;
	if (run->nstates < LT_MAX_STATES)
		run->states[run->nstates++] = run->st;
}

/* ---- every test, and the table ------------------------------------------ */

#define LT_BOUND 1                   /* preemptions per run */

struct lt_result {
	bool seen;
	long runs;
	int states;
};

static struct lt_result lt_run_one(const struct litmus *t)
{
	struct sim_config cfg = sim_default_config();
	static struct lt_run run;
	long runs;

	memset(&run, 0, sizeof(run));
	run.t = t;
	while (run.nprocs < LT_MAX_PROCS && t->proc[run.nprocs])
		run.nprocs++;
	cfg.nr_cpus = run.nprocs;
	cfg.weak_memory = true;
	cfg.late_stores = false;
	cfg.early_loads = true;
	cfg.races = false;
	cfg.race_watch = false;
	cfg.access_preempt = 1;          /* every access is a decision */
	cfg.trace = false;
	runs = sim_run_exhaustive(&cfg, lt_scenario, &run, LT_BOUND);
	return (struct lt_result){ run.seen, runs, run.nstates };
}

static const char *verdict(bool sometimes)
{
	return sometimes ? "Sometimes" : "Never";
}

#define TABLE_BEGIN "<!-- BEGIN LITMUS TABLE -->\n"
#define TABLE_END "<!-- END LITMUS TABLE -->"

/* The table docs/memory_model.md publishes, as this run reached it. */
static char *lt_table(const struct lt_result *res)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert(f);
	fprintf(f, "| test | LKMM | this kernel | runs | final states | why not the same |\n"
		   "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < NR_TESTS; i++)
		fprintf(f, "| `%s` | %s | %s | %ld | %d | %s |\n", tests[i].name,
			verdict(tests[i].lkmm_sometimes), verdict(res[i].seen), res[i].runs,
			res[i].states, why_text[tests[i].here]);
	fclose(f);
	return text;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap)
			text = realloc(text, cap = 2 * cap + 8192);
		n = fread(text + len, 1, 4096, f);
		len += n;
	} while (n);
	text[len] = 0;
	fclose(f);
	return text;
}

/*
 * The page's table must be this run's. WORKBOOK_LITMUS_WRITE=1 rewrites it;
 * a tree without the page (a handout) has nothing to compare.
 */
static void lt_check_page(const struct lt_result *res)
{
	char *page = read_all(LITMUS_PAGE), *table = lt_table(res);
	char *b = page ? strstr(page, TABLE_BEGIN) : NULL;
	char *e = b ? strstr(b, TABLE_END) : NULL;
	const char *w = getenv("WORKBOOK_LITMUS_WRITE");

	if (e) {
		b += strlen(TABLE_BEGIN);
		if (w && !strcmp(w, "1")) {
			FILE *f = fopen(LITMUS_PAGE, "w");

			cr_assert(f, "cannot write %s", LITMUS_PAGE);
			fprintf(f, "%.*s%s%s", (int)(b - page), page, table, e);
			fclose(f);
		} else {
			cr_expect(strlen(table) == (size_t)(e - b) && !strncmp(b, table, (size_t)(e - b)),
				  "the litmus table of docs/memory_model.md is not what the explorer "
				  "reached: rewrite it with WORKBOOK_LITMUS_WRITE=1 "
				  "build-wb-default/common/common_tests --filter 'litmus/*'");
		}
	}
	free(page);
	free(table);
}

SIM_TEST(litmus, kernel_litmus_tests_give_lkmm_verdicts, .timeout = 300)
{
	static struct lt_result res[NR_TESTS];
	int never = 0, sometimes = 0, stronger = 0;

	if (!sim_kcsan_enabled()) {
		cr_log_info("student code is not instrumented here: no store is buffered");
		return;
	}
	for (size_t i = 0; i < NR_TESTS; i++) {
		const struct litmus *t = &tests[i];
		bool want = t->lkmm_sometimes && t->here == SAME;

		/* memcheck checks the code, not the verdicts: the small tests do */
		if (RUNNING_ON_VALGRIND && t->proc[2])
			continue;
		res[i] = lt_run_one(t);
		cr_log_info("%-52s LKMM %-9s here %-9s (%ld runs, %d final states)", t->name,
			    verdict(t->lkmm_sometimes), verdict(res[i].seen), res[i].runs,
			    res[i].states);
		cr_expect(!(res[i].seen && !t->lkmm_sometimes),
			  "%s: LKMM says Never, yet this kernel reached %s: a false alarm on "
			  "correct code", t->name, t->exists);
		cr_expect(res[i].seen == want || res[i].seen == t->lkmm_sometimes,
			  "%s: LKMM says %s, this kernel %s (the table says %s)", t->name,
			  verdict(t->lkmm_sometimes), verdict(res[i].seen),
			  t->here == SAME ? "the same" : why_text[t->here]);
		never += !t->lkmm_sometimes;
		sometimes += t->lkmm_sometimes && res[i].seen;
		stronger += t->lkmm_sometimes && !res[i].seen;
	}
	if (!RUNNING_ON_VALGRIND)   /* memcheck ran only the small tests */
		lt_check_page(res);
	cr_log_info("%zu litmus tests: %d LKMM Never, all Never here; %d Sometimes reached; "
		    "%d Sometimes where this kernel is stronger", NR_TESTS, never, sometimes,
		    stronger);
}
