"""The student's commands: status, check, hint, watch."""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import time

from .build import build, configure, first_error
from .common import Fail, JOBS, LABS, ROOT, SOLUTIONS, say, warn
from . import objcheck, real
from .manifest import SEEDS, TODO_OPENS, cited_todos, find_lab, select_labs
from .run import FOUND_IN_KERNEL, exe_path, is_stress_name, list_tests, read_log, run_tests, score_lab


def released_solutions(labs):
    """The labs among LABS (and the labs they use) whose solutions/ this copy holds."""
    names = {n for l in labs for n in [l.name] + l.builds_on()}
    return sorted(n for n in names if os.path.isdir(os.path.join(SOLUTIONS, n)))


def prior_words(labs, prior):
    """What the earlier labs are built from, truthfully."""
    if prior == "own":
        return "your own earlier labs"
    if not os.path.isdir(SOLUTIONS):
        raise Fail("--prior solutions: this copy holds no solutions/ (none released yet); "
                   "without --prior your own earlier labs are used")
    rel = released_solutions(labs)
    uses = sorted({n for l in labs for n in l.builds_on()})
    missing = [n for n in uses if n not in rel]
    return ("earlier labs from solutions/" if not missing else
            f"earlier labs from solutions/ where released ({', '.join(rel) or 'none'}), "
            f"your own for {', '.join(missing)}")


def student_build(labs, prior, werror=False):
    bdir = os.path.join(ROOT, "build-wb-default" if prior == "own" else "build-wb-prior")
    ok, out = configure(bdir, "labs", prior, werror)
    if not ok:
        raise Fail(f"cmake failed: {first_error(out)}", 1)
    return bdir


def is_stress(test):
    """The parallel stress tier (run.is_stress_name()): check runs it only
    once the deterministic tests pass."""
    return is_stress_name(test["name"])


# The environment that says which run a check is: the seed(s), the mode and
# the deterministic scheduler's strategy (what a failure's replay command
# sets). It is passed on to the tests, and a cached result is reused only
# for the same values.
RUN_ENV = ("WORKBOOK_SEED", "WORKBOOK_SEEDS", "WORKBOOK_MODE", "WORKBOOK_SCHED",
           "WORKBOOK_PCT_DEPTH", "WORKBOOK_PCT_STEPS", "WORKBOOK_SCHEDULE")


def run_env(lab=None):
    """The RUN_ENV variables set (and not empty) here; for LAB, its check_seeds
    as WORKBOOK_SEEDS unless the user set how many seeds run."""
    env = {k: os.environ[k] for k in RUN_ENV if os.environ.get(k)}
    if lab is not None and "WORKBOOK_SEEDS" not in env and lab.check_seeds < SEEDS:
        env["WORKBOOK_SEEDS"] = str(lab.check_seeds)
    return env


class Hidden:
    """LAB's hidden tests that this build cannot run. Their source is the
    instructor's (solutions/NN/tests): the grader adds it, a student's copy
    cannot, so check, status and watch count them apart instead of failing
    them. A handout's lab.json only counts them (hidden_tests); the
    instructor's copy lists them, and those its build lacks are skipped."""

    def __init__(self, bdir, lab):
        self.names, self.count, self.points = set(), 0, 0
        if lab.hidden_summary:
            self.count = lab.hidden_summary["count"]
            self.points = lab.hidden_summary["points"]
            return
        hidden = [t for t in lab.tests if t.get("visibility") == "hidden"]
        if hidden:    # a --list run only for a lab that has some
            have = set(list_tests(exe_path(bdir, lab)))
            hidden = [t for t in hidden if t["name"] not in have]
        self.names = {t["name"] for t in hidden}
        self.count = len(hidden)
        self.points = sum(int(t.get("points", 0)) for t in hidden)

    def __bool__(self):
        return self.count > 0

    def words(self):
        """'6 hidden tests (50 points) that only the grader runs'."""
        return (f"{self.count} hidden test{'s' if self.count > 1 else ''} ({self.points} "
                f"points) that only the grader runs")


def prior_option(prior):
    """The option that rebuilds what this run built on ('' for the default)."""
    return " --prior solutions" if prior == "solutions" else ""


def keep_prior(res, prior):
    """RES with every './workbook check LAB --test T' command in its messages
    (the replay lines) carrying --prior too: a replay must build on what the
    run built on."""
    if prior != "solutions" or res is None:
        return res
    cmd = re.compile(r"(\./workbook check \S+ --test \S+)")
    return {n: (ok, [cmd.sub(lambda m: m.group(1) + prior_option(prior), x) for x in msgs])
            for n, (ok, msgs) in res.items()}


def run_lab(bdir, lab, only_test=None, echo=False, names=None, prior="own"):
    ok, err, _ = build(bdir, [lab.target])
    if not ok:
        return None, err, []
    exe = exe_path(bdir, lab)
    hidden = Hidden(bdir, lab).names
    names = [n for n in (names if names is not None else lab.names()) if n not in hidden]
    if only_test:
        if only_test in hidden:
            raise Fail(f"{only_test} is one of {lab.name}'s hidden tests: only the grader "
                       f"runs it (the tests you can run: ./workbook check {lab.name} --list)")
        if only_test not in lab.names() and only_test not in list_tests(exe):
            raise Fail(f"{lab.name} has no test '{only_test}' (see ./workbook check {lab.name} --list)")
        names = [only_test]
    clear_traces(lab, names)
    res, logs = run_tests(exe, names, os.path.join(bdir, "runs", lab.label), lab.timeouts(), JOBS, echo,
                          run_env(lab), trace_dir=os.path.join(ROOT, "traces"))
    return keep_prior(res, prior), "", logs


def unfinished_uses(bdir, lab, prior):
    """The earlier labs LAB builds on that are the student's own here and do
    not pass every test yet: [(lab, tests failing or None when it does not
    build, tests)]. Their results are status's (cached), else a fresh run."""
    released = set(released_solutions([lab])) if prior == "solutions" else set()
    out = []
    for name in lab.builds_on():
        if name in released:
            continue
        u = find_lab(name)
        res = cached_result(bdir, u)
        if res is None:
            res, _, _ = run_lab(bdir, u)
            if res is not None:
                store_result(bdir, u, res)
        failing = None if res is None else sum(1 for v in res.values() if not v[0])
        if failing != 0:
            out.append((u, failing, len(u.tests)))
    return out


def uses_note(lab, unfinished):
    """'runs on your 01-synchronize-rcu, which fails 3 of its 17 tests' and the like."""
    parts = [f"{u.name}, which " + ("does not build" if failing is None else
                                    f"fails {failing} of its {n} tests")
             for u, failing, n in unfinished]
    return f"{lab.name} runs on your " + "; and on your ".join(parts)


def reference_offer(lab):
    """How to build LAB on the released reference of what it uses, or ''."""
    if not set(lab.builds_on()) & set(released_solutions([lab])):
        return ""
    return f", or build on the released reference: ./workbook check {lab.name} --prior solutions"


def clear_traces(lab, names):
    """traces/ holds the last run's pictures only: drop those of the tests
    about to run (any seed), so that a picture left there is current."""
    d = os.path.join(ROOT, "traces")
    tags = [f"{lab.name}-{n.replace('/', '-', 1)}-seed" for n in names]
    try:
        files = os.listdir(d)
    except OSError:
        return
    for f in files:
        if f.endswith(".svg") and any(f.startswith(t) for t in tags):
            try:
                os.unlink(os.path.join(d, f))
            except OSError:
                pass


def seeds_note(lab):
    """What a student's run of LAB leaves out of the grade's, or ''."""
    if lab.check_seeds >= SEEDS or os.environ.get("WORKBOOK_SEEDS") or \
            os.environ.get("WORKBOOK_SEED"):
        return ""
    return (f"each seed sweep ran {lab.check_seeds} of the {SEEDS} seeds the grade runs "
            f"(WORKBOOK_SEEDS={SEEDS} ./workbook check {lab.name} runs them all)")


def first_failing(lab, res):
    """The first failing test in the manifest's (the teaching) order."""
    for t in lab.tests:
        if t["name"] in res and not res[t["name"]][0]:
            return t
    return None


def student_files(lab):
    """{path relative to ROOT: absolute path} of the student's files of LAB
    and of the labs it uses."""
    out = {}
    for name in [lab.name] + lab.uses:
        try:
            l = find_lab(name)
        except Fail:
            continue
        for f in l.files:
            out[f"labs/{l.name}/{f}"] = os.path.join(LABS, l.name, f)
    return out


def todo_region(path, line):
    """The TODO the line LINE of PATH lies in (the nearest comment above it
    that opens a TODO, inside the same function or above it at the top
    level) and the function it lies in: (n, name), with n None for given
    code."""
    try:
        with open(path, errors="replace") as f:
            text = f.read().splitlines()
    except OSError:
        return None, None
    n = fn = None
    for k in range(min(line, len(text)) - 1, -1, -1):
        m = TODO_OPENS.search(text[k])
        if m and n is None:
            if fn is not None and text[k].startswith("\t"):
                break   # a TODO in an earlier function's body: given code, no TODO's
            n = int(m.group(1))
        d = re.match(r"^[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;]*$", text[k])
        if d and fn is None and d.group(1) not in ("if", "while", "for", "switch"):
            fn = d.group(1)
        if n is not None and fn is not None:
            break
    return n, fn


def without_found_site(msg):
    """MSG without the lab frame a kernel check was reached from (run.py's
    FOUND_IN_KERNEL): where a BUG was found, which is not why."""
    return re.sub(rf" - {FOUND_IN_KERNEL} \S+( in \S+\(\))?", "", msg)


def blamed_todo(lab, msgs):
    """(TODO number, 'file:line') the failure is really about: the first
    file:line of the failure's BUG or stuck task that lies in a student's
    file, or (None, None) when the cause is outside the student's files.
    Of a data race's two accesses, a marked one is never the cause."""
    files = student_files(lab)
    race = race_blame(files, msgs)
    if race is not None:
        return race
    for m in msgs:
        if re.search(r"\(marked\) of \d+ bytes by ", m):
            continue
        m = without_found_site(m)
        for path, line in re.findall(r"(labs/[\w.-]+/[\w.-]+):(\d+)", m):
            if path in files and "/tests/" not in path:
                n, fn = todo_region(files[path], int(line))
                if n is not None:
                    return n, f"{path}:{line}" + (f", in {fn}()" if fn else "")
    if msgs and msgs[0].startswith("BUG: "):
        return named_function_todo(files, without_found_site(msgs[0]))
    return None, None


def race_blame(files, msgs):
    """Of a data race between two plain accesses of the student's files, the
    report cannot say which side lacks its lock or mark: (TODO, where) when
    both lie in one TODO, (None, None) when they do not (the test's hint
    then leads, not the side that happened to detect it); None when MSGS is
    no such race."""
    if not msgs or "KCSAN: data-race" not in msgs[0]:
        return None
    sites = []
    for m in msgs[1:]:
        a = re.search(r"^\s*(?:read|write) of \d+ bytes by .* at (labs/[\w.-]+/[\w.-]+):(\d+)", m)
        if a and a.group(1) in files and "/tests/" not in a.group(1):
            n, fn = todo_region(files[a.group(1)], int(a.group(2)))
            sites.append((n, f"{a.group(1)}:{a.group(2)}" + (f", in {fn}()" if fn else "")))
    if len(sites) < 2:
        return None
    if len({n for n, _ in sites}) == 1 and sites[0][0] is not None:
        return sites[0]
    return None, None


def named_function_todo(files, bug):
    """A BUG raised where no student line runs (a debug check in the kernel
    or a test) may name the student function at fault: 'does
    rcu_read_unlock() end what rcu_read_lock() began?'. (TODO, 'file:line,
    in fn()') of the first function BUG names that a student file defines,
    the TODO being the first one in its body; or (None, None)."""
    for name in re.findall(r"\b([A-Za-z_]\w*)\(\)", bug):
        head = re.compile(rf"^[A-Za-z_][\w \t*]*\b{re.escape(name)}\s*\([^;]*$")
        for path, full in files.items():
            if "/tests/" in path:
                continue
            try:
                with open(full, errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                continue
            for k, text in enumerate(lines):
                if not head.match(text):
                    continue
                for j in range(k + 1, len(lines)):
                    m = TODO_OPENS.search(lines[j])
                    if m:
                        return int(m.group(1)), f"{path}:{k + 1}, in {name}() (the " \
                            f"function the BUG names)"
                    if lines[j].startswith("}"):
                        break
    return None, None


def next_step(lab, t, msgs):
    """The line that says what to do about failing test T: where to look,
    never the fix. The test's hint waits until the student asks for it
    (./workbook hint LAB --test NAME), one level at a time."""
    h = t.get("hint") or (lab.hints[0] if lab.hints else "")
    # A crash far from the mistake (a list one TODO corrupts, walked in
    # another's code): the test said what it most likely means.
    likely = next((m.strip()[len("likely cause: "):] for m in msgs
                   if m.strip().startswith("likely cause: ")), "")
    if cited_todos(likely):
        todos = ", ".join(map(str, sorted(cited_todos(likely))))
        return f"{t['name']} - the test names the likely cause, in TODO {todos}: start there"
    found = next((f for f in lab.findings if any(f["bug"] in m for m in msgs)), None)
    if found:
        todos = ", ".join(map(str, found["todos"]))
        return f"{t['name']} - \"{found['bug']}\" is found far from where it is made; " \
            f"in this lab it is made in TODO {todos}: start there"
    n, where = blamed_todo(lab, msgs)
    if n is not None:
        return f"{t['name']} - it failed at {where}, inside your TODO {n}: start there"
    # A failure that names TODOs knows what it found (a reader's miscount met
    # at the cleanup; a kthread on the wrong CPU where the hint covers the
    # whole callback path): its own words lead, the hint's only without them.
    named = cited_todos(msgs[0]) if msgs else set()
    if named:
        todos = ", ".join(map(str, sorted(named)))
        return f"{t['name']} - its failure names TODO {todos}: start there"
    todos = ", ".join(map(str, sorted(cited_todos(h))))
    return f"{t['name']}" + (f" - look at TODO {todos}" if todos else "")


def cache_path(bdir, lab):
    return os.path.join(bdir, "runs", lab.label, "status-cache.json")


def lab_key(bdir, lab):
    """The hash of what a lab's result depends on: the student's files (its
    own and the labs it uses), the test binary and the run's environment
    (RUN_ENV: another seed or scheduler is another result)."""
    h = hashlib.sha256(json.dumps(run_env(), sort_keys=True).encode())
    for p in sorted(student_files(lab).values()) + [exe_path(bdir, lab)]:
        h.update(p.encode())
        try:
            with open(p, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
        except OSError:
            h.update(b"-")
    return h.hexdigest()


def cached_result(bdir, lab):
    try:
        with open(cache_path(bdir, lab)) as f:
            c = json.load(f)
        if c.get("key") == lab_key(bdir, lab):
            return {k: (v[0], v[1]) for k, v in c["results"].items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    return None


def store_result(bdir, lab, res):
    """Remember a complete run of LAB (every test) for status."""
    if set(res) != set(lab.names()):
        return
    try:
        os.makedirs(os.path.dirname(cache_path(bdir, lab)), exist_ok=True)
        with open(cache_path(bdir, lab), "w") as f:
            json.dump({"key": lab_key(bdir, lab), "results": res}, f)
    except OSError:
        pass


def refusals(bdir, lab, prior):
    """What the grader's code check (objcheck.py) refuses in LAB's files, as
    built in BDIR: the student's files under labs/, the earlier labs' from
    solutions/ with --prior solutions."""
    extra = [os.path.join(SOLUTIONS, u) for u in lab.uses] if prior == "solutions" else []
    return objcheck.check_lab(bdir, lab, LABS, extra)


def status_run(bdir, lab, prior):
    """LAB's results for status: the last complete run's when neither the
    student's files nor the test binary changed since, else a fresh run;
    a lab whose code the grader refuses is not run ("refused: ...")."""
    ok, err, _ = build(bdir, [lab.target])
    if not ok:
        return None, f"does not compile: {err}"
    res = cached_result(bdir, lab)
    if res is not None:
        return res, ""
    refused = refusals(bdir, lab, prior)
    if refused:
        return None, f"refused: {objcheck.summary(refused)}"
    res, err, _ = run_lab(bdir, lab, prior=prior)
    if res is not None:
        store_result(bdir, lab, res)
    return res, err


def cmd_status(a):
    labs = select_labs(a.labs)
    words = prior_words(labs, a.prior)
    bdir = student_build(labs, a.prior)
    say(f"RCU Labs - progress ({words})")
    say(f"{'lab':<24} {'tests':>7} {'points':>8}  next")
    total = maxt = 0
    for lab in labs:
        res, err = status_run(bdir, lab, a.prior)
        maxt += lab.max_points
        if res is None:
            say(f"{lab.name:<24} {'-':>7} {0:>4}/{lab.max_points:<3}  {err}")
            continue
        pts, passed = score_lab(lab, res)
        total += pts
        nxt = first_failing(lab, res)
        hidden = Hidden(bdir, lab)
        unfinished = unfinished_uses(bdir, lab, a.prior) if nxt is not None else []
        note = ("done" + (f" (and {hidden.words()})" if hidden else "")) if nxt is None \
            else (f"first finish {', '.join(u.name for u, _, _ in unfinished)}, which it "
                  f"runs on") if unfinished \
            else next_step(lab, nxt, res[nxt["name"]][1])
        say(f"{lab.name:<24} {passed:>3}/{len(lab.tests) - len(hidden.names):<3} "
            f"{pts:>4}/{lab.max_points:<3}  {note}")
        if nxt is not None:
            for m in res[nxt["name"]][1][:1]:
                say(f"{'':<34}{m}")
    say(f"{'total':<24} {'':>7} {total:>4}/{maxt:<3}")
    for lab in labs:
        if seeds_note(lab):
            say(f"{lab.name}: {seeds_note(lab)}")
    say("details: ./workbook check LAB   hints: ./workbook hint LAB")
    return 0


def print_logs(bdir, lab, names):
    """check --verbose: each test's own output, under its name."""
    logdir = os.path.join(bdir, "runs", lab.label, "logs")
    for n in names:
        text = read_log(logdir, n).rstrip()
        if text:
            say(f"--- output of {n} ---")
            say(text.replace(ROOT + "/", ""))
    if names:
        say("---")


def check_real(lab, boots):
    """check --real: the lab's module on a real kernel (real.py)."""
    if boots < 1:
        raise Fail("--boots must be 1 or more")
    failed, ran, _ = real.cmd_real(lab, boots=boots)
    if failed:
        say(f"real kernel: boot {ran} of {boots} failed (see above)")
        return 1
    say(f"real kernel: {ran} of {ran} boots " +
        ("as the lab says (they ran its given module, not your files)" if lab.real_given
         else "clean"))
    return 0


def cmd_check(a):
    lab = find_lab(a.lab)
    if a.real:
        if a.prior != "own":
            raise Fail("--prior has no meaning with --real: a real run builds the lab's own "
                       "module against the kernel's RCU, not the earlier labs")
        return check_real(lab, 3 if a.boots is None else a.boots)
    if a.boots is not None:
        raise Fail("--boots counts real-kernel boots: use it with --real")
    bdir = student_build([lab], a.prior)
    if a.list:
        ok, err, _ = build(bdir, [lab.target])
        if not ok:
            raise Fail(f"{lab.name} does not compile: {err}", 1)
        for n in list_tests(exe_path(bdir, lab)):
            t = lab.test(n) or {}
            say(f"{n}  ({t.get('points', 0)} points)")
        return 0
    say(f"== {lab.name}: {lab.title} ==")
    ok, err, _ = build(bdir, [lab.target])
    if not ok:
        say(f"{lab.name} does not compile:\n  {err}")
        return 1
    refused = refusals(bdir, lab, a.prior)
    if refused:
        for r in refused:
            say(f"refused: {r}")
        say(f"the grader gives {lab.name} 0 points while its code does this; lab code is C "
            "that uses the lab's API and nothing else (docs/instructors.md, 'What the grader "
            "accepts')")
        return 1
    hidden = Hidden(bdir, lab)
    here = [t for t in lab.tests if t["name"] not in hidden.names]
    quick = [t["name"] for t in here if not is_stress(t)]
    stress = [t["name"] for t in here if is_stress(t)]
    if a.test or getattr(a, "all", False):
        quick, stress = (None, []) if a.test else (quick + stress, [])
    say(f"running {'1 test' if a.test else f'{len(quick)} tests'}...")
    res, err, logs = run_lab(bdir, lab, a.test, names=quick, prior=a.prior)
    if res is None:
        say(f"{lab.name} does not compile:\n  {err}")
        return 1
    skipped = []
    if stress and all(v[0] for v in res.values()):
        say(f"the deterministic tests pass: running the parallel stress tier "
            f"({', '.join(stress)})...")
        more, err, logs2 = run_lab(bdir, lab, names=stress, prior=a.prior)
        res.update(more or {})
    elif stress:
        skipped = stress
    if getattr(a, "verbose", False):
        print_logs(bdir, lab, list(res))
    say("")
    store_result(bdir, lab, res)
    failed = [n for n, v in res.items() if not v[0]]
    order = [t["name"] for t in lab.tests if t["name"] in res] + \
        sorted(n for n in res if not lab.test(n))
    for n in order:
        passed, msgs = res[n]
        t = lab.test(n) or {}
        pts = int(t.get("points", 0))
        say(f"{'OK  ' if passed else 'FAIL'} {n} ({pts if passed else 0}/{pts})")
        if not passed:
            for m in msgs:
                say(f"       {m}")
    for n in skipped:
        say(f"---- {n} (not run: the parallel stress tier runs once the tests above pass; "
            f"--all runs it now)")
    if hidden and not a.test:
        say(f"---- {hidden.words()}: your check cannot run them (their source is the "
            f"instructor's)")
    pts, passed = score_lab(lab, res)
    say(f"{len(res) - len(failed)}/{len(res)} tests pass, {pts}/{lab.max_points} points"
        + (f" ({len(skipped)} not run)" if skipped else "")
        + (f"; {hidden.points} of the others are the hidden tests'" if hidden and not a.test
           else ""))
    if seeds_note(lab):
        say(f"note: {seeds_note(lab)}")
    if failed:
        t = first_failing(lab, res) or lab.test(failed[0]) or {"name": failed[0]}
        unfinished = unfinished_uses(bdir, lab, a.prior)
        if unfinished:
            say(f"note: {uses_note(lab, unfinished)}: a failure above may be theirs, not "
                f"this lab's")
            first = unfinished[0][0].name
            say(f"next: make {first} pass first (./workbook check {first})"
                f"{reference_offer(lab)}")
        else:
            say(f"next: {next_step(lab, t, res[t['name']][1])}")
        say(f"one test: ./workbook check {lab.name} --test {t['name']}{prior_option(a.prior)}")
        say(f"its hint: ./workbook hint {lab.name} --test {t['name']}"
            f"   the lab's hints: ./workbook hint {lab.name}")
    return 1 if failed else 0


def hint_state():
    return os.path.join(ROOT, "build-wb-default", "hints.json")


def test_hint(lab, name):
    """The hint of LAB's test NAME, asked for by name once the test failed."""
    t = lab.test(name)
    if not t:
        raise Fail(f"{lab.name} has no test {name}: ./workbook check {lab.name} --list "
                   f"lists them")
    if not t.get("hint"):
        raise Fail(f"{name} has no hint of its own: ./workbook hint {lab.name} gives the "
                   f"lab's, one level at a time")
    say(f"hint for {name}: {t['hint']}")
    return 0


def cmd_hint(a):
    lab = find_lab(a.lab)
    if a.test:
        if a.n is not None:
            raise Fail("hint takes a level N or --test SUITE/NAME, not both")
        return test_hint(lab, a.test)
    state = {}
    try:
        with open(hint_state()) as f:
            state = json.load(f)
    except (OSError, ValueError):
        pass
    if a.n is not None:
        if not 1 <= a.n <= len(lab.hints):
            raise Fail(f"{lab.name} has hints 1..{len(lab.hints)}, not {a.n}")
        n = a.n
    else:
        n = min(state.get(lab.name, 0) + 1, len(lab.hints))
    state[lab.name] = max(n, state.get(lab.name, 0)) if a.n is None else state.get(lab.name, 0)
    os.makedirs(os.path.dirname(hint_state()), exist_ok=True)
    with open(hint_state(), "w") as f:
        json.dump(state, f)
    for i, h in enumerate(lab.hints[:n], 1):
        say(f"hint {i}/{len(lab.hints)}: {h}")
    if n < len(lab.hints):
        say(f"(./workbook hint {lab.name} for the next one)")
    return 0


def watched_files(lab):
    out = []
    for name in [lab.name] + lab.uses:
        try:
            l = find_lab(name)
        except Fail:
            continue
        out += [os.path.join(LABS, l.name, f) for f in l.files]
    return out


def snapshot(files):
    s = {}
    for p in files:
        try:
            s[p] = os.stat(p).st_mtime_ns
        except OSError:
            s[p] = None
    return s


def wait_for_save(files, last):
    """Block until one of FILES differs from snapshot LAST: on inotifywait
    (inotify-tools) or entr when installed, else by polling once a second."""
    dirs = sorted({os.path.dirname(p) for p in files})
    while snapshot(files) == last:
        if shutil.which("inotifywait"):
            # the folders, not the files: editors save by renaming a new file
            subprocess.run(["inotifywait", "-qq", "-t", "60", "-e",
                            "close_write,moved_to,create,delete", "--"] + dirs,
                           stdin=subprocess.DEVNULL)
        elif shutil.which("entr"):
            subprocess.run(["entr", "-npz", "true"], input="\n".join(files) + "\n",
                           text=True, stdout=subprocess.DEVNULL)
        else:
            time.sleep(1)


def cmd_watch(a):
    lab = find_lab(a.lab)
    files = watched_files(lab)
    how = "inotifywait" if shutil.which("inotifywait") else \
        "entr" if shutil.which("entr") else "polling once a second"
    say(f"watching {', '.join(os.path.relpath(p, ROOT) for p in files)} ({how}; Ctrl-C to stop)")
    try:
        while True:
            last = snapshot(files)
            say(time.strftime("\n--- %H:%M:%S ---"))
            try:
                cmd_check(argparse.Namespace(lab=lab.name, test=a.test, prior=a.prior,
                                             list=False, all=False, verbose=False))
            except Fail as e:
                warn(str(e))
            if a.once:
                return 0
            wait_for_save(files, last)
    except KeyboardInterrupt:
        say("")
        return 0
