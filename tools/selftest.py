"""selftest - prove the workbook (./workbook selftest; CI runs it).

Rule kept here: selftest uses only the workbook package's public functions
(workbook.manifest, .build, .run, .reports, .starters); what it proves, a
student's command would see the same way.

Stages, each check one PASS or FAIL line, each stage timed, then one line
`N passed, N failed`:
  manifests      each lab.json loads (the one loader's checks); tests = the
                 binary's tests; each mutant's patch applies (git apply --check)
  starters       labs/ equals what gen-starters derives from solutions/
  format         each lab's own files (its manifest's "files", in labs/ and
                 solutions/) are as clang-format 14 lays them out with the
                 tree's .clang-format (another version lays out differently:
                 the check then says it did not run)
  common         the simulated kernel's own suite passes
  solutions      every lab against solutions/: every test passes (full points)
  starters fail  every lab against labs/ (earlier labs from solutions/): every
                 test fails (0 points), read per test from Criterion's JSON
  mutants        each mutant applied to a copy of solutions/ loses points: at
                 least one test fails, and every test it names in killed_by
  presets        the valgrind, asan and tsan presets on common and on the
                 solutions: each test binary run whole, once (valgrind: one
                 memcheck process per binary, on the shim; the seed sweeps
                 with PRESET_SEEDS seeds, the plain stage ran 20), and the
                 CTest wiring (every test registered, one run through ctest)
  grading        containment: the reference graded as a submission (700/700)
                 and hostile submissions (grading/tests/hostile/), each graded
                 by ./workbook grade, score 0 and no trace left; in the bwrap
                 sandbox and, as root, again in the fallback 'user' sandbox
  docs           both doc editions, link check
  real           each lab with a real-kernel run, on Linux in QEMU: the
                 reference clean in REAL_BOOTS boots, the starter's wrong exit
                 caught (lab 5 runs a given module: its scenario's two exits,
                 each as it expects, in REAL_BOOTS boots) (not with --quick;
                 WORKBOOK_REAL=0 skips it, said so)

Two lanes of stages run at once (two processes): the main lane prints as it
goes; the side lane (valgrind and asan presets, or with --quick the grading
containment) prints when it is done. The stage durations give each stage's
wall and CPU seconds.
"""
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import gradescope_check
from workbook import build, manifest, mutants, real, reports, run as wbrun, sandbox
from workbook.handout import handout_lab_json
from workbook.common import Fail, JOBS, LABS, ROOT, SOLUTIONS
from workbook.manifest import all_labs, find_lab, hint_call_problems
from workbook.starters import starter_diffs


def cpu_seconds():
    """CPU seconds used so far by this process and the children it waited
    for (user and system). Processes a sandbox reaps itself (bubblewrap's
    PID namespace) are not counted."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Sheet:
    """The PASS/FAIL lines, the per-lab table and the stage clock."""

    def __init__(self):
        self.passed = self.failed = 0
        self.table = {}
        self.t0 = time.time()
        self.stages = []          # [title, start, end, cpu at start, cpu at end]
        self.side_stages = []     # the side lane's (run_side_lane())

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
        self.stages.append([title, now, None, cpu_seconds(), None])
        print(f"\n== {title} ({now - self.t0:.0f}s) ==", flush=True)

    def end_stage(self, now=None):
        if self.stages and self.stages[-1][2] is None:
            self.stages[-1][2] = now or time.time()
            self.stages[-1][4] = cpu_seconds()

    def row(self, lab):
        return self.table.setdefault(lab.name, {"solutions": "", "starters": "", "mutants": ""})


REAL_BOOTS = 3      # boots of each real run: the reference's, at most the starter's


def bdir(name):
    return os.path.join(ROOT, f"build-wb-st-{name}")


def configured(sh, d, what, impl, prior, **kw):
    ok, out = build.configure(d, impl, prior, **kw)
    return sh.check(ok, f"configure {what}", build.first_error(out) if not ok else "")


def run_lab_tests(d, lab, names=None):
    """Run NAMES (default: all) of LAB's binary in build folder D; (names,
    results, logs)."""
    names = names or lab.names()
    res, logs = wbrun.run_tests(wbrun.exe_path(d, lab), names,
                                os.path.join(d, "runs", lab.label), lab.timeouts(), JOBS)
    return names, res, logs


# ---------------------------------------------------------------- stages

TABLE_ROW = re.compile(r"^\| `([a-z_0-9]+/[a-z_0-9]+)` \|([^|\n]*)\|", re.M)


def handout_table_problems(lab):
    """The rows of LAB's handout tests table (| `suite/name` | points | ...)
    that name no test of lab.json or give other points than it does. A test
    may be left out of the table (lab 7's hidden flavours)."""
    path = os.path.join(LABS, lab.name, "README.md")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = TABLE_ROW.findall(f.read())
    points = {t["name"]: t["points"] for t in lab.tests}
    out = []
    for name, col in rows:
        if name not in points:
            out.append(f"{name}: no such test")
        elif col.strip().isdigit() and int(col) != points[name]:
            out.append(f"{name}: {col.strip()} points, lab.json says {points[name]}")
    return out


def handout_manifest_problems(lab):
    """What is wrong with the lab.json a handout gets for LAB: it must load,
    name no hidden test (they are counted: hidden_tests), and show no hint
    in plain text but the first level, nor a finding's words (sealed)."""
    with open(os.path.join(LABS, lab.name, "lab.json")) as f:
        text = handout_lab_json(f.read())
    try:
        manifest.validate(f"handout's labs/{lab.name}/lab.json", json.loads(text), lab.name)
    except Fail as e:
        return [str(e)]
    plain = json.dumps(json.loads(text), ensure_ascii=False)
    return [f"names hidden test {t['name']}" for t in lab.tests
            if t.get("visibility") == "hidden" and t["name"] in text] + \
        [f"shows hint in plain text: {h[:40]}..." for h in
         [t["hint"] for t in lab.tests] + lab.hints[1:] + [f["bug"] for f in lab.findings]
         if json.dumps(h, ensure_ascii=False)[1:-1] in plain]


# Malformed manifests (each a change to lab 1's) and what the loader must say
# of each, in one line that names the file: (what, change, expected words).
BAD_MANIFESTS = [
    ("no format", lambda m: m.pop("format"), "missing key 'format' (an integer): add \"format\": 1"),
    ("a misspelt key", lambda m: m.__setitem__("tets", []), "unknown key 'tets': did you mean 'tests'?"),
    ("files as a string", lambda m: m.__setitem__("files", "rcu.c"), "'files' must be"),
    ("another folder's name", lambda m: m.__setitem__("name", "01-other"), "not the folder's"),
    ("a bad label", lambda m: m.__setitem__("label", "one"), "'label' must be labN"),
    ("points off", lambda m: m["tests"][0].__setitem__("points", m["tests"][0]["points"] + 1),
     "tests' points add up to 101, not 100"),
    ("a test twice", lambda m: m["tests"].append(dict(m["tests"][0])), "is listed twice"),
    ("a hint without a TODO", lambda m: m["tests"][0].__setitem__("hint", "Look closer."),
     "hint names no TODO"),
    ("a hint citing a TODO that is not there",
     lambda m: m["hints"].append("See TODO 99."), "cites TODO 99, which the starter does not hold"),
    ("a bad visibility", lambda m: m["tests"][0].__setitem__("visibility", "secret"),
     "'visibility' must be one of"),
    ("a finding citing a TODO that is not there",
     lambda m: m.__setitem__("findings", [{"bug": "a list still links it", "todos": [99]}]),
     "findings[0] cites TODO 99, which the starter does not hold"),
    ("a finding without its words",
     lambda m: m.__setitem__("findings", [{"todos": [1]}]), "findings[0]: missing key 'bug'"),
]


def loader_message_problems():
    """Each of BAD_MANIFESTS, written into a copy of lab 1's folder: the one
    loader must refuse it in one line that names the file and the problem."""
    src = find_lab("1")
    tmp = os.path.join(ROOT, "build-wb-manifest-check")
    d = os.path.join(tmp, src.name)
    out = []
    for what, change, words in BAD_MANIFESTS + [("not JSON", None, "not valid JSON")]:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src.dir, d)
        with open(os.path.join(src.dir, "lab.json")) as f:
            m = json.load(f)
        with open(os.path.join(d, "lab.json"), "w") as f:
            if change:
                change(m)
                json.dump(m, f)
            else:
                f.write(json.dumps(m)[:-1])
        try:
            manifest.Lab(d)
            out.append(f"{what}: accepted")
        except Fail as e:
            msg = str(e)
            if words not in msg or "\n" in msg or "lab.json" not in msg:
                out.append(f"{what}: said '{msg}'")
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def format_problems(labs):
    """The lab files (each lab's manifest "files", starter and solution)
    that clang-format 14 would change, or None when no clang-format 14 is
    installed: the files a student edits, whose editor formats on save, are
    kept so. common/ keeps its hand-aligned tables and is not checked."""
    exe = shutil.which("clang-format-14") or shutil.which("clang-format")
    if not exe:
        return None
    r = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, text=True)
    if "version 14." not in r.stdout:
        return None
    bad = []
    for lab in labs:
        for top in (LABS, SOLUTIONS):
            for f in lab.files:
                path = os.path.join(top, lab.name, f)
                if path.endswith((".c", ".h")) and os.path.isfile(path) and subprocess.run(
                        [exe, "--dry-run", "--Werror", path], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode:
                    bad.append(os.path.relpath(path, ROOT))
    return bad


def stage_manifests(sh, labs):
    """lab.json already passed the loader (all_labs()); the mutants' index and
    patches, and the starters, are checked here."""
    sh.stage("manifests, mutants' patches and starters")
    for lab in labs:
        sh.check(True, f"manifest {lab.name} (format, keys, 100 points, hints, cited TODOs)")
        bad_calls = hint_call_problems(lab)
        sh.check(not bad_calls, f"hints of {lab.name} name only calls that exist "
                 f"(solution, tests, common/include)", "; ".join(bad_calls))
        bad_json = handout_manifest_problems(lab)
        sh.check(not bad_json, f"handout of {lab.name}: its lab.json loads, counts hidden "
                 f"tests without naming them and seals every hint but the first",
                 "; ".join(bad_json))
        bad_rows = handout_table_problems(lab)
        sh.check(not bad_rows, f"handout of {lab.name}: its tests table names tests of "
                 f"lab.json with their points", "; ".join(bad_rows))
        try:
            mus = mutants.load(lab)
        except Fail as e:
            sh.check(False, f"mutants of {lab.name}", str(e))
            continue
        bad = [f"{m.name}: {why}" for m in mus for why in [mutants.check(m)] if why]
        sh.check(bool(mus) and not bad, f"mutants of {lab.name}: {len(mus)} patch(es) apply "
                 "cleanly (git apply --check)", "; ".join(bad) or ("" if mus else "none"))
    problems = starter_diffs(labs)
    sh.check(not problems, "starters equal what gen-starters derives", "; ".join(problems))
    bad = format_problems(labs)
    if bad is None:
        sh.check(True, "format of the lab files: not run (no clang-format 14: ./workbook "
                 "setup installs Debian 12's)")
    else:
        sh.check(not bad, "format of the lab files: clang-format 14 leaves every one as it "
                 "is (.clang-format)", bad and "clang-format -i " + " ".join(bad) +
                 " (then ./workbook gen-starters --force)")
    unlisted = readme_unlisted()
    sh.check(not unlisted, "README.md's list of the labs names every lab",
             unlisted and f"not named there: {', '.join(unlisted)} (add each to its "
             f"paragraph 'The labs: ...'; new-lab does)")
    problems = loader_message_problems()
    sh.check(not problems, f"manifest loader: {len(BAD_MANIFESTS) + 1} malformed lab.json each "
             f"refused in one line naming the file and the problem", "; ".join(problems))
    stage_classroom(sh)


def readme_unlisted():
    """The labs that README.md's paragraph of the labs does not name, as
    `NN-name`: it is written by hand, and a new lab must join it."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    start = text.find("\nThe labs: ")
    para = text[start:text.find("\n\n", start + 1)] if start >= 0 else ""
    return [l.name for l in all_labs() if f"`{l.name}`" not in para]


def stage_classroom(sh):
    """The GitHub Classroom workflow is generated: it must list every lab's tests."""
    gen = os.path.join(ROOT, "grading", "github-classroom", "make-workflow.py")
    if not os.path.exists(gen):
        return
    r = subprocess.run(["python3", gen], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, stdin=subprocess.DEVNULL)
    with open(os.path.join(os.path.dirname(gen), "classroom.yml")) as f:
        same = r.returncode == 0 and f.read() == r.stdout
    sh.check(same, "grading/github-classroom/classroom.yml equals what make-workflow.py writes",
             "" if same else "regenerate: python3 grading/github-classroom/make-workflow.py "
             "> grading/github-classroom/classroom.yml")


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


def stage_bench_builds(sh, sol):
    """The benchmark program builds (it is never run here): nothing else
    builds it, and it once stopped linking unnoticed. Without liburcu its
    target does not exist and there is nothing to prove."""
    if "rcubench" not in build.ninja_targets(sol):
        print("note  bench not built: liburcu-dev is not installed", flush=True)
        return
    ok, err, _ = build.build(sol, ["rcubench"])
    sh.check(ok, "bench: rcubench builds and links without warnings (not run)", err)


def stage_solutions(sh, labs, sol):
    """Common and every lab against solutions/; the graded results."""
    sh.stage("common and solutions")
    if not configured(sh, sol, "solutions (-Werror)", "solutions", "own", werror=True):
        return None
    ok, err, _ = build.build(sol, ["common_tests"] + [l.target for l in labs])
    sh.check(ok, "build common and solutions without warnings", err)
    stage_bench_builds(sh, sol)
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
        names, res, logs = run_lab_tests(sol, lab)
        graded.append(reports.lab_result(lab, res, logs))
        pts = graded[-1]["score"]
        bad = [n for n in names if not res[n][0]]
        sh.check(bool(names) and not bad, f"solutions {lab.name}: {len(names) - len(bad)}/"
                 f"{len(names)} pass, {pts}/{lab.max_points} points", ", ".join(bad))
        sh.row(lab)["solutions"] = f"{pts}/{lab.max_points}"
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
        names, res, _ = run_lab_tests(st, lab)
        pts, _ = wbrun.score_lab(lab, res)
        good = [n for n in names if res[n][0]]
        sh.check(bool(names) and not good, f"starters {lab.name}: {len(names) - len(good)}/"
                 f"{len(names)} fail, {pts} points",
                 ("pass against the starter: " + ", ".join(good)) if good else "")
        sh.row(lab)["starters"] = f"{pts}/{lab.max_points}"


def mutant_caught(sh, mu, mu_dir, src):
    """Apply MU to the copy SRC, build, run its killed_by tests; True if caught."""
    lab = mu.lab
    what = f"mutant {lab.name}/{mu.name}"
    files = mu.files()
    why = mutants.apply(mu, src)
    try:
        if why:
            return sh.check(False, what, f"does not apply: {why}")
        ok, err, _ = build.build(mu_dir, [lab.target], src)
        if not ok:
            return sh.check(False, what, f"does not compile: {err}")
        # The tests it names are enough to prove it caught (and faster);
        # without killed_by, the whole lab runs.
        run_names, res, _ = run_lab_tests(mu_dir, lab, mu.killed_by or lab.names())
        lost = sum(t["points"] for t in lab.tests if t["name"] in res and not res[t["name"]][0])
        failed = [n for n in run_names if not res[n][0]]
        missed = [k for k in mu.killed_by if res[k][0]]
        good = bool(failed) and not missed
        return sh.check(good, f"{what} caught: loses {lost} points, "
                        f"{len(failed)}/{len(run_names)} test(s) run fail",
                        ("survives every test" if not failed else
                         f"killed_by tests that pass: {', '.join(missed)}") if not good else "")
    finally:
        for f in files:
            shutil.copyfile(os.path.join(SOLUTIONS, lab.name, f), os.path.join(src, lab.name, f))


def stage_mutants(sh, labs):
    sh.stage("mutants")
    mu_dir = bdir("mutants")
    src = os.path.join(mu_dir, "impl")
    if os.path.isdir(src):
        shutil.rmtree(src)
    shutil.copytree(SOLUTIONS, src, ignore=shutil.ignore_patterns("mutants"))
    # No CTest discovery: nothing here runs ctest, and discovery is a Python
    # run after each of the ~100 relinks (0.2 s of CPU each).
    if not configured(sh, mu_dir, "mutants (a copy of solutions/)", src, "solutions",
                      werror=False, extra=["-DWORKBOOK_DISCOVER_TESTS=OFF"]):
        return
    build.build(mu_dir, [l.target for l in labs])
    for lab in labs:
        mus = mutants.load(lab)
        caught = sum(mutant_caught(sh, mu, mu_dir, src) for mu in mus)
        sh.row(lab)["mutants"] = f"{caught}/{len(mus)}"
    # leave the copy equal to solutions/ and built
    build.build(mu_dir, [l.target for l in labs])


def preset_env(checker):
    """The environment CMakePresets.json's test preset CHECKER sets (one place)."""
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        presets = json.load(f)
    env = dict(os.environ)
    for t in presets.get("testPresets", []):
        if t["name"] == checker:
            env.update({k: v.replace("${sourceDir}", ROOT)
                        for k, v in t.get("environment", {}).items()})
    return env


# Seeds per sweep under each checker (plain runs: 20, sim_seeds_count()).
PRESET_SEEDS = {"valgrind": 2, "asan": 4, "tsan": 4}
# Tests a checker leaves out (cmake/Checkers.cmake's WORKBOOK_CTEST_DISABLED,
# tools/valgrind-run's filter): real threads under memcheck take minutes.
PRESET_SKIPS = {"valgrind": "*/parallel*"}


def preset_binaries(d, labs):
    """(label, path) of every test binary of build folder D."""
    return [("common", os.path.join(d, "common", "common_tests"))] + \
        [(l.label, wbrun.exe_path(d, l)) for l in labs]


def run_preset_binary(d, label, exe, checker, env):
    """Run the whole binary EXE once under CHECKER (valgrind through
    tools/valgrind-run: one memcheck process, its tests forked, on the shim);
    (every name, the names run, {name: (passed, messages)} or None, seconds)."""
    skip = PRESET_SKIPS.get(checker)
    every = wbrun.list_tests(exe)
    names = [n for n in every if not (skip and fnmatch.fnmatchcase(n, skip))]
    runs = os.path.join(d, "runs")
    os.makedirs(runs, exist_ok=True)
    report = os.path.join(runs, f"{label}.json")
    if os.path.exists(report):
        os.unlink(report)
    cmd = ([os.path.join(ROOT, "tools", "valgrind-run")] if checker == "valgrind" else []) + \
        [exe, "--color=never", "-j2", f"--json={report}"]
    t1 = time.time()
    with open(os.path.join(runs, f"{label}.log"), "w") as log:
        try:
            subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, cwd=runs, timeout=1800)
        except subprocess.TimeoutExpired:
            return every, names, None, time.time() - t1
    return every, names, wbrun.parse_report(report), time.time() - t1


def ctest_wiring(sh, d, checker, env, every):
    """The preset's CTest tests: one per test of each binary (EVERY: label ->
    names), and one of them (the first of common/) run through CTest with the
    preset's emulator and environment, to prove the wiring a maintainer's
    `ctest` uses."""
    r = subprocess.run(["ctest", "--test-dir", d, "-N"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    m = re.search(r"Total Tests: (\d+)", r.stdout)
    listed = int(m.group(1)) if m else -1
    skip = PRESET_SKIPS.get(checker)
    first = next((n for n in sorted(every.get("common", []))
                  if not (skip and fnmatch.fnmatchcase(n, skip))), None)
    one = subprocess.run(["ctest", "--test-dir", d, "-R", f"^common\\.{re.escape(first)}$",
                          "--output-on-failure", "--no-tests=error"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         stdin=subprocess.DEVNULL) if first else None
    total = sum(len(v) for v in every.values())
    ok = listed == total and one is not None and one.returncode == 0
    sh.check(ok, f"{checker} CTest: {listed} tests registered, common.{first} passes through "
             "ctest", "" if ok else f"expected {total} registered; " +
             (one.stdout.strip().splitlines()[-1] if one and one.stdout.strip() else "no run"))


def stage_preset(sh, labs, checker):
    """The CHECKER preset (valgrind, asan, tsan) on common and every solution:
    each test binary run whole, once, with the preset's environment (two
    binaries at a time), every test it holds passing (valgrind: all but the
    parallel ones); then the CTest wiring."""
    sh.stage(f"{checker} preset on common and solutions")
    d = bdir(checker)
    if not configured(sh, d, checker, "solutions", "own", checker=checker):
        return
    ok, err, _ = build.build(d, ["all"])
    if not sh.check(ok, f"build {checker}", err):
        return
    env = preset_env(checker)
    # The seed sweeps were proven over every seed by the plain stage; under a
    # checker they are run for what the checker sees (leaks, overflows, races),
    # which a few seeds show as well as twenty, at a fraction of the cost.
    env.setdefault("WORKBOOK_SEEDS", str(PRESET_SEEDS[checker]))
    bins = preset_binaries(d, labs)
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        runs = list(ex.map(lambda b: run_preset_binary(d, b[0], b[1], checker, env), bins))
    every = {}
    for (label, _), (names_all, names, res, secs) in zip(bins, runs):
        every[label] = names_all
        if res is None:
            sh.check(False, f"{checker} {label}", "the runner wrote no report (hung or "
                     f"crashed): {os.path.relpath(os.path.join(d, 'runs', label + '.log'), ROOT)}")
            continue
        bad = [n for n in names if not res.get(n, (False,))[0]]
        sh.check(bool(names) and not bad, f"{checker} {label}: {len(names) - len(bad)}/"
                 f"{len(names)} pass, {secs:.0f}s", ", ".join(bad[:6]))
    ctest_wiring(sh, d, checker, env, every)


def stage_grading(sh):
    """Hostile submissions are contained (grading/tests/containment.py)."""
    sh.stage("grading containment")
    path = os.path.join(ROOT, "grading", "tests")
    if not os.path.isfile(os.path.join(path, "containment.py")):
        sh.check(False, "grading containment", "grading/tests/containment.py is missing")
        return
    sys.path.insert(0, path)
    import containment
    for ok, what, detail in containment.checks():
        sh.check(ok, what, detail)
    # The same attacks in the fallback sandbox (an unprivileged user, no
    # namespaces), which needs root; it makes the hidden folders 0700, and
    # the workbook's own copy gets their modes back afterwards.
    if os.geteuid() != 0:
        sh.check(True, "grading containment in the 'user' sandbox: not run (needs root)")
        return
    modes = {h: os.stat(os.path.join(ROOT, h)).st_mode & 0o7777 for h in sandbox.HIDDEN
             if os.path.isdir(os.path.join(ROOT, h))}
    try:
        for ok, what, detail in containment.checks("user"):
            sh.check(ok, what, detail)
    finally:
        for h, m in modes.items():
            os.chmod(os.path.join(ROOT, h), m)


def stage_docs(sh, sol):
    sh.stage("docs")
    if "docs-check" not in build.ninja_targets(sol):
        sh.check(False, "docs", "no docs-check target: doxygen or graphviz is missing "
                 "(./workbook setup)")
        return
    # both editions, warnings as errors, links, no solution code or answers
    ok, err, _ = build.build(sol, ["docs-check"])
    sh.check(ok, "docs: both editions, link check, no solutions in the student edition", err)


def stage_real(sh, labs):
    """Each lab with a real-kernel run, on Linux in QEMU (workbook.real): the
    reference clean in REAL_BOOTS boots (with what its scenario expects to
    see, lab 5's oops, seen in each), the starter's wrong exit caught."""
    labs = [l for l in labs if l.real_modules]
    if not labs:
        return
    sh.stage("real kernel in QEMU")
    if os.environ.get("WORKBOOK_REAL") == "0":
        sh.check(True, "real kernel: not run (WORKBOOK_REAL=0)")
        return
    top = bdir("real")
    for lab in labs:
        try:
            failed, ran, first = real.cmd_real(lab, SOLUTIONS, REAL_BOOTS, every=True,
                                               quiet=True, top=top)
            sh.check(not failed, f"real: {lab.name} " + ("the given module's story, each exit as "
                     "the scenario expects," if lab.real_given else "reference clean") +
                     f" in {ran - failed} of {ran} boots", first)
            if lab.real_given:      # the starter would run the very same module
                continue
            failed, ran, first = real.cmd_real(lab, LABS, REAL_BOOTS, quiet=True, top=top)
            sh.check(failed == 1, f"real: {lab.name} starter caught at boot {ran} of "
                     f"{REAL_BOOTS}: {first}" if failed else f"real: {lab.name} starter "
                     f"caught", "" if failed else "clean in every boot")
        except Fail as e:
            sh.check(False, f"real: {lab.name}", str(e))
    graded = [l for l in labs if not l.real_given]
    if graded:
        real_grade_check(sh, graded[0])


# Appended, in a real build only, to the reference's student file: a real
# build that can read solutions/ (outside the grader's sandbox) stops here.
READS_SOLUTIONS = """
#ifdef MODULE
#if __has_include("{path}")
#error "the real build read solutions/: it ran outside the grader's sandbox"
#endif
#endif
"""


def real_grade_check(sh, lab):
    """grade --real on LAB's reference, which asks in its real build alone
    whether solutions/ can be read: full points, and its real run built in
    the sandbox (outside it, its #error stops the build), booted clean and
    reported beside the score, not in it."""
    sys.path.insert(0, os.path.join(ROOT, "grading", "tests"))
    import containment
    tmp = tempfile.mkdtemp(prefix="rculabs-real-grade-")
    try:
        for other in all_labs():
            for f in other.files:
                d = os.path.join(tmp, "labs", other.name, f)
                os.makedirs(os.path.dirname(d), exist_ok=True)
                shutil.copyfile(os.path.join(SOLUTIONS, other.name, f), d)
        src = lab.real_modules[0]["source"]
        with open(os.path.join(tmp, "labs", lab.name, src), "a") as f:
            f.write(READS_SOLUTIONS.format(path=os.path.join(SOLUTIONS, lab.name, src)))
        r, res = containment.grade(tmp, os.path.join(tmp, "graded.json"), [lab.name],
                                   dict(os.environ), check_code=True, more=["--real=1"])
        x = res and res["labs"][0]
        real_said = x and x.get("real")
        # The user sandbox (no namespaces) leaves solutions/ in place, unreadable:
        # the compiler stops at it, which proves the same.
        if res and res.get("isolation", "").startswith("user"):
            contained = bool(real_said) and "Permission denied" in (real_said["first"] or "")
        else:
            contained = real_said == {"boots": 1, "failed": 0, "first": None}
        ok = bool(x) and x["score"] == x["max_score"] and contained
        sh.check(ok,
                 f"real: grade --real 1 {lab.name}: the reference graded "
                 f"{x and x['score']}/{x and x['max_score']}, its module built in the grader's "
                 f"sandbox (solutions/ unreadable there) and booted, reported beside the score: "
                 f"{real_said and reports.real_line(real_said)}",
                 "" if ok else f"real: {real_said}; grade said: {r.stdout.strip()[-400:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------ main

# ------------------------------------------------------------------ lanes
#
# Two lanes of stages run at once, each in a process of its own, so that
# one stage's idle CPU (a single long test, a link) is the other's: the
# main lane prints as it goes, the side lane's lines come after it. The
# side lane gets the two heaviest checker presets (or, with --quick, the
# grading containment), which roughly halves the CPU-seconds between them.

LANE_MARK = "SELFTEST-LANE "


def side_stages(quick, subset=False):
    """The side lane's stages. A subset of the labs skips the grading
    containment, which proves the grader, not a lab."""
    return ([] if subset else ["grading"]) if quick else ["valgrind", "asan"]


def run_side_lane(quick, only=()):
    """The side lane (a child process): its stages, then one line
    LANE_MARK + JSON (counts and stages) for the main lane to merge."""
    sh = Sheet()
    labs = selected_labs(only)
    for st in side_stages(quick, bool(only)):
        if st == "grading":
            stage_grading(sh)
        else:
            stage_preset(sh, labs, st)
    sh.end_stage()
    print(LANE_MARK + json.dumps({"passed": sh.passed, "failed": sh.failed,
                                  "stages": sh.stages}), flush=True)
    return 0


def die_with_parent():
    """The side lane ends when the selftest that started it is killed, even by
    SIGKILL (Linux's PR_SET_PDEATHSIG), instead of running on unwatched; and
    so does all it started (its memcheck and asan runs): it leads a process
    group of its own, and SIGTERM kills that group."""
    import signal
    os.setpgrp()
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:
        sys.exit(1)


def start_side_lane(quick, only=()):
    os.makedirs(bdir("lane"), exist_ok=True)
    log = open(os.path.join(bdir("lane"), "lane.log"), "w+")
    p = subprocess.Popen([sys.executable, "-B", os.path.abspath(__file__), "--side-lane"] +
                         (["--quick"] if quick else []) +
                         ([f"--labs={','.join(only)}"] if only else []), stdout=log,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT)
    return p, log


def join_side_lane(sh, lane):
    """Wait for the side lane; print its lines, count its checks, keep its stages."""
    p, log = lane
    rc = p.wait()
    log.seek(0)
    lines = log.read().splitlines()
    log.close()
    done = [ln for ln in lines if ln.startswith(LANE_MARK)]
    print("\n(the stages below ran beside the ones above)", flush=True)
    for ln in lines:
        if not ln.startswith(LANE_MARK):
            print(ln)
    if not done:
        sh.check(False, "side lane of stages", f"ended (status {rc}) without its summary")
        return
    d = json.loads(done[-1][len(LANE_MARK):])
    sh.passed += d["passed"]
    sh.failed += d["failed"]
    sh.side_stages = d["stages"]


def selected_labs(only):
    """Every lab, or the labs named in ONLY and those they build on (the labs
    they link and whose modules they load), in the labs' order."""
    labs = all_labs()
    if not only:
        return labs
    want = {find_lab(a, labs).name for a in only}
    grew = True
    while grew:
        more = {u for l in labs if l.name in want for u in l.builds_on()}
        grew = not more <= want
        want |= more
    return [l for l in labs if l.name in want]


def run(quick=False, only=()):
    if only:
        selected_labs(only)     # an unknown lab: one line, exit 2, nothing run
    sh = Sheet()
    try:
        labs = selected_labs(only)
    except Fail as e:
        sh.check(False, "labs", str(e))
        return finish(sh)
    if only:
        print(f"selftest of {', '.join(l.name for l in labs)} (the labs named and those "
              f"they build on); not run for a subset: the grading containment and the "
              f"docs, which ./workbook selftest runs", flush=True)
    if not os.path.isdir(SOLUTIONS) or any(
            not os.path.isdir(os.path.join(SOLUTIONS, l.name)) for l in labs):
        raise Fail("selftest needs every lab's solutions/ (this looks like a handout)", 1)
    build.check_deps(need_valgrind=not quick)
    stage_manifests(sh, labs)
    lane = start_side_lane(quick, only)
    try:
        sol = bdir("solutions")
        graded = stage_solutions(sh, labs, sol)
        if graded is not None:
            stage_reports(sh, labs, graded)
            stage_starters(sh, labs)
            stage_mutants(sh, labs)
            if not quick:
                stage_preset(sh, labs, "tsan")
                if not only:
                    stage_grading(sh)
            if not only:
                stage_docs(sh, sol)
            if not quick:
                stage_real(sh, labs)
    finally:
        sh.end_stage()
        join_side_lane(sh, lane)
    return finish(sh)


def finish(sh):
    sh.end_stage()
    if sh.table:
        print(f"\n{'lab':<24} {'solutions':>10} {'starters':>10} {'mutants caught':>15}")
        for name, row in sh.table.items():
            print(f"{name:<24} {row['solutions']:>10} {row['starters']:>10} {row['mutants']:>15}")
    if sh.stages:
        print(f"\nstage durations (wall, CPU; the side lane's beside the main one's): "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} now")
        for lane, stages in (("main", sh.stages), ("side", sh.side_stages)):
            for title, start, end, c0, c1 in stages:
                print(f"  {lane:<5} {title:<44} {end - start:6.0f}s {c1 - c0:6.0f}s CPU")
    print(f"\nselftest took {time.time() - sh.t0:.0f}s, {cpu_seconds():.0f} CPU-seconds")
    print(f"{sh.passed} passed, {sh.failed} failed", flush=True)
    return 1 if sh.failed else 0


if __name__ == "__main__":
    # The side lane: ./workbook selftest starts this file as a child process.
    if "--side-lane" in sys.argv[1:]:
        die_with_parent()
        labs_arg = [a for a in sys.argv[1:] if a.startswith("--labs=")]
        sys.exit(run_side_lane("--quick" in sys.argv[1:],
                               labs_arg[0][len("--labs="):].split(",") if labs_arg else ()))
    sys.exit("selftest.py: run ./workbook selftest")
