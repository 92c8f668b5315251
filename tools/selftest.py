"""selftest - prove the workbook (./workbook selftest; CI runs it).

Rule kept here: selftest uses only the workbook package's public functions
(workbook.manifest, .build, .run, .reports, .starters); what it proves, a
student's command would see the same way.

Stages, each check one PASS or FAIL line, each stage timed, then one line
`N passed, N failed`:
  manifests      each lab.json loads (the one loader's checks); tests = the
                 binary's tests
  starters       labs/ equals what gen-starters derives from solutions/
  common         the simulated kernel's own suite passes
  solutions      every lab against solutions/: every test passes (full points)
  starters fail  every lab against labs/ (earlier labs from solutions/): every
                 test fails (0 points), read per test from Criterion's JSON
  mutants        each mutant applied to a copy of solutions/ loses points: at
                 least one test fails, and every test it names in killed_by
  valgrind       the valgrind preset on common and on the solutions (ctest)
  grading        containment: hostile submissions (grading/tests/hostile/),
                 each graded by ./workbook grade, score 0 and no trace left
  docs           both doc editions, link check
"""
import json
import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

import gradescope_check
from workbook import build, reports, run as wbrun
from workbook.common import Fail, JOBS, ROOT, SOLUTIONS
from workbook.manifest import all_labs
from workbook.starters import starter_diffs


class Sheet:
    """The PASS/FAIL lines, the per-lab table and the stage clock."""

    def __init__(self):
        self.passed = self.failed = 0
        self.table = {}
        self.t0 = time.time()
        self.stages = []          # [title, start, end]

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'}  {what}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def stage(self, title):
        now = time.time()
        self.end_stage(now)
        self.stages.append([title, now, None])
        print(f"\n== {title} ({now - self.t0:.0f}s) ==", flush=True)

    def end_stage(self, now=None):
        if self.stages and self.stages[-1][2] is None:
            self.stages[-1][2] = now or time.time()

    def row(self, lab):
        return self.table.setdefault(lab.name, {"solutions": "", "starters": "", "mutants": ""})


def bdir(name):
    return os.path.join(ROOT, f"build-wb-st-{name}")


def configured(sh, d, what, impl, prior, **kw):
    ok, out = build.configure(d, impl, prior, **kw)
    return sh.check(ok, f"configure {what}", build.first_error(out) if not ok else "")


def run_lab_tests(d, lab, names=None):
    """Run NAMES (default: all) of LAB's binary in build folder D."""
    names = names or lab.names()
    res, _ = wbrun.run_tests(wbrun.exe_path(d, lab), names, os.path.join(d, "runs", lab.label),
                             lab.timeouts(), JOBS)
    return names, res


# ---------------------------------------------------------------- stages

def stage_manifests(sh, labs):
    sh.stage("manifests and starters")
    for lab in labs:
        problems = []
        if lab.max_points != 100:
            problems.append(f"points total {lab.max_points}, not 100")
        for t in lab.tests:
            if not t.get("hint"):
                problems.append(f"test {t.get('name')} has no hint")
        for mu in lab.mutants:
            try:
                with open(os.path.join(SOLUTIONS, lab.name, mu.get("file", ""))) as f:
                    n = f.read().count(mu.get("replace", "\0"))
            except OSError:
                n = -1
            if n != 1:
                problems.append(f"mutant {mu.get('name')}: 'replace' occurs {n} time(s)")
        sh.check(not problems, f"manifest {lab.name}", "; ".join(problems))
    problems = starter_diffs(labs)
    sh.check(not problems, "starters equal what gen-starters derives", "; ".join(problems))


def stage_common(sh, sol):
    common = os.path.join(sol, "common", "common_tests")
    if not os.path.exists(common):
        sh.check(False, "common", "not built")
        return
    names = wbrun.list_tests(common)
    res, _ = wbrun.run_tests(common, names, os.path.join(sol, "runs", "common"), {}, JOBS,
                             filter_names=False)
    bad = [n for n in names if not res.get(n, (False,))[0]]
    sh.check(bool(names) and not bad, f"common: {len(names) - len(bad)}/{len(names)} pass",
             ", ".join(bad))


def stage_solutions(sh, labs, sol):
    """Common and every lab against solutions/; the graded results."""
    sh.stage("common and solutions")
    if not configured(sh, sol, "solutions (-Werror)", "solutions", "own", werror=True):
        return None
    ok, err, _ = build.build(sol, ["common_tests"] + [l.target for l in labs])
    sh.check(ok, "build common and solutions without warnings", err)
    stage_common(sh, sol)
    graded = []
    for lab in labs:
        exe = wbrun.exe_path(sol, lab)
        if not os.path.exists(exe):
            sh.check(False, f"solutions {lab.name}", "not built")
            continue
        listed, mnames = wbrun.list_tests(exe), lab.names()
        sh.check(sorted(listed) == sorted(mnames), f"{lab.name}: manifest tests = binary tests",
                 f"only in the binary: {sorted(set(listed) - set(mnames))}, "
                 f"only in lab.json: {sorted(set(mnames) - set(listed))}"
                 if sorted(listed) != sorted(mnames) else "")
        names, res = run_lab_tests(sol, lab)
        pts, _ = wbrun.score_lab(lab, res)
        bad = [n for n in names if not res[n][0]]
        sh.check(bool(names) and not bad, f"solutions {lab.name}: {len(names) - len(bad)}/"
                 f"{len(names)} pass, {pts}/{lab.max_points} points", ", ".join(bad))
        sh.row(lab)["solutions"] = f"{pts}/{lab.max_points}"
        graded.append({"lab": lab, "error": "", "results": res, "score": pts,
                       "max": lab.max_points})
    return graded


def stage_reports(sh, labs, graded):
    """The grader's reports of the solutions are well formed."""
    if not graded:
        return
    gs = json.loads(reports.render("gradescope", graded, 1.0))
    pr = gradescope_check.problems(gs, [l.name for l in labs])
    sh.check(not pr and gs["score"] == sum(l.max_points for l in labs),
             f"gradescope results.json of the solutions: valid, score {gs['score']}", "; ".join(pr))
    try:
        ET.fromstring(reports.render("junit", graded))
        json.loads(reports.render("json", graded))
        txt = reports.render("text", graded)
        ok = txt.rstrip().endswith("(total)") and "== Test " in txt
        sh.check(ok, "junit, json and text reports of the solutions well formed")
    except (ValueError, ET.ParseError) as e:
        sh.check(False, "junit, json and text reports well formed", str(e))


def stage_starters(sh, labs):
    sh.stage("starters fail every test")
    st = bdir("starters")
    if not configured(sh, st, "starters (-Werror, earlier labs from solutions)", "labs",
                      "solutions", werror=True):
        return
    for lab in labs:
        ok, err, _ = build.build(st, [lab.target])
        if not sh.check(ok, f"starters {lab.name} compile without warnings", err):
            continue
        names, res = run_lab_tests(st, lab)
        pts, _ = wbrun.score_lab(lab, res)
        good = [n for n in names if res[n][0]]
        sh.check(bool(names) and not good, f"starters {lab.name}: {len(names) - len(good)}/"
                 f"{len(names)} fail, {pts} points",
                 ("pass against the starter: " + ", ".join(good)) if good else "")
        sh.row(lab)["starters"] = f"{pts}/{lab.max_points}"


def mutant_caught(sh, lab, mu, mu_dir, src):
    """Apply MU to the copy SRC, build, run its killed_by tests; True if caught."""
    f = os.path.join(src, lab.name, mu["file"])
    orig = os.path.join(SOLUTIONS, lab.name, mu["file"])
    with open(orig) as fh:
        text = fh.read()
    what = f"mutant {lab.name}/{mu.get('name')}"
    if text.count(mu["replace"]) != 1:
        return sh.check(False, what, "'replace' does not occur exactly once")
    with open(f, "w") as fh:
        fh.write(text.replace(mu["replace"], mu["with"]))
    try:
        ok, err, _ = build.build(mu_dir, [lab.target], src)
        if not ok:
            return sh.check(False, what, f"does not compile: {err}")
        names = lab.names()
        # The tests it names are enough to prove it caught (and faster);
        # without killed_by, the whole lab runs.
        kb = [k for k in mu.get("killed_by", []) if k in names]
        run_names, res = run_lab_tests(mu_dir, lab, kb or names)
        lost = sum(int(t.get("points", 0)) for t in lab.tests
                   if t["name"] in res and not res[t["name"]][0])
        failed = [n for n in run_names if not res[n][0]]
        missed = [k for k in mu.get("killed_by", []) if k not in names] + \
            [k for k in kb if res[k][0]]
        good = bool(failed) and not missed
        return sh.check(good, f"{what} caught: loses {lost} points, "
                        f"{len(failed)}/{len(run_names)} test(s) run fail",
                        ("survives every test" if not failed else
                         f"killed_by tests that pass or do not exist: {', '.join(missed)}")
                        if not good else "")
    finally:
        shutil.copyfile(orig, f)


def stage_mutants(sh, labs):
    sh.stage("mutants")
    mu_dir = bdir("mutants")
    src = os.path.join(mu_dir, "impl")
    if os.path.isdir(src):
        shutil.rmtree(src)
    shutil.copytree(SOLUTIONS, src)
    if not configured(sh, mu_dir, "mutants (a copy of solutions/)", src, "solutions",
                      werror=False):
        return
    build.build(mu_dir, [l.target for l in labs])
    for lab in labs:
        caught = sum(mutant_caught(sh, lab, mu, mu_dir, src) for mu in lab.mutants)
        sh.row(lab)["mutants"] = f"{caught}/{len(lab.mutants)}"
    # leave the copy equal to solutions/ and built
    build.build(mu_dir, [l.target for l in labs])


def stage_preset(sh, labs, checker):
    """The CHECKER preset (valgrind) on common and every solution, by ctest label."""
    sh.stage(f"{checker} preset on common and solutions")
    d = bdir(checker)
    if not configured(sh, d, checker, "solutions", "own", checker=checker):
        return
    ok, err, _ = build.build(d, ["all"])
    if not sh.check(ok, f"build {checker}", err):
        return
    for label in ["common"] + [l.label for l in labs]:
        t1 = time.time()
        r = subprocess.run(["ctest", "--test-dir", d, "-L", f"^{label}$", "--output-on-failure",
                            "--no-tests=error"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, stdin=subprocess.DEVNULL)
        tail = [ln for ln in r.stdout.splitlines()
                if "Synthesis" in ln or ln.startswith("[FAIL]")][-3:]
        sh.check(r.returncode == 0, f"{checker} {label} ({time.time() - t1:.0f}s)",
                 " | ".join(tail) if r.returncode else "")


def stage_grading(sh):
    """Hostile submissions are contained (grading/tests/containment.py)."""
    sh.stage("grading containment")
    path = os.path.join(ROOT, "grading", "tests")
    if not os.path.isfile(os.path.join(path, "containment.py")):
        sh.check(False, "grading containment", "grading/tests/containment.py is missing")
        return
    import sys
    sys.path.insert(0, path)
    import containment
    for ok, what, detail in containment.checks():
        sh.check(ok, what, detail)


def stage_docs(sh, sol):
    sh.stage("docs")
    if "docs-check" not in build.ninja_targets(sol):
        sh.check(False, "docs", "no docs-check target: doxygen or graphviz missing (./workbook setup)")
        return
    # both editions, warnings as errors, links, no solution code or answers
    ok, err, _ = build.build(sol, ["docs-check"])
    sh.check(ok, "docs: both editions, link check, no solutions in the student edition", err)


# ------------------------------------------------------------------ main

def run(quick=False):
    sh = Sheet()
    try:
        labs = all_labs()
    except Fail as e:
        sh.check(False, "labs", str(e))
        return finish(sh)
    if not os.path.isdir(SOLUTIONS) or any(
            not os.path.isdir(os.path.join(SOLUTIONS, l.name)) for l in labs):
        raise Fail("selftest needs every lab's solutions/ (this looks like a handout)", 1)
    build.check_deps()
    stage_manifests(sh, labs)
    sol = bdir("solutions")
    graded = stage_solutions(sh, labs, sol)
    if graded is None:
        return finish(sh)
    stage_reports(sh, labs, graded)
    stage_starters(sh, labs)
    stage_mutants(sh, labs)
    if not quick:
        stage_preset(sh, labs, "valgrind")
    stage_grading(sh)
    stage_docs(sh, sol)
    return finish(sh)


def finish(sh):
    sh.end_stage()
    if sh.table:
        print(f"\n{'lab':<24} {'solutions':>10} {'starters':>10} {'mutants caught':>15}")
        for name, row in sh.table.items():
            print(f"{name:<24} {row['solutions']:>10} {row['starters']:>10} {row['mutants']:>15}")
    if sh.stages:
        print("\nstage durations:")
        for title, start, end in sh.stages:
            print(f"  {title:<44} {end - start:6.0f}s")
    print(f"\nselftest took {time.time() - sh.t0:.0f}s")
    print(f"{sh.passed} passed, {sh.failed} failed", flush=True)
    return 1 if sh.failed else 0
