/**
 * @file module.h
 * @brief Loadable modules: shared objects loaded with insmod(), unloaded with rmmod().
 *
 * Rule kept here: after rmmod() the module's code is really gone: its pages
 * are unmapped and fenced off, so a call into them faults every time instead
 * of running whatever was loaded there next. Before such a call through an
 * RCU callback, rcu_invoke_callback() reports it by name.
 * @ingroup modules
 */
#ifndef LINUX_MODULE_H
#define LINUX_MODULE_H

#include <stdbool.h>
#include <linux/types.h>

/** @addtogroup modules
 * @{ */

/*
 * Each module's entry points are functions, not data: every module defines
 * the same three names, and only a function may be defined by two loaded
 * objects at once without an AddressSanitizer odr-violation. insmod() finds
 * them with dlsym() in the object it loaded, never in another module.
 */
/** Name a module's init function (one per module). @code module_init(mymod_init); @endcode */
#define module_init(fn)                                         \
	int __sim_module_init(void);                            \
	int __sim_module_init(void) { return (fn)(); }          \
	extern int __sim_module_init_defined
/** Name a module's exit function (one per module). */
#define module_exit(fn)                                         \
	void __sim_module_exit(void);                           \
	void __sim_module_exit(void) { (fn)(); }                \
	extern int __sim_module_exit_defined
/** The module's name, as rmmod() and reports know it (a string literal). */
#define MODULE_NAME(n)                                          \
	const char *__sim_module_name(void);                    \
	const char *__sim_module_name(void) { return (n); }     \
	extern int __sim_module_name_defined
/** Licence tag; informative only. */
#define MODULE_LICENSE(l) extern int __sim_module_license_defined

/**
 * insmod() - Simulation only: load the module in the shared object at @p path and run its
 * init function. May sleep.
 * @return 0, or the init function's error (the module is then unloaded),
 * or -ENOENT if the object cannot be loaded (dlerror() is printed).
 */
int insmod(const char *path);

/**
 * rmmod() - Simulation only: run module @p name's exit function, then unload it: dlclose(),
 * a check that it is gone, and its old address ranges fenced so any later
 * call there faults. It does not wait for anything the exit function did not
 * wait for: that is the module's job (see rcu_barrier()). May sleep.
 * @return 0, or -ENOENT if no such module is loaded.
 */
int rmmod(const char *name);

/**
 * module_of_address() - Simulation only: the name of the module (loaded or unloaded) whose
 * code contains @p addr, or NULL for the kernel proper.
 * @param addr any address, typically a callback's function.
 * @param[out] unloaded set to true if that module has been unloaded.
 */
const char *module_of_address(const void *addr, bool *unloaded);

/**
 * module_is_loaded() - Simulation only: true while module @p name is loaded.
 */
bool module_is_loaded(const char *name);

/**
 * rcu_invoke_callback() - Simulation only: invoke an RCU callback the way the kernel does:
 * trace it, check that its function does not lie in an unloaded module
 * (BUG: "callback into unloaded module <name>" otherwise), then call it.
 * Every callback-invoking loop in the labs calls this instead of
 * `head->func(head)`. The check can be switched off
 * (sim_config::check_module_callbacks) to see the real fault.
 */
void rcu_invoke_callback(struct rcu_head *head);

/**
 * rcu_invoking_callback() - Simulation only: the function of the callback
 * this thread is running through rcu_invoke_callback() right now, or NULL.
 * A test's callback asks it to see that the RCU under test invoked it the
 * way the kernel does; a callback called as `head->func(head)` gets NULL
 * (or, inside another callback, that one's function). It does not say which
 * CPU or kthread invoked it.
 */
rcu_callback_t rcu_invoking_callback(void);

/** What the kernel counted for one module name since boot (module_counts()). */
struct module_counts {
	long inits;    /**< init functions that returned 0 */
	long exits;    /**< exit functions that returned (rmmod()) */
	long queued;   /**< callbacks with a function in the module, reported queued
	                    (trace_rcu_callback_queued(), which call_rcu() calls) */
	long invoked;  /**< such callbacks invoked through rcu_invoke_callback() */
};

/**
 * module_counts() - Simulation only: the counts for module @p name, over
 * every time it was loaded since boot. Tests read them after the module is
 * gone, so the module itself keeps no test counters. Linux has nothing alike
 * (tracepoints and kmemleak come nearest).
 *
 * Does not promise a consistent snapshot while callbacks run on other CPUs:
 * each count is exact, the four are read one by one.
 */
struct module_counts module_counts(const char *name);

/**
 * rcu_cb_pass_begin() - Simulation only: a callback kthread calls it at the
 * start of every pass over its ready callbacks (Linux's rcu_do_batch() has
 * the trace_rcu_batch_start() tracepoint there, and nothing a test can hold).
 *
 * The kthread steps off its CPU (a context switch, as rcuo giving way to other
 * work between batches), passes the named points "rcu_cb_pass" (any CPU's
 * pass) and "rcu_cb_pass/N" (a pass of the kthread on CPU N), and comes back
 * to its CPU. A test may count passes there or hold them for as long as it
 * likes without stalling grace periods. In parallel mode, while no test holds
 * either point and no other task waits for the CPU, the step off and back is
 * made in place: the same quiescent state and the same counts, without two
 * thread hand-overs that nothing could observe. Call it from a task that holds a CPU,
 * outside any read-side critical section: it may sleep. Does not promise when
 * the kthread gets its CPU back: other tasks there may run first.
 */
void rcu_cb_pass_begin(void);

/** @} */
#endif
