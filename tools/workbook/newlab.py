"""./workbook new-lab NN-name: the skeleton of a new lab that passes the
selftest as it is.

Rule kept here: the skeleton is a real, tiny lab (one TODO, two tests, a
hint for each, a quiz question), so that every check the selftest makes of a
lab already holds for it; a maintainer then grows it. Nothing is written if
anything is in the way: a bad name, a number or folder already taken.
"""
import os
import re
import subprocess
import sys

from .common import LABS, ROOT, SOLUTIONS, Fail, say

NAME = re.compile(r"^(\d\d)-([a-z][a-z0-9]*(?:-[a-z0-9]+)*)$")


def _header(stem, label, title):
    guard = f"{stem.upper()}_H"
    return f"""/*
 * {stem}.h - what {stem}.c and the tests of {label} share.
 *
 * Rule kept here: only declarations; the tests see the student's file
 * through this header and nothing else.
 */
#ifndef {guard}
#define {guard}

/* {title}: one more event on the calling CPU (TODO 1). */
void {label}_count_event(void);

/* The events counted so far on every CPU (given). */
long {label}_events_total(void);

/* The events counted so far on @cpu (given). */
long {label}_events_on(int cpu);

#endif /* {guard} */
"""


def _student(stem, label, title):
    return f"""/*
 * {stem}.c - {label}: {title}.
 *
 * Rule kept here: each CPU counts its own events, with interrupts off on
 * that CPU (an interrupt handler there may count too); whoever wants the
 * total sums every CPU's count with READ_ONCE(), and may see one that is
 * already old. This is the skeleton `./workbook new-lab` wrote: replace it
 * with the lab's own code, keeping the markers' rules (tools/gen_starter.py).
 */
#include <linux/compiler.h>
#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include "{stem}.h"

static DEFINE_PER_CPU(long, {label}_events);

/*
 * TODO 1: add one to this CPU's count, with interrupts off while you do
 * (local_irq_save()): a handler that interrupts the read-modify-write would
 * have its own event overwritten.
 */
void {label}_count_event(void)
{{
	/* BEGIN SOLUTION */
	unsigned long flags;
	long *count;

	local_irq_save(flags);
	count = this_cpu_ptr(&{label}_events);
	WRITE_ONCE(*count, *count + 1);
	local_irq_restore(flags);
	/* END SOLUTION */
}}

long {label}_events_total(void)
{{
	long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += {label}_events_on(cpu);
	return sum;
}}

long {label}_events_on(int cpu)
{{
	return READ_ONCE(*per_cpu_ptr(&{label}_events, cpu));
}}
"""


def _tests(stem, label):
    return f"""/*
 * test_{stem}.c - {label}'s tests: events counted on one CPU, then on every CPU.
 *
 * Rule kept here: a kthread never asserts (cr_assert belongs to the test's
 * own thread); it counts, and the test asserts on the totals afterwards.
 * Totals are compared as differences: the counts live as long as the test's
 * process, across the seeds.
 */
#include <linux/kthread.h>
#include <linux/smp.h>
#include <sim/test.h>
#include "{stem}.h"

static int count_three(void *arg)
{{
	(void)arg;
	for (int i = 0; i < 3; i++)
		{label}_count_event();
	return 0;
}}

static void counted_on_one_cpu(void *arg)
{{
	long before = {label}_events_total();

	(void)arg;
	kthread_stop(kthread_run_on_cpu(count_three, NULL, 1, "counter/%u"));
	cr_assert_eq({label}_events_total() - before, 3,
		     "seed %llu: 3 events counted on CPU 1, the total grew by %ld: does "
		     "{label}_count_event() add one to this CPU's count (TODO 1)?",
		     (unsigned long long)sim_seed(), {label}_events_total() - before);
}}

SIM_TEST_SEEDS(events, counted_on_one_cpu, counted_on_one_cpu,
	       .description = "three events counted on CPU 1 make the total grow by three")

static int count_one(void *arg)
{{
	(void)arg;
	{label}_count_event();
	return 0;
}}

static void counted_on_every_cpu(void *arg)
{{
	struct task_struct *t[NR_CPUS];
	long before[NR_CPUS];
	int cpu, n = 0;

	(void)arg;
	for_each_possible_cpu(cpu)
		before[cpu] = {label}_events_on(cpu);
	for_each_possible_cpu(cpu)
		t[n++] = kthread_run_on_cpu(count_one, NULL, (unsigned int)cpu, "counter/%u");
	for (int i = 0; i < n; i++)
		kthread_stop(t[i]);
	for_each_possible_cpu(cpu)
		cr_assert_eq({label}_events_on(cpu) - before[cpu], 1,
			     "seed %llu: one event counted on each CPU at once, CPU %d's count grew "
			     "by %ld: is the count the calling CPU's own, taken with this_cpu_ptr() "
			     "(TODO 1)?", (unsigned long long)sim_seed(), cpu,
			     {label}_events_on(cpu) - before[cpu]);
}}

SIM_TEST_SEEDS(events, counted_on_every_cpu, counted_on_every_cpu,
	       .description = "one event counted on each CPU at once makes each CPU's own "
			      "count grow by one")
"""


def _manifest(name, stem, label, title):
    import json
    return json.dumps({
        "name": name,
        "label": label,
        "title": title,
        "api": {"defines": [f"{label}_count_event", f"{label}_events_total", f"{label}_events_on"]},
        "files": [f"{stem}.c"],
        "uses": [],
        "race_watch": True,
        "late_stores": True,
        "early_loads": True,
        "tests": [
            {"name": "events/counted_on_one_cpu", "points": 50, "visibility": "visible",
             "hint": f"Three events on CPU 1 must make {label}_events_total() grow by three: "
                     f"{label}_count_event() adds one to the calling CPU's count (TODO 1)."},
            {"name": "events/counted_on_every_cpu", "points": 50, "visibility": "visible",
             "hint": "One event on each CPU at once: each CPU adds to its own count, "
                     "this_cpu_ptr(), never to another's (TODO 1)."},
        ],
        "hints": [
            "Each CPU has its own count: DEFINE_PER_CPU() made one per CPU, and this_cpu_ptr() "
            "gives the calling CPU's (TODO 1).",
            "Adding one is a load and a store: an interrupt between them on this CPU would count "
            "its own event and then see it overwritten. Keep interrupts off around both "
            "(local_irq_save(), local_irq_restore()).",
        ],
        "format": 1,
    }, indent=2) + "\n"


def _readme(name, stem, num, label, title):
    return f"""# Lab {num}: {title}

One paragraph on what this lab builds and why, in the words of the article or of today's kernel.
(Written by `./workbook new-lab`: a skeleton to replace. `docs/instructors.md`, "Adding a lab",
says what each file is for.)

## Objectives

- count an event on the calling CPU, safely against an interrupt on the same CPU.

## Files

| function | what you write | TODO |
| --- | --- | --- |
| `{label}_count_event()` in `{stem}.c` | one more event on this CPU | 1 |

`tests/{stem}.h` declares what the tests call; `{label}_events_total()` and `{label}_events_on()` are given.

## Background

Per-CPU data: each CPU writes only its own copy, so writers never contend; a reader that wants
the whole sums every CPU's copy and accepts that the sum is already old when it returns.

## Steps

1. Take the calling CPU's count with `this_cpu_ptr()` and add one to it, with interrupts off
   around the load and the store (TODO 1).

## What the tests check

| test | points | what it shows |
| --- | --- | --- |
| `events/counted_on_one_cpu` | 50 | three events on CPU 1 make the total grow by three |
| `events/counted_on_every_cpu` | 50 | one event on each CPU at once makes each CPU's own count grow by one |

## Running the tests

```sh
./workbook check {name}
./workbook check {num} --test events/counted_on_one_cpu --verbose
```

## Quick Quiz

Test your understanding with the [Quick Quiz of lab {num}](../../quizzes/{name}.md).
"""


def _quiz(name, num, label):
    return f"""# Quick Quiz: lab {num}

Questions about [lab {num}](../labs/{name}/README.md). Try each before opening its answer.

## Questions

<a id="q{num}-1"></a>
**Quick Quiz {num}.1:** Why does `{label}_count_event()` keep interrupts off while it adds one,
when no other CPU ever writes this CPU's count?

[Answer](#a{num}-1)

## Answers

<a id="a{num}-1"></a>
**Answer {num}.1:** Because an interrupt handler on the *same* CPU may count an event too. If it
arrives between the load and the store of the addition, the store that resumes writes the old
value plus one over the handler's: one event lost. Other CPUs never write this count, so no lock
is needed; only this CPU's interrupts are in the way.

[Back to the question](#q{num}-1)
"""


def _mutant(name, stem, label, solution):
    """The skeleton's one mutant (every lab has some: the selftest proves each
    is caught); the paths it wrote."""
    import json
    import tempfile
    from types import SimpleNamespace
    from . import mutants
    mname, rel = "counts_on_cpu_0", f"{stem}.c"
    right = f"count = this_cpu_ptr(&{label}_events);"
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(solution.replace(right, f"count = per_cpu_ptr(&{label}_events, 0);"))
    killed_by = ["events/counted_on_every_cpu"]
    desc = "every CPU counts in CPU 0's slot, not its own"
    try:
        text = mutants.patch_text(SimpleNamespace(name=name), mname, desc, killed_by, rel, f.name)
    finally:
        os.unlink(f.name)
    d = os.path.join(SOLUTIONS, name, "mutants")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, mname + ".patch"), "w") as out:
        out.write(text)
    with open(os.path.join(d, "index.json"), "w") as out:
        json.dump([{"name": mname, "description": desc, "killed_by": killed_by}], out, indent=2)
        out.write("\n")
    return [os.path.join(d, mname + ".patch"), os.path.join(d, "index.json")]


README_LABS = "\nThe labs: "


def _list_in_readme(name, title):
    """Add NAME to README.md's paragraph of the labs ("The labs: ..."), which
    the selftest checks names every lab; False where there is none."""
    path = os.path.join(ROOT, "README.md")
    with open(path) as f:
        text = f.read()
    start = text.find(README_LABS)
    if start < 0:
        return False
    end = text.find("\n\n", start + 1)
    with open(path, "w") as f:
        f.write(text[:end] + f"\n`{name}`: {title}." + text[end:])
    return True


def cmd_new_lab(a):
    """new-lab NN-name [--title TEXT]: write the skeleton, derive its starter,
    regenerate the Classroom workflow, and say what comes next."""
    m = NAME.match(a.name)
    if not m:
        raise Fail(f"new-lab {a.name}: a lab's name is NN-name, two digits, a dash and "
                   f"lower-case words joined by dashes (08-expedited)", 2)
    num, stem = int(m.group(1)), m.group(2).replace("-", "_")
    label = f"lab{num}"
    taken = [d for d in os.listdir(LABS) + os.listdir(SOLUTIONS) if d[:2] == m.group(1)]
    if taken:
        raise Fail(f"new-lab {a.name}: number {m.group(1)} is taken by {sorted(set(taken))[0]}: "
                   f"pick another", 2)
    title = a.title or m.group(2).replace("-", " ")
    lab_dir, sol_dir = os.path.join(LABS, a.name), os.path.join(SOLUTIONS, a.name)
    quiz = os.path.join(ROOT, "quizzes", f"{a.name}.md")
    if os.path.exists(quiz):
        raise Fail(f"new-lab {a.name}: {os.path.relpath(quiz, ROOT)} exists already", 2)
    files = {
        os.path.join(sol_dir, f"{stem}.c"): _student(stem, label, title),
        os.path.join(lab_dir, "tests", f"{stem}.h"): _header(stem, label, title),
        os.path.join(lab_dir, "tests", f"test_{stem}.c"): _tests(stem, label),
        os.path.join(lab_dir, "lab.json"): _manifest(a.name, stem, label, title),
        os.path.join(lab_dir, "README.md"): _readme(a.name, stem, num, label, title),
        quiz: _quiz(a.name, num, label),
    }
    for path, text in files.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    import gen_starter
    solution = files[os.path.join(sol_dir, f"{stem}.c")]
    with open(os.path.join(lab_dir, f"{stem}.c"), "w") as f:
        f.write(gen_starter.starter(solution))
    made = list(files) + [os.path.join(lab_dir, f"{stem}.c")] + _mutant(a.name, stem, label, solution)
    workflow = os.path.join(ROOT, "grading", "github-classroom")
    with open(os.path.join(workflow, "classroom.yml"), "w") as f:
        subprocess.run([sys.executable, os.path.join(workflow, "make-workflow.py")],
                       stdout=f, check=True, cwd=ROOT)
    made = sorted(os.path.relpath(p, ROOT) for p in made)
    listed = _list_in_readme(a.name, title)
    say(f"new lab {a.name} ({label}): wrote {', '.join(made)}; "
        f"regenerated grading/github-classroom/classroom.yml" +
        ("; added it to README.md's list of the labs" if listed else ""))
    say(f"next: git add labs/{a.name} solutions/{a.name} quizzes/{a.name}.md, then "
        f"./workbook selftest --quick {num} (docs/instructors.md, \"Adding a lab\")")
    return 0
