/*
 * test.c - the harness every workbook test runs in.
 *
 * Rule kept here: a test passes only by reaching sim_test_end(). Leaving any
 * other way (exit(), _exit(), a raw exit_group, a crash, a hang) is a
 * failure, and every failure tells how to replay it. The proof that a test
 * reached its end is a record the harness writes to a file the grader named
 * (WORKBOOK_PROOF); the grader counts a pass only with that record, so no
 * exit status, however it is produced, can pass a test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sim/test.h>
#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/module.h>
#include <valgrind/valgrind.h>
#include <valgrind/memcheck.h>
#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef HAVE_LSAN
int __lsan_do_recoverable_leak_check(void);
#endif

static bool in_test, reached_end;
static char test_id[256];

/*
 * The completion proof. Criterion's workers re-execute the test binary and
 * close every inherited descriptor, so the grader cannot hand them a pipe:
 * it names a file (opened here O_APPEND, close-on-exec) and a per-run nonce
 * in WORKBOOK_PROOF="<nonce> <path>". A worker reads both before any test
 * code of its own runs, then wipes the variable (in place, so that
 * /proc/self/environ no longer shows it either). One record per ending:
 * "<suite/name> <nonce> <kind>\n", kind "end" (the body and every end-of-test
 * assertion passed), "bug" (the kernel's BUG path, for tests that expect
 * BUG_SIGNAL), "fault" (a real fault inside an unloaded module, for tests
 * that expect SIGSEGV)
 * or "abort" (the kernel's abort for an unexpected BUG).
 * What it does NOT stop: code in the test process that deliberately reads
 * the nonce from memory can write a record too (docs/instructors.md).
 */
static int proof_fd = -1;
static char proof_nonce[72];

__attribute__((constructor(101))) static void proof_open(void)
{
	extern char **environ;

	if (!getenv("BXFI_MAP"))        /* Criterion's runner: workers need it */
		return;
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "WORKBOOK_PROOF=", 15))
			continue;
		char *val = *e + 15, *sp = strchr(val, ' ');

		if (sp && (size_t)(sp - val) < sizeof(proof_nonce)) {
			memcpy(proof_nonce, val, sp - val);
			proof_fd = open(sp + 1, O_WRONLY | O_APPEND | O_CLOEXEC);
		}
		memset(val, 0, strlen(val));
	}
	unsetenv("WORKBOOK_PROOF");
}

/*
 * sim_test_proof() - record that the running test ended the way KIND says.
 * Async-signal-safe (one write(2)): the fault handler calls it. At most one
 * record per test process.
 */
void sim_test_proof(const char *kind)
{
	char rec[400];
	int fd = proof_fd;

	if (fd < 0 || !test_id[0])
		return;
	proof_fd = -1;
	size_t n = 0;
	for (const char *parts[] = { test_id, " ", proof_nonce, " ", kind, "\n", NULL },
	     **p = parts; *p; p++)
		for (const char *c = *p; *c && n < sizeof(rec) - 1; c++)
			rec[n++] = *c;
	ssize_t w = write(fd, rec, n);

	(void)w;
	close(fd);
}

/*
 * The one fault a test expects: a call (or access) into a module that was
 * unloaded, whose old ranges module.c fenced. Not a raise() or kill() (the
 * kernel sent it: si_code > 0), and not a NULL or wild pointer elsewhere.
 */
static void fault_proof(const siginfo_t *si)
{
	bool unloaded = false;

	if (si->si_code > 0 && module_of_address(si->si_addr, &unloaded) && unloaded)
		sim_test_proof("fault");
}

/*
 * A hang is never silent: a thread armed at the test's time-out minus a
 * margin prints the task list, the seed, the replay command and the
 * timeline before Criterion kills the worker.
 */
static pthread_t hang_thread;
static bool hang_armed;
static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cv = PTHREAD_COND_INITIALIZER;
static bool hang_stop;

static double test_timeout_s(void);

/*
 * A parallel test's hung-task time: a third of its time-out. A task blocked
 * for good that long is reported with the line it is stuck at, in time for
 * the rest of a graded lab, where Criterion's kill would say only "timed
 * out". 0 (off) outside a test.
 */
int harness_hung_ms(void)
{
	return in_test ? (int)(test_timeout_s() * 1000 / 3) : 0;
}

static double test_timeout_s(void)
{
	double t = SIM_TEST_TIMEOUT;
#ifdef WORKBOOK_SHIM
	if (criterion_shim_timeout() > 0)
		t = criterion_shim_timeout();
#else
	/* Criterion's test records are packed in a section, unaligned: copy. */
	if (criterion_current_test && criterion_current_test->data) {
		struct criterion_test_extra_data d;

		memcpy(&d, criterion_current_test->data, sizeof(d));
		if (d.timeout > 0)
			t = d.timeout;
	}
	if (criterion_options.timeout > 0 && criterion_options.timeout < t)
		t = criterion_options.timeout;
#endif
	const char *e = getenv("WORKBOOK_HANG_DUMP_S");

	if (e && atof(e) > 0)
		return atof(e);
	/* The margin: a tenth, at least 1 s and at most 5 s. */
	double m = t / 10 < 1 ? 1 : t / 10 > 5 ? 5 : t / 10;

	return t - m > 0.5 ? t - m : 0.5;
}

static void *hang_main(void *arg)
{
	struct timespec ts;
	double s = *(double *)arg;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)s;
	ts.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&hang_lock);
	while (!hang_stop && rc == 0)
		rc = pthread_cond_timedwait(&hang_cv, &hang_lock, &ts);
	bool fire = !hang_stop;

	pthread_mutex_unlock(&hang_lock);
	if (fire)
		sim_report_hang(test_id, s);
	return NULL;
}

static void hang_arm(void)
{
	static double s;

	s = test_timeout_s();
	hang_stop = false;
	hang_armed = pthread_create(&hang_thread, NULL, hang_main, &s) == 0;
}

static void hang_disarm(void)
{
	if (!hang_armed)
		return;
	pthread_mutex_lock(&hang_lock);
	hang_stop = true;
	pthread_cond_signal(&hang_cv);
	pthread_mutex_unlock(&hang_lock);
	pthread_join(hang_thread, NULL);
	hang_armed = false;
}

static void early_exit(const char *how, int code)
{
	fflush(stdout);
	fprintf(stderr, "\nBUG: %s(%d) called before the test reached its end: "
		"the test fails (an early exit never counts as a pass)\n", how, code);
	sim_failure_report("early exit");
	fflush(stderr);
	signal(SIGABRT, SIG_DFL);
	abort();
}

static void exit_guard(void)
{
	if (in_test && !reached_end)
		early_exit("exit", 0);
}

/*
 * Each test's own output goes to its own file, WORKBOOK_TEST_LOG_DIR/
 * SUITE-NAME.log, when the runner names a folder: two tests run side by
 * side (-j2) never interleave, and the runner reads the cause of a failure
 * (the BUG, the task, the replay line) from the failing test's file alone.
 * Criterion runs each test in a worker process of its own, so the
 * redirection ends with the test.
 */
static void redirect_test_output(const char *suite, const char *name)
{
	const char *dir = getenv("WORKBOOK_TEST_LOG_DIR");
	char path[1200];
	int fd;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%s-%s.log", dir, suite, name);
	fflush(stdout);
	fflush(stderr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return;         /* the output stays where it was: still readable */
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/*
 * A real crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, or an abort() the kernel
 * did not report itself) of a test first writes the grader's record if it
 * is the fault the test expects, then says which, where and who, with the
 * seed, the replay command and its timeline: best effort, not async-signal-safe, but the process is dying
 * anyway. ThreadSanitizer (and the shim its build uses) reports a handler's
 * stdio as signal-unsafe, so there only the record is written. SA_RESETHAND
 * re-raises with the default action: Criterion still sees the signal.
 */
static const char *crash_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGFPE:
		return "SIGFPE: an arithmetic error (a division by zero?)";
	case SIGILL:
		return "SIGILL: an illegal instruction";
	default:
		return "SIGABRT: abort() or a failed assert()";
	}
}

#if defined(__x86_64__) && defined(REG_RIP)
#define HAVE_CRASH_CONTEXT 1
/* The general registers a pointer can be in when it faults (not rsp, rip). */
static const struct {
	int reg;
	const char *name;
} crash_regs[] = {
	{ REG_RAX, "rax" }, { REG_RBX, "rbx" }, { REG_RCX, "rcx" }, { REG_RDX, "rdx" },
	{ REG_RSI, "rsi" }, { REG_RDI, "rdi" }, { REG_RBP, "rbp" }, { REG_R8, "r8" },
	{ REG_R9, "r9" },   { REG_R10, "r10" }, { REG_R11, "r11" }, { REG_R12, "r12" },
	{ REG_R13, "r13" }, { REG_R14, "r14" }, { REG_R15, "r15" },
};

/*
 * KASAN's "Freed by task" line: a register that still points into an object
 * in the quarantine is most likely the one the poisoned pointer was read
 * from. Best effort: the compiler may have reused that register already.
 */
static void report_freed_object(const ucontext_t *uc)
{
	struct kmem_free_site s;
	uintptr_t base;
	char fn[128], where[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(crash_regs) / sizeof(crash_regs[0]); i++) {
		uintptr_t v = (uintptr_t)uc->uc_mcontext.gregs[crash_regs[i].reg];

		if (!kmem_freed_site_nowait(v, &base, &s))
			continue;
		fprintf(stderr, "  freed object %#lx (in %s) was kfree()d ", (unsigned long)base,
			crash_regs[i].name);
		if (kcsan_split_pc_nowait(s.caller, fn, sizeof(fn), where, sizeof(where)))
			fprintf(stderr, "by %s() at %s, ", fn, where);
		fprintf(stderr, "in task %s on CPU %d", s.comm, s.cpu);
		if (s.last_file)
			fprintf(stderr, " (its last scheduling point: %s:%d)", s.last_file,
				s.last_line);
		fputc('\n', stderr);
		return;
	}
}

/* A register holding kfree()'s poison bytes (container_of() may take a little off). */
static const char *poison_register(const ucontext_t *uc, uintptr_t *val)
{
	for (size_t i = 0; i < sizeof(crash_regs) / sizeof(crash_regs[0]); i++) {
		uintptr_t v = (uintptr_t)uc->uc_mcontext.gregs[crash_regs[i].reg];

		if (v >> 16 == 0x6b6b6b6b6b6bull) {     /* POISON_FREE in every high byte */
			*val = v;
			return crash_regs[i].name;
		}
	}
	return NULL;
}
#endif

static bool near(uintptr_t a, uintptr_t poison)
{
	return a >= poison && a - poison < 0x100;
}

/*
 * What the faulting address says, the way a Linux oops's headline says it:
 * an unloaded module, a NULL pointer, list_del()'s poison, kfree()'s poison
 * (x86 faults on it as a general protection fault: no address, so the
 * registers tell).
 */
static void crash_headline(int sig, const siginfo_t *si, const void *uc, char *buf, size_t n)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	if (sig != SIGSEGV && sig != SIGBUS) {
		snprintf(buf, n, "crashed with %s", crash_name(sig));
		return;
	}
#ifdef HAVE_CRASH_CONTEXT
	uintptr_t v;
	const char *reg = si->si_code == SI_KERNEL ? poison_register(uc, &v) : NULL;

	if (reg) {
		snprintf(buf, n, "crashed with %s: a pointer read from freed memory (%s = %#lx: "
			 "kfree()'s poison bytes 0x6b, so its object was freed while still in use)",
			 crash_name(sig), reg, (unsigned long)v);
		return;
	}
#else
	(void)uc;
#endif
	bool unloaded = false;
	const char *mod = si->si_code > 0 ? module_of_address(si->si_addr, &unloaded) : NULL;

	if (mod && unloaded)
		snprintf(buf, n, "crashed with %s: an access to unloaded module %s's memory, "
			 "address %#lx", crash_name(sig), mod, (unsigned long)a);
	else if (si->si_code == SI_KERNEL)
		snprintf(buf, n, "crashed with %s: a general protection fault (a wild pointer, "
			 "not a valid address)", crash_name(sig));
	else if (near(a, (uintptr_t)LIST_POISON1) || near(a, (uintptr_t)LIST_POISON2))
		snprintf(buf, n, "crashed with %s: followed list_del()'s poison, address %#lx "
			 "(LIST_POISON1 0x100 is a deleted entry's ->next, LIST_POISON2 0x122 its "
			 "->prev)", crash_name(sig), (unsigned long)a);
	else if (a < 4096)
		snprintf(buf, n, "crashed with %s: a NULL pointer dereference, address %#lx",
			 crash_name(sig), (unsigned long)a);
	else
		snprintf(buf, n, "crashed with %s: an invalid memory access, address %#lx",
			 crash_name(sig), (unsigned long)a);
}

#ifdef HAVE_CRASH_CONTEXT
/* The simulated kernel's code, or code outside the workbook (the C library). */
static bool not_lab_code(const char *where)
{
	return where[0] != '/' || !strncmp(where, "/usr/", 5) || strstr(where, "/common/src/");
}

/*
 * backtrace(), with a way out: where no object maps a frame's address (an
 * unloaded module's code), the unwinder reads the code there to look for a
 * signal trampoline, and faults. That fault ends the unwinding, not the
 * report. The crash handler's own SIGSEGV is reset already (SA_RESETHAND),
 * so the dispositions restored afterwards are the defaults the final
 * raise() needs.
 */
static sigjmp_buf unwind_escape;

static void unwind_fault(int sig)
{
	(void)sig;
	siglongjmp(unwind_escape, 1);
}

static int careful_backtrace(void **frames, int max)
{
	struct sigaction sa, old_segv, old_bus;
	volatile int n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = unwind_fault;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (!sigsetjmp(unwind_escape, 1))
		n = backtrace(frames, max);
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return n;
}

/*
 * "called from" lines for the lab's own frames (the student's, the tests')
 * among FRAMES[from..n): a kernel helper or the C library that failed was a
 * student's or a test's call. A frame at @skip ("file:line", or NULL) is the
 * site already named.
 */
static void lab_callers(FILE *f, void **frames, int from, int n, const char *skip)
{
	char fn[128], where[PATH_MAX + 16];
	int shown = 0;

	for (int i = from; i < n && shown < 3; i++) {
		if (!kcsan_split_pc_nowait((uintptr_t)frames[i], fn, sizeof(fn), where,
					   sizeof(where)) || not_lab_code(where))
			continue;
		if (skip && !strcmp(where, skip))
			continue;
		fprintf(f, "  called from %s in %s()\n", where, fn);
		shown++;
	}
}

/*
 * "at FILE:LINE in fn()" of the instruction that faulted, then the lab's
 * frames that led there.
 */
static void crash_site(const void *uc)
{
	char fn[128], where[PATH_MAX + 16];
	uintptr_t rip = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	void *frames[48];
	int n = careful_backtrace(frames, 48), i = 0;

	/* the faulting instruction itself: +1, since the lookup takes a return address */
	if (kcsan_split_pc_nowait(rip + 1, fn, sizeof(fn), where, sizeof(where)) &&
	    where[0] == '/' && strncmp(where, "/usr/", 5))
		fprintf(stderr, "  at %s in %s()\n", where, fn);
	while (i < n && (uintptr_t)frames[i] != rip)
		i++;            /* the handler's own frames */
	lab_callers(stderr, frames, i + 1, n, NULL);
}

void sim_report_lab_callers(FILE *f, const char *file, int line)
{
	char at[PATH_MAX + 16];
	void *frames[48];
	int n = careful_backtrace(frames, 48);

	snprintf(at, sizeof(at), "%s:%d", file, line);
	lab_callers(f, frames, 0, n, at);
}
#else
static void crash_site(const void *uc)
{
	(void)uc;
}

void sim_report_lab_callers(FILE *f, const char *file, int line)
{
	(void)f;
	(void)file;
	(void)line;
}
#endif

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	if (sig == SIGSEGV)
		fault_proof(si);        /* the grader's record first: one write(2) */
#if !defined(WORKBOOK_SHIM) && !defined(__SANITIZE_THREAD__)
	/* The kernel's own abort() after its BUG report has said everything. */
	if (sig != SIGABRT || !sim_failure_what[0]) {
		crash_headline(sig, si, uc, sim_failure_what, sizeof(sim_failure_what));
		fprintf(stderr, "\nBUG: %s\n", sim_failure_what);
#ifdef HAVE_CRASH_CONTEXT
		if (strstr(sim_failure_what, "freed memory"))
			report_freed_object(uc);
#endif
		if (sig != SIGABRT)
			crash_site(uc);
		sim_report_crash();
	}
#else
	(void)uc;
#endif
	raise(sig);
}

static void catch_crashes(void)
{
	struct sigaction sa;
	void *frame;

	backtrace(&frame, 1);   /* it loads libgcc_s once: here, not in a crash handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}

#ifndef WORKBOOK_SHIM
/*
 * Every Criterion assertion goes through criterion_send_assert(); test
 * binaries are linked with -Wl,--wrap=criterion_send_assert, so a failing
 * one is seen here first: its message and the moment it fired go into the
 * trace (the timeline's red line).
 */
void __real_criterion_send_assert(struct criterion_assert_stats *stats);
void __wrap_criterion_send_assert(struct criterion_assert_stats *stats)
{
	if (in_test && !stats->passed && !sim_failure_what[0]) {
		snprintf(sim_failure_what, sizeof(sim_failure_what), "%s",
			 stats->message && *stats->message ? stats->message : "assertion failed");
		trace_event(TR_BUG, sim_failure_what, 0);
		fprintf(stderr, "assertion failed at %s:%u: %s\n", stats->file, stats->line,
			sim_failure_what);
	}
	__real_criterion_send_assert(stats);
}
#endif

void sim_test_begin(const char *lab, const char *suite, const char *name)
{
	sim_failure_what[0] = 0;
	redirect_test_output(suite, name);
	catch_crashes();
	snprintf(test_id, sizeof(test_id), "%s/%s", suite, name);
	snprintf(sim_failure_tag, sizeof(sim_failure_tag), "%s-%s-%s", lab, suite, name);
	snprintf(sim_replay_cmd, sizeof(sim_replay_cmd),
		 "./workbook check %s --test %s", lab, test_id);
}

void sim_test_setup(void)
{
	static bool registered;

	if (!registered) {
		atexit(exit_guard);
		at_quick_exit(exit_guard);
		registered = true;
	}
	in_test = true;
	reached_end = false;
	setvbuf(stdout, NULL, _IONBF, 0);
	hang_arm();
}

void sim_test_teardown(void)
{
	hang_disarm();
	if (in_test && !reached_end) {
		fprintf(stderr, "test %s did not reach its end\n", test_id);
		if (!sim_failure_what[0]) {
			snprintf(sim_failure_what, sizeof(sim_failure_what),
				 "the test did not reach its end");
			trace_event(TR_BUG, "did not reach its end", 0);
		}
		sim_failure_report(test_id);
	}
	in_test = false;
}

void sim_test_end(void)
{
	long leaks = sim_booted() ? sim_halt() : 0;

	cr_assert(leaks == 0, "%ld kmalloc()ed object(s) never kfree()d (listed on stderr)",
		  leaks);
	if (RUNNING_ON_VALGRIND) {
		unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;

		VALGRIND_DO_LEAK_CHECK;
		VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
		unsigned errors = VALGRIND_COUNT_ERRORS;

		cr_assert(errors == 0 && leaked == 0,
			  "Valgrind: %u memory error(s), %lu byte(s) definitely leaked "
			  "(details on stderr)", errors, leaked);
		(void)dubious;
		(void)reachable;
		(void)suppressed;
	}
#ifdef HAVE_LSAN
	cr_assert(__lsan_do_recoverable_leak_check() == 0,
		  "LeakSanitizer found leaks (details on stderr)");
#endif
	reached_end = true;
	sim_test_proof("end");
}

int sim_seeds_count(void)
{
	const char *s = getenv("WORKBOOK_SEEDS");
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : 20;
}

/* What sim_call_in_irq() calls, per CPU (one pending call a CPU). */
static void (*irq_call_fn[NR_CPUS])(void);

static void irq_call_handler(void *cpu)
{
	irq_call_fn[(intptr_t)cpu]();
}

void sim_call_in_irq(int cpu, void (*fn)(void), const char *name)
{
	if (cpu < 0 || cpu >= NR_CPUS)
		sim_bug(__FILE__, __LINE__, "sim_call_in_irq(%d): no such CPU", cpu);
	irq_call_fn[cpu] = fn;   /* raise_irq() orders this store before the handler */
	raise_irq(cpu, irq_call_handler, (void *)(intptr_t)cpu, name);
	sim_run_until_idle();
}

void sim_run_seeds(const struct sim_config *base, sim_scenario_fn fn, void *arg)
{
	const char *one = getenv("WORKBOOK_SEED");
	int n = (one && *one) ? 1 : sim_seeds_count();

	for (int i = 0; i < n; i++) {
		struct sim_config cfg = base ? *base : sim_default_config();

		if (one && *one)
			cfg.seed = strtoull(one, NULL, 0);
		else
			cfg.seed = (uint64_t)i + 1;
		sim_boot(&cfg);
		fn(arg);
		long leaks = sim_halt();

		cr_assert(leaks == 0, "seed %llu: %ld kmalloc()ed object(s) never kfree()d",
			  (unsigned long long)cfg.seed, leaks);
	}
}
