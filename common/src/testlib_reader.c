/*
 * testlib_reader.c - the readers of sim/testlib.h, apart from testlib.c
 * because they call lab 1's rcu_read_lock(): a test binary that does not
 * link lab 1 (lab 5's) must never pull them in from the static library.
 *
 * Rule kept here: a held reader stops inside its read-side section at a
 * named point, keeping its CPU, until the test lets it go.
 */
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <sim/test.h>
#include <sim/testlib.h>

static int held_reader_fn(void *point)
{
	rcu_read_lock();
	sim_point(point);
	rcu_read_unlock();
	return 0;
}

struct task_struct *reader_held_at(int cpu, const char *point)
{
	return sim_kthread_run_held(point, held_reader_fn, (void *)point, (unsigned int)cpu,
				    "reader/%u");
}

void reader_let_go(struct task_struct *reader, const char *point)
{
	trace_mark("the reader leaves");
	sim_release_point(point);
	sim_run_until_idle();
	kthread_stop(reader);
}
