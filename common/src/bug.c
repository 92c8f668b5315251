/*
 * bug.c - BUG and WARN reports.
 *
 * Rule kept here: a report says where (file:line), who (task, CPU, context)
 * and how to see it again (seed, replay command, timeline), and a BUG ends
 * the process by a signal, never by exit(): Criterion counts an exit(0) as a
 * pass, a signal as a crash.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bug.h>
#include "internal.h"

static const char *state_name(const struct task_struct *t)
{
	switch (t->state) {
	case TS_RUNNING:
		return "running";
	case TS_BLOCKED:
		return "blocked";
	default:
		return "dead";
	}
}

void sim_report_tasks(FILE *f)
{
	struct task_struct *t;

	if (!S.tasks.next)
		return;
	fprintf(f, "tasks:\n");
	list_for_each_entry(t, &S.tasks, all_node) {
		if (t->is_idle && t->state == TS_BLOCKED)
			continue;
		fprintf(f, "  %-16s pid %-3d %-8s", t->comm, t->pid, state_name(t));
		if (t->cpu >= 0)
			fprintf(f, " on CPU %d", t->cpu);
		if (t->state == TS_BLOCKED && t->blocked_on)
			fprintf(f, " waiting for %s", t->blocked_on);
		if (t->file)
			fprintf(f, " (last at %s:%d)", t->file, t->line);
		fputc('\n', f);
	}
}

static void where(FILE *f)
{
	struct task_struct *t = sim_current;

	if (!t) {
		fprintf(f, "(not in a simulated task)\n");
		return;
	}
	int irq = t->cpu >= 0 && cpu_of(t->cpu)->hardirq > 0;

	fprintf(f, "task: %s (pid %d), CPU: %d%s\n", t->comm, t->pid, t->cpu,
		irq ? ", in IRQ context" : "");
}

/*
 * Why this BUG is not the one the test expects, or NULL. @student: the BUG
 * was raised by student code (1), by the kernel or a test (0), or nobody
 * can tell (-1: no instrumentation), which passes either expectation. A
 * student's own BUG() counts only where a test expects the student's
 * check (sim_expect_student_bug()): it can never stand in for the kernel's
 * detection, nor end a test that expects no BUG with the BUG signal.
 */
static const char *bug_mismatch_locked(const char *headline, int student)
{
	bool irq = sim_current && sim_current->cpu >= 0 && cpu_of(sim_current->cpu)->hardirq > 0;

	sim_assert_sched_held();
	if (S.expect_bug && !strstr(headline, S.expect_bug))
		return "another one";
	if (!S.expect_bug)
		return student == 1 ? "a BUG in your code, where the test expects none" : NULL;
	if (S.expect_student_bug && student == 0)
		return "the kernel's, not the check your code must make";
	if (!S.expect_student_bug && student == 1)
		return "your code's own BUG, not the kernel's detection";
	if (S.expect_bug_in_irq && !irq)
		return "raised outside the interrupt handler the test calls your code from";
	return NULL;
}

/*
 * @own_stack: the BUG is about what the current task itself was doing (a
 * kernel check it called), so the lab's frames on its stack say how it got
 * there; a watchdog's report about another task has none to show.
 */
static void bug_report_locked(const char *file, int line, int student, bool own_stack,
			      const char *fmt, va_list ap)
{
	char headline[512];

	sim_assert_sched_held();
	vsnprintf(headline, sizeof(headline), fmt, ap);
	snprintf(sim_failure_what, sizeof(sim_failure_what), "%s", headline);
	fflush(stdout);
	fprintf(stderr, "\nBUG: %s\n  at %s:%d\n", headline, file, line);
	if (own_stack)
		sim_report_lab_callers(stderr, file, line);
	fprintf(stderr, "  ");
	where(stderr);
	sim_report_likely_cause();
	sim_report_tasks(stderr);
	trace_emit(sim_current ? sim_current->cpu : -1, sim_current, TR_BUG, headline, 0);
	const char *why = bug_mismatch_locked(headline, student);

	if (why) {
		if (S.expect_bug)
			fprintf(stderr, "this test expected %s BUG containing \"%s\"%s; this "
				"one is %s\n", S.expect_student_bug ? "your code's own" : "the kernel's",
				S.expect_bug, S.expect_bug_in_irq ? " in interrupt context" : "", why);
		else
			fprintf(stderr, "this test expected no BUG; this one is %s\n", why);
		sim_failure_report("unexpected BUG");
		sim_test_proof("abort");   /* the grader's proof that the kernel ended it */
		abort();
	}
	if (!S.expect_bug)
		sim_failure_report("BUG");
	else
		sim_write_timeline(headline);   /* an expected crash is drawn too */
	fflush(stderr);
	sim_test_proof("bug");             /* the grader's proof that the kernel ended it */
	raise(BUG_SIGNAL);
	abort();
}

void sim_bug_locked(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	sim_assert_sched_held();
	va_start(ap, fmt);
	bug_report_locked(file, line, 0, false, fmt, ap);
	va_end(ap);
	abort();
}

void sim_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	/* whose check this is: the site that called, not the file it names */
	int student = kcsan_pc_is_student((uintptr_t)__builtin_return_address(0));

	SIM_LOCK();
	va_start(ap, fmt);
	bug_report_locked(file, line, student, true, fmt, ap);
	va_end(ap);
	abort();
}

void sim_likely_cause(const char *fmt, ...)
{
	va_list ap;

	SIM_LOCK();
	va_start(ap, fmt);
	if (fmt)
		vsnprintf(S.likely_cause, sizeof(S.likely_cause), fmt, ap);
	else
		S.likely_cause[0] = 0;
	va_end(ap);
	SIM_UNLOCK();
}

/* No lock: called from a BUG report, which holds it, and from a crash handler. */
void sim_report_likely_cause(void)
{
	if (S.likely_cause[0])
		fprintf(stderr, "  likely cause: %s\n", S.likely_cause);
}

void sim_report_crash(void)
{
	fprintf(stderr, "  ");
	where(stderr);
	sim_report_likely_cause();
	if (sim_current && sim_current->file)
		fprintf(stderr, "  last scheduling point: %s:%d\n", sim_current->file,
			sim_current->line);
	sim_report_tasks(stderr);
	trace_emit(sim_current ? sim_current->cpu : -1, sim_current, TR_BUG, "crash", 0);
	sim_failure_report("crash");
	fflush(stderr);
}

void sim_warn(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "WARNING: %s\n  at %s:%d\n  ", msg, file, line);
	where(stderr);
	SIM_LOCK();
	S.warns++;
	SIM_UNLOCK();
	trace_emit(sim_current ? sim_current->cpu : -1, sim_current, TR_WARN, msg, 0);
}

int sim_warn_count(void)
{
	return SIM_LOCKED(int, S.warns);
}

static void expect_bug(const char *substring, bool student, bool in_irq)
{
	SIM_LOCK();
	S.expect_bug = substring;
	S.expect_student_bug = student;
	S.expect_bug_in_irq = in_irq;
	SIM_UNLOCK();
}

void sim_expect_bug(const char *substring)
{
	expect_bug(substring, false, false);
}

void sim_expect_student_bug(const char *substring, bool in_irq)
{
	expect_bug(substring, true, in_irq);
}

/*
 * The harness's hang report (test.c), from its own thread shortly before
 * the time-out: the kernel may be stuck holding S.lock, so wait for it a
 * little, then report without it.
 */
void sim_report_hang(const char *test, double after_s)
{
	bool locked = false;

	for (int i = 0; i < 50 && !locked; i++) {
		locked = sim_lock_try(&S.lock);
		if (!locked)
			usleep(10000);
	}
	fflush(stdout);
	fprintf(stderr, "\nBUG: hang: test %s still running after %.1f s "
		"(its time-out is near)\n", test, after_s);
	if (S.booted && S.det && S.token)
		fprintf(stderr, "  running: %s (pid %d) at %s:%d\n", S.token->comm, S.token->pid,
			S.token->file ? S.token->file : "?", S.token->line);
	if (S.booted)
		sim_report_tasks(stderr);
	if (locked)
		sim_lock_drop(&S.lock);
	sim_failure_report("hang");
	fflush(stderr);
}
