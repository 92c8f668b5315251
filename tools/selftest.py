"""selftest - prove the workbook (./workbook selftest; CI runs it).

Checks, each one PASS or FAIL, then one line `N passed, N failed`:
  manifests      each lab.json: fields, 100 points, tests = the binary's tests,
                 each mutant's `replace` occurs exactly once in its solution file
  starters       labs/ equals what gen-starters derives from solutions/
  common         the simulated kernel's own suite passes
  solutions      every lab against solutions/: every test passes (full points)
  starters fail  every lab against labs/ (earlier labs from solutions/): every
                 test fails (0 points), read per test from Criterion's JSON
  mutants        each mutant applied to a copy of solutions/ loses points: at
                 least one test fails, and every test it names in killed_by
  valgrind       the valgrind preset on common and on the solutions (ctest)
  docs           the `docs` target, when the build has one
"""
import json
import os
import shutil
import subprocess
import time


class Sheet:
    def __init__(self):
        self.passed = self.failed = 0
        self.table = []

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'}  {what}" + (f": {detail}" if detail else ""), flush=True)
        return ok


def run(a, wb):
    t0 = time.time()
    sh = Sheet()
    try:
        labs = wb.all_labs()
    except wb.Fail as e:
        sh.check(False, "labs", str(e))
        labs = []
    if not os.path.isdir(wb.SOLUTIONS) or any(
            not os.path.isdir(os.path.join(wb.SOLUTIONS, l.name)) for l in labs):
        raise wb.Fail("selftest needs every lab's solutions/ (this looks like a handout)", 1)
    wb.check_deps()
    root = wb.ROOT
    B = lambda n: os.path.join(root, f"build-wb-st-{n}")  # noqa: E731

    def step(title):
        print(f"\n== {title} ({time.time() - t0:.0f}s) ==", flush=True)

    # -- manifests and starters
    step("manifests and starters")
    for lab in labs:
        problems = []
        for k in ("name", "label", "title", "files", "tests", "hints", "mutants"):
            if k not in lab.m:
                problems.append(f"no '{k}'")
        if lab.m.get("name", lab.name) != lab.name:
            problems.append(f"name '{lab.m.get('name')}' is not the folder's")
        if lab.max_points != 100:
            problems.append(f"points total {lab.max_points}, not 100")
        for t in lab.tests:
            if not t.get("hint"):
                problems.append(f"test {t.get('name')} has no hint")
        for mu in lab.mutants:
            path = os.path.join(wb.SOLUTIONS, lab.name, mu.get("file", ""))
            try:
                with open(path) as f:
                    n = f.read().count(mu.get("replace", "\0"))
            except OSError:
                n = -1
            if n != 1:
                problems.append(f"mutant {mu.get('name')}: 'replace' occurs {n if n >= 0 else 'in no file'}"
                                f" time(s) in solutions/{lab.name}/{mu.get('file')}")
        sh.check(not problems, f"manifest {lab.name}", "; ".join(problems))
    problems = wb.starter_diffs(labs)
    sh.check(not problems, "starters equal what gen-starters derives", "; ".join(problems))

    # -- solutions (and common)
    step("common and solutions")
    sol = B("solutions")
    ok, out = wb.configure(sol, "solutions", "own", werror=True)
    if not sh.check(ok, "configure solutions (-Werror)", wb.first_error(out) if not ok else ""):
        return finish(sh, t0)
    ok, err, _ = wb.build(sol, ["common_tests"] + [l.target for l in labs])
    sh.check(ok, "build common and solutions without warnings", err)
    common = os.path.join(sol, "common", "common_tests")
    if os.path.exists(common):
        names = wb.list_tests(common)
        res, _ = wb.run_tests(common, names, os.path.join(sol, "runs", "common"), {}, wb.JOBS,
                              filter_names=False)
        bad = [n for n in names if not res.get(n, (False,))[0]]
        sh.check(bool(names) and not bad, f"common: {len(names) - len(bad)}/{len(names)} pass",
                 ", ".join(bad))
    tests_of = {}
    graded = []
    for lab in labs:
        exe = wb.exe_path(sol, lab)
        if not os.path.exists(exe):
            sh.check(False, f"solutions {lab.name}", "not built")
            continue
        listed = wb.list_tests(exe)
        tests_of[lab.name] = listed
        mnames = [t["name"] for t in lab.tests]
        sh.check(sorted(listed) == sorted(mnames), f"{lab.name}: manifest tests = binary tests",
                 f"only in the binary: {sorted(set(listed) - set(mnames))}, "
                 f"only in lab.json: {sorted(set(mnames) - set(listed))}"
                 if sorted(listed) != sorted(mnames) else "")
        names = mnames or listed
        tmo = {t["name"]: t.get("timeout", 60) for t in lab.tests}
        res, _ = wb.run_tests(exe, names, os.path.join(sol, "runs", lab.label), tmo, wb.JOBS)
        pts, _ = wb.score_lab(lab, res)
        bad = [n for n in names if not res[n][0]]
        sh.check(bool(names) and not bad, f"solutions {lab.name}: {len(names) - len(bad)}/{len(names)} pass,"
                 f" {pts}/{lab.max_points} points", ", ".join(bad))
        sh.table.append([lab.name, f"{pts}/{lab.max_points}", "", ""])
        graded.append({"lab": lab, "error": "", "results": res, "score": pts,
                       "max": lab.max_points})

    # -- the grader's reports of the solutions
    if graded:
        import xml.etree.ElementTree as ET
        import gradescope_check
        gs = json.loads(wb.render("gradescope", graded, 1.0))
        pr = gradescope_check.problems(gs, [l.name for l in labs])
        sh.check(not pr and gs["score"] == sum(l.max_points for l in labs),
                 f"gradescope results.json of the solutions: valid, score {gs['score']}",
                 "; ".join(pr))
        try:
            ET.fromstring(wb.render("junit", graded))
            json.loads(wb.render("json", graded))
            txt = wb.render("text", graded)
            ok = txt.rstrip().endswith(f"(total)") and "== Test " in txt
            sh.check(ok, "junit, json and text reports of the solutions well formed")
        except Exception as e:  # noqa: BLE001
            sh.check(False, "junit, json and text reports well formed", str(e))

    # -- starters
    step("starters fail every test")
    st = B("starters")
    ok, out = wb.configure(st, "labs", "solutions", werror=True)
    if sh.check(ok, "configure starters (-Werror, earlier labs from solutions)",
                wb.first_error(out) if not ok else ""):
        for lab in labs:
            ok, err, _ = wb.build(st, [lab.target])
            if not sh.check(ok, f"starters {lab.name} compile without warnings", err):
                continue
            exe = wb.exe_path(st, lab)
            names = [t["name"] for t in lab.tests] or tests_of.get(lab.name) or wb.list_tests(exe)
            tmo = {t["name"]: t.get("timeout", 60) for t in lab.tests}
            res, _ = wb.run_tests(exe, names, os.path.join(st, "runs", lab.label), tmo, wb.JOBS)
            pts, _ = wb.score_lab(lab, res)
            good = [n for n in names if res[n][0]]
            sh.check(bool(names) and not good, f"starters {lab.name}: {len(names) - len(good)}/{len(names)}"
                     f" fail, {pts} points", ("pass against the starter: " + ", ".join(good)) if good else "")
            for row in sh.table:
                if row[0] == lab.name:
                    row[2] = f"{pts}/{lab.max_points}"

    # -- mutants
    step("mutants")
    mu_dir = B("mutants")
    src = os.path.join(mu_dir, "impl")
    if os.path.isdir(src):
        shutil.rmtree(src)
    shutil.copytree(wb.SOLUTIONS, src)
    ok, out = wb.configure(mu_dir, src, "solutions", werror=False)
    if sh.check(ok, "configure mutants (a copy of solutions/)", wb.first_error(out) if not ok else ""):
        wb.build(mu_dir, [l.target for l in labs])
        for lab in labs:
            caught = 0
            for mu in lab.mutants:
                f = os.path.join(src, lab.name, mu["file"])
                orig = os.path.join(wb.SOLUTIONS, lab.name, mu["file"])
                with open(orig) as fh:
                    text = fh.read()
                what = f"mutant {lab.name}/{mu.get('name')}"
                if text.count(mu["replace"]) != 1:
                    sh.check(False, what, "'replace' does not occur exactly once")
                    continue
                with open(f, "w") as fh:
                    fh.write(text.replace(mu["replace"], mu["with"]))
                try:
                    ok, err, _ = wb.build(mu_dir, [lab.target], src)
                    if not ok:
                        sh.check(False, what, f"does not compile: {err}")
                        continue
                    names = [t["name"] for t in lab.tests] or tests_of.get(lab.name, [])
                    # The tests it names are enough to prove it caught (and
                    # faster); without killed_by, the whole lab runs.
                    kb = [k for k in mu.get("killed_by", []) if k in names]
                    run_names = kb or names
                    tmo = {t["name"]: t.get("timeout", 60) for t in lab.tests}
                    res, _ = wb.run_tests(wb.exe_path(mu_dir, lab), run_names,
                                          os.path.join(mu_dir, "runs", lab.label), tmo, wb.JOBS)
                    lost = sum(int(t.get("points", 0)) for t in lab.tests
                               if t["name"] in res and not res[t["name"]][0])
                    failed = [n for n in run_names if not res[n][0]]
                    missed = [k for k in mu.get("killed_by", []) if k not in names] + \
                        [k for k in kb if res[k][0]]
                    good = bool(failed) and not missed
                    caught += good
                    sh.check(good, f"{what} caught: loses {lost} points, "
                             f"{len(failed)}/{len(run_names)} test(s) run fail",
                             ("survives every test" if not failed else
                              f"killed_by tests that pass or do not exist: {', '.join(missed)}")
                             if not good else "")
                finally:
                    shutil.copyfile(orig, f)
            for row in sh.table:
                if row[0] == lab.name:
                    row[3] = f"{caught}/{len(lab.mutants)}"
        # leave the copy equal to solutions/ and built
        wb.build(mu_dir, [l.target for l in labs])

    # -- valgrind
    if not a.quick:
        step("valgrind preset on common and solutions")
        vg = B("valgrind")
        ok, out = wb.configure(vg, "solutions", "own", checker="valgrind")
        if sh.check(ok, "configure valgrind", wb.first_error(out) if not ok else ""):
            ok, err, _ = wb.build(vg, ["all"])
            if sh.check(ok, "build valgrind", err):
                for label in ["common"] + [l.label for l in labs]:
                    t1 = time.time()
                    r = subprocess.run(["ctest", "--test-dir", vg, "-L", f"^{label}$",
                                        "--output-on-failure", "--no-tests=error"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       stdin=subprocess.DEVNULL)
                    tail = [ln for ln in r.stdout.splitlines()
                            if "Synthesis" in ln or ln.startswith("[FAIL]")][-3:]
                    sh.check(r.returncode == 0, f"valgrind {label} ({time.time() - t1:.0f}s)",
                             " | ".join(tail) if r.returncode else "")

    # -- docs
    step("docs")
    targets = wb.ninja_targets(sol)
    if "docs-check" in targets:
        # both editions, warnings as errors, links, no solution code or answers
        ok, err, _ = wb.build(sol, ["docs-check"])
        sh.check(ok, "docs: both editions, link check, no solutions in the student edition", err)
    elif "docs" in targets:
        ok, err, _ = wb.build(sol, ["docs"])
        sh.check(ok, "docs build", err)
    else:
        print("(no docs target yet: skipped)")

    return finish(sh, t0)


def finish(sh, t0):
    if sh.table:
        print(f"\n{'lab':<24} {'solutions':>10} {'starters':>10} {'mutants caught':>15}")
        for row in sh.table:
            print(f"{row[0]:<24} {row[1]:>10} {row[2]:>10} {row[3]:>15}")
    print(f"\nselftest took {time.time() - t0:.0f}s")
    print(f"{sh.passed} passed, {sh.failed} failed", flush=True)
    return 1 if sh.failed else 0
