#!/usr/bin/env python3
"""workbook - the RCU Labs command (run it as ./workbook; see --help).

Rule kept here: nothing about a particular lab is written in this file.
Every lab is found under labs/NN-name/ and described by its lab.json
(files, uses, modules, tests with points and timeouts, hints, mutants).
Results always come from Criterion's own report file (--json=FILE), never
from what the tested code prints; a test passes only if the runner recorded
it as PASSED. Nothing is deleted or overwritten without --force.
Standard library only (Debian 12's python3).
"""
import argparse
import concurrent.futures
import csv
import fnmatch
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape as xml_escape, quoteattr

sys.dont_write_bytecode = True
TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import gen_starter  # noqa: E402

LABS = os.path.join(ROOT, "labs")
SOLUTIONS = os.path.join(ROOT, "solutions")
PACKAGES = ["cmake", "ninja-build", "gcc", "pkg-config", "libcriterion-dev", "valgrind",
            "python3", "doxygen", "graphviz", "liburcu-dev", "libdw-dev"]
JOBS = max(1, min(os.cpu_count() or 2, 4))
OUTPUT_CAP = 64 << 20        # bytes a graded run may write (RLIMIT_FSIZE)


class Fail(Exception):
    """A user-facing error: one line, exit status 2 (or .code)."""

    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


def say(*a, **k):
    print(*a, **k, flush=True)


def warn(msg):
    print(f"workbook: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------- labs

class Lab:
    def __init__(self, path):
        self.dir = path
        self.name = os.path.basename(path)
        try:
            with open(os.path.join(path, "lab.json")) as f:
                m = json.load(f)
        except (OSError, ValueError) as e:
            raise Fail(f"{self.name}/lab.json is not valid JSON: {e}")
        self.m = m
        self.label = m.get("label", self.name)
        self.title = m.get("title", "")
        self.files = list(m.get("files", []))
        self.uses = list(m.get("uses", []))
        self.modules = list(m.get("modules", []))
        self.tests = list(m.get("tests", []))
        self.hints = list(m.get("hints", []))
        self.mutants = list(m.get("mutants", []))
        self.target = f"{self.label}_tests"
        self.max_points = sum(int(t.get("points", 0)) for t in self.tests)

    def test(self, name):
        for t in self.tests:
            if t.get("name") == name:
                return t
        return None

    def timeout(self):
        ts = [float(t.get("timeout", 60)) for t in self.tests] or [60.0]
        return max(ts)


def all_labs():
    if not os.path.isdir(LABS):
        raise Fail(f"no labs/ folder in {ROOT}")
    out = []
    for d in sorted(os.listdir(LABS)):
        p = os.path.join(LABS, d)
        if re.match(r"^\d\d-", d) and os.path.isfile(os.path.join(p, "lab.json")):
            out.append(Lab(p))
    return out


def find_lab(arg, labs=None):
    labs = labs if labs is not None else all_labs()
    a = arg.rstrip("/").split("/")[-1]
    for lab in labs:
        if a in (lab.name, lab.label) or lab.name.startswith(a + "-") or \
                (a.isdigit() and int(a) == int(lab.name[:2])):
            return lab
    names = ", ".join(l.name for l in labs) or "none"
    raise Fail(f"unknown lab '{arg}' (labs: {names})")


def select_labs(args_labs):
    labs = all_labs()
    if not args_labs:
        return labs
    seen, out = set(), []
    for a in args_labs:
        lab = find_lab(a, labs)
        if lab.name not in seen:
            seen.add(lab.name)
            out.append(lab)
    return sorted(out, key=lambda l: l.name)


# ---------------------------------------------------------------- build

def check_deps(need_valgrind=False):
    missing = [t for t in ("cmake", "ninja", "cc", "pkg-config") if not shutil.which(t)]
    if not missing and subprocess.run(["pkg-config", "--exists", "criterion"]).returncode:
        missing.append("libcriterion-dev")
    if need_valgrind and not shutil.which("valgrind"):
        missing.append("valgrind")
    if missing:
        raise Fail(f"missing {', '.join(missing)}: run ./workbook setup", 1)


def configure(bdir, impl="labs", prior="own", werror=False, checker="", only=None, quiet=True):
    """Configure BDIR (once; again only when the settings change)."""
    check_deps(checker == "valgrind")
    impl = os.path.abspath(os.path.join(ROOT, impl))
    opts = [f"-DWORKBOOK_IMPL={impl}", f"-DWORKBOOK_PRIOR={prior}",
            f"-DWORKBOOK_WERROR={'ON' if werror else 'OFF'}", f"-DWORKBOOK_CHECKER={checker}",
            f"-DWORKBOOK_ONLY_LABS={';'.join(only or [])}", "-DCMAKE_BUILD_TYPE=Debug"]
    stamp = os.path.join(bdir, ".workbook-config")
    key = "\n".join(opts)
    if os.path.isfile(os.path.join(bdir, "build.ninja")) and os.path.isfile(stamp):
        with open(stamp) as f:
            if f.read() == key:
                return True, ""
    r = subprocess.run(["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja"] + opts,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode:
        return False, r.stdout
    with open(stamp, "w") as f:
        f.write(key)
    return True, r.stdout


def first_error(text, stage=None):
    """The compiler's (or linker's) first error, paths made relative."""
    lines = text.splitlines()
    pick = None
    for pat in (r"\berror\b", r"undefined reference|multiple definition", r"FAILED|No such file"):
        for ln in lines:
            if re.search(pat, ln) and not ln.startswith(("ninja:", "/usr/bin/cc", "FAILED: CMake")):
                pick = ln
                break
        if pick:
            break
    pick = pick or (lines[-1] if lines else "build failed")
    if stage:
        pick = pick.replace(stage.rstrip("/") + "/", "labs/")
    return pick.replace(ROOT + "/", "").strip()


def build(bdir, targets, stage=None):
    r = subprocess.run(["ninja", "-C", bdir] + list(targets), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    if r.returncode:
        return False, first_error(r.stdout, stage), r.stdout
    return True, "", r.stdout


def ninja_targets(bdir):
    r = subprocess.run(["ninja", "-C", bdir, "-t", "targets", "all"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return {ln.split(":")[0] for ln in r.stdout.splitlines()}


# ------------------------------------------------------------------ run

def _limits():
    os.setsid()
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_CAP, OUTPUT_CAP))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WORKBOOK_", "CRITERION_", "ASAN_", "LSAN_", "UBSAN_", "TSAN_"))}
    env.update(extra or {})
    return env


def run_binary(exe, args, cwd, env, wall, log_path, echo=False):
    """Run a test binary in its own process group with a wall-clock limit.
    Returns (returncode or None on timeout, seconds)."""
    t0 = time.time()
    with open(log_path, "w") as log:
        if echo:
            p = subprocess.Popen([exe] + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 preexec_fn=_limits)
            reader = threading.Thread(target=_tee, args=(p.stdout, log), daemon=True)
            reader.start()
        else:
            p = subprocess.Popen([exe] + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=subprocess.STDOUT, preexec_fn=_limits)
        try:
            rc = p.wait(timeout=wall)
        except subprocess.TimeoutExpired:
            rc = None
        try:
            os.killpg(p.pid, signal.SIGKILL)   # workers die with the runner; be sure
        except ProcessLookupError:
            pass
        if rc is None:
            p.wait()
        if echo:
            reader.join(5)
    return rc, time.time() - t0


def _tee(pipe, log):
    for line in iter(pipe.readline, b""):
        s = line.decode("utf-8", "replace")
        log.write(s)
        if not s.startswith("[PASS]"):
            sys.stdout.write(s)
            sys.stdout.flush()


def parse_report(json_path):
    """{"suite/name": (passed, [messages])} from Criterion's JSON report, or None."""
    try:
        with open(json_path, "rb") as f:
            raw = f.read().decode("utf-8", "replace")
        data = json.loads(raw, strict=False)
        out = {}
        for s in data["test_suites"]:
            for t in s["tests"]:
                msgs = t.get("messages") or []
                out[f"{s['name']}/{t['name']}"] = (t.get("status") == "PASSED",
                                                   [str(m).replace(ROOT + "/", "") for m in msgs])
        return out
    except (OSError, ValueError, KeyError, TypeError):
        pass
    xml_path = json_path[:-5] + ".xml"
    try:
        root = ET.parse(xml_path).getroot()
        out = {}
        for s in root.iter("testsuite"):
            for t in s.iter("testcase"):
                msgs = [(e.get("message") or e.text or "").strip() for e in t]
                out[f"{s.get('name')}/{t.get('name')}"] = (t.get("status") == "PASSED", msgs)
        return out
    except (OSError, ET.ParseError):
        return None


def list_tests(exe):
    """Test names (suite/name) the binary holds, from --list."""
    r = subprocess.run([exe, "--list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True, stdin=subprocess.DEVNULL, env=clean_env(), timeout=60)
    names, suite = [], None
    for ln in r.stdout.splitlines():
        m = re.match(r"^(\S+): \d+ tests?$", ln)
        if m:
            suite = m.group(1)
            continue
        m = re.match(r"^[├└│]── (\S+)", ln)
        if m and suite:
            names.append(f"{suite}/{m.group(1)}")
    return names


def extglob(names):
    """A Criterion --filter matching exactly these suite/name tests."""
    if len(names) == 1:
        return names[0]
    return "@(" + "|".join(names) + ")"


def run_tests(exe, names, workdir, timeouts=None, jobs=2, echo=False, extra_env=None,
              filter_names=True, trace_dir=None):
    """Run NAMES (suite/name) of EXE; {name: (passed, messages)} for each.
    Tests are grouped by timeout (Criterion's --timeout lowers each test's
    own); a group that outlives its wall-clock limit is rerun one test at a
    time so that one hang costs only that test."""
    os.makedirs(workdir, exist_ok=True)
    timeouts = timeouts or {}
    env = clean_env(dict(extra_env or {},
                         WORKBOOK_TRACE_DIR=trace_dir or os.path.join(workdir, "traces")))
    groups = {}
    for n in names:
        groups.setdefault(float(timeouts.get(n, 60)), []).append(n)
    results, logs = {}, []
    seq = [0]

    def one_run(group, tmo, wall):
        seq[0] += 1
        base = os.path.join(workdir, f"run{seq[0]}")
        for ext in (".json", ".xml"):
            if os.path.exists(base + ext):
                os.unlink(base + ext)
        args = ["--color=never", f"-j{jobs}", f"--json={base}.json", f"--xml={base}.xml",
                f"--timeout={int(tmo) if tmo == int(tmo) else tmo}"]
        if filter_names:
            args.append(f"--filter={extglob(group)}")
        rc, secs = run_binary(exe, args, workdir, env, wall, base + ".log", echo)
        logs.append(base + ".log")
        return rc, parse_report(base + ".json")

    for tmo, group in sorted(groups.items()):
        wall = tmo * ((len(group) + jobs - 1) // jobs) + 30
        rc, rep = one_run(group, tmo, wall)
        if rc is None or rep is None:
            for n in group:              # one at a time
                rc1, rep1 = one_run([n], tmo, tmo + 30)
                if rep1 and n in rep1:
                    results[n] = rep1[n]
                else:
                    why = "timed out (the whole run was killed)" if rc1 is None else \
                        "the test runner wrote no report (it crashed)"
                    results[n] = (False, [why])
            continue
        for n in group:
            r = rep.get(n, (False, ["not run: no such test in the binary"]))
            if not r[0] and not r[1]:
                r = (False, ["failed without an assertion message: it died of an unexpected "
                             "signal, a BUG other than the expected one, or left early "
                             "(exit()); ./workbook check shows its output"])
            results[n] = r
    return results, logs


def exe_path(bdir, lab):
    return os.path.join(bdir, lab.target)


def failure_details(log_paths, test):
    """Seed, replay and timeline lines printed for TEST (from the run's log)."""
    out = []
    suite, name = test.split("/", 1)
    tag = f"--test {test}"
    for p in log_paths:
        try:
            with open(p, errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for i, ln in enumerate(lines):
            if tag in ln and "replay:" in ln:
                out.append(ln.strip())
                for nxt in lines[i + 1:i + 3]:
                    if "timeline:" in nxt and f"-{suite}-{name}-" in nxt:
                        out.append(nxt.strip())
            if ln.startswith("[----]") and f"{suite}::{name}" in ln:
                out.append(ln.strip())
    return list(dict.fromkeys(out))


def manifest_names(lab, exe):
    """The tests to run: the manifest's (or, while it lists none, the binary's)."""
    if lab.tests:
        return [t["name"] for t in lab.tests]
    return list_tests(exe) if os.path.exists(exe) else []


def score_lab(lab, results):
    pts, passed = 0, 0
    for t in lab.tests:
        if results.get(t["name"], (False,))[0]:
            pts += int(t.get("points", 0))
            passed += 1
    if not lab.tests:
        passed = sum(1 for v in results.values() if v[0])
    return pts, passed


# ------------------------------------------------------------- student

def student_build(labs, prior, werror=False):
    bdir = os.path.join(ROOT, "build-wb-default" if prior == "own" else "build-wb-prior")
    ok, out = configure(bdir, "labs", prior, werror)
    if not ok:
        raise Fail(f"cmake failed: {first_error(out)}", 1)
    return bdir


def run_lab(bdir, lab, only_test=None, echo=False):
    ok, err, _ = build(bdir, [lab.target])
    if not ok:
        return None, err, []
    exe = exe_path(bdir, lab)
    names = manifest_names(lab, exe)
    if only_test:
        if only_test not in names and only_test not in list_tests(exe):
            raise Fail(f"{lab.name} has no test '{only_test}' (see ./workbook check {lab.name} --list)")
        names = [only_test]
    tmo = {t["name"]: t.get("timeout", 60) for t in lab.tests}
    extra = {}
    for k in ("WORKBOOK_SEED", "WORKBOOK_SEEDS", "WORKBOOK_MODE"):
        if os.environ.get(k):
            extra[k] = os.environ[k]
    res, logs = run_tests(exe, names, os.path.join(bdir, "runs", lab.label), tmo, JOBS, echo,
                          extra, trace_dir=os.path.join(ROOT, "traces"))
    return res, "", logs


def first_failing(lab, res):
    for t in lab.tests or [{"name": n} for n in sorted(res)]:
        if t["name"] in res and not res[t["name"]][0]:
            return t
    return None


def cmd_status(a):
    labs = select_labs(a.labs)
    bdir = student_build(labs, a.prior)
    rows = []
    say(f"RCU Labs - progress ({'your own earlier labs' if a.prior == 'own' else 'earlier labs from solutions/'})")
    say(f"{'lab':<24} {'tests':>7} {'points':>8}  next")
    total = maxt = 0
    for lab in labs:
        res, err, _ = run_lab(bdir, lab)
        maxt += lab.max_points
        if res is None:
            say(f"{lab.name:<24} {'-':>7} {0:>4}/{lab.max_points:<3}  does not compile: {err}")
            continue
        pts, passed = score_lab(lab, res)
        total += pts
        n = len(lab.tests) or len(res)
        nxt = first_failing(lab, res)
        if nxt is None:
            note = "done"
        else:
            h = nxt.get("hint") or (lab.hints[0] if lab.hints else "")
            note = f"{nxt['name']}" + (f" - hint: {h}" if h else "")
        say(f"{lab.name:<24} {passed:>3}/{n:<3} {pts:>4}/{lab.max_points:<3}  {note}")
        rows.append((lab, pts))
    say(f"{'total':<24} {'':>7} {total:>4}/{maxt:<3}")
    say("details: ./workbook check LAB   hints: ./workbook hint LAB")
    return 0


def cmd_check(a):
    lab = find_lab(a.lab)
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
    res, err, logs = run_lab(bdir, lab, a.test, echo=True)
    if res is None:
        say(f"{lab.name} does not compile:\n  {err}")
        return 1
    say("")
    failed = [n for n, v in res.items() if not v[0]]
    for n in sorted(res):
        passed, msgs = res[n]
        t = lab.test(n) or {}
        pts = int(t.get("points", 0))
        say(f"{'OK  ' if passed else 'FAIL'} {n} ({pts if passed else 0}/{pts})")
        if not passed:
            for m in msgs:
                say(f"       {m}")
            for d in failure_details(logs, n):
                if not d.startswith("[----]"):
                    say(f"       {d}")
    pts, passed = score_lab(lab, res)
    say(f"{len(res) - len(failed)}/{len(res)} tests pass, {pts}/{lab.max_points} points")
    if failed:
        t = first_failing(lab, res) or {}
        if t.get("hint"):
            say(f"next: {t['name']} - hint: {t['hint']}")
        say(f"one test: ./workbook check {lab.name} --test {failed[0]}   more hints: ./workbook hint {lab.name}")
    return 1 if failed else 0


def hint_state():
    return os.path.join(ROOT, "build-wb-default", "hints.json")


def cmd_hint(a):
    lab = find_lab(a.lab)
    if not lab.hints:
        say(f"{lab.name} has no hints yet; read labs/{lab.name}/README.md")
        return 0
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


def cmd_watch(a):
    lab = find_lab(a.lab)
    files = watched_files(lab)

    def snap():
        s = {}
        for p in files:
            try:
                s[p] = os.stat(p).st_mtime_ns
            except OSError:
                s[p] = None
        return s

    say(f"watching {', '.join(os.path.relpath(p, ROOT) for p in files)} (Ctrl-C to stop)")
    last = None
    try:
        while True:
            cur = snap()
            if cur != last:
                last = cur
                say(time.strftime("\n--- %H:%M:%S ---"))
                try:
                    cmd_check(argparse.Namespace(lab=lab.name, test=a.test, prior=a.prior,
                                                 list=False))
                except Fail as e:
                    warn(str(e))
                last = snap()
            if a.once:
                return 0
            time.sleep(1)
    except KeyboardInterrupt:
        say("")
        return 0


# --------------------------------------------------------- gen-starters

def derive_starters(labs):
    """[(lab, file, derived text or None, error)]"""
    out = []
    for lab in labs:
        for f in lab.files:
            src = os.path.join(SOLUTIONS, lab.name, f)
            try:
                with open(src) as fh:
                    out.append((lab, f, gen_starter.starter(fh.read(), os.path.relpath(src, ROOT)), ""))
            except OSError:
                out.append((lab, f, None, f"solutions/{lab.name}/{f} is missing"))
            except gen_starter.MarkerError as e:
                out.append((lab, f, None, str(e)))
    return out


def starter_diffs(labs):
    problems = []
    for lab, f, text, err in derive_starters(labs):
        if err:
            problems.append(err)
            continue
        dst = os.path.join(LABS, lab.name, f)
        try:
            with open(dst) as fh:
                if fh.read() != text:
                    problems.append(f"labs/{lab.name}/{f} differs from what solutions/{lab.name}/{f} derives")
        except OSError:
            problems.append(f"labs/{lab.name}/{f} is missing")
    return problems


def cmd_gen_starters(a):
    if not os.path.isdir(SOLUTIONS):
        raise Fail("no solutions/ folder here (a handout has none)")
    labs = select_labs(a.labs)
    if a.check:
        problems = starter_diffs(labs)
        for p in problems:
            say(p)
        say(f"starters: {'OK' if not problems else f'{len(problems)} problem(s)'}")
        return 1 if problems else 0
    derived = derive_starters(labs)
    errs = [e for *_, e in derived if e]
    if errs:
        for e in errs:
            warn(e)
        return 1
    refused = []
    for lab, f, text, _ in derived:
        dst = os.path.join(LABS, lab.name, f)
        if os.path.exists(dst):
            with open(dst) as fh:
                if fh.read() == text:
                    continue
            if not a.force:
                refused.append(dst)
                continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as fh:
            fh.write(text)
        say(f"wrote {os.path.relpath(dst, ROOT)}")
    if refused:
        for p in refused:
            warn(f"{os.path.relpath(p, ROOT)} differs and was kept (--force overwrites it)")
        return 1
    return 0


# ------------------------------------------------------------- grading

def locate_impl(d):
    """The folder holding NN-name/ lab folders inside submission D."""
    if not os.path.isdir(d):
        raise Fail(f"submission folder {d} does not exist")
    names = {l.name for l in all_labs()}

    def has(x):
        return os.path.isdir(x) and any(os.path.isdir(os.path.join(x, n)) for n in names)
    cands = [d, os.path.join(d, "labs")]
    for s in sorted(os.listdir(d)):
        p = os.path.join(d, s)
        if os.path.isdir(p) and not os.path.islink(p):
            cands += [p, os.path.join(p, "labs")]
    for c in cands:
        if has(c):
            return c
    raise Fail(f"{d} holds no lab folder (expected {d}/labs/NN-name/ or {d}/NN-name/)")


class Slot:
    """A reusable build folder for grading (one per parallel job)."""

    def __init__(self, key, prior):
        self.dir = os.path.join(ROOT, f"build-wb-grade-{prior}-{key}")
        self.stage = os.path.join(self.dir, "impl")
        self.prior = prior
        self.configured = False


INCLUDE = re.compile(r'^\s*#\s*(?:include|include_next|embed)\s*(.*)$', re.M)


def outside_includes(path):
    """Why the student file at PATH may read files beyond the workbook's
    headers (an absolute or ../ include, a computed include, .incbin), or ''."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    for m in INCLUDE.finditer(text):
        arg = m.group(1).strip()
        q = re.match(r'^[<"]([^>"]*)[>"]', arg)
        if not q:
            return f"computed #include {arg[:40]}"
        inc = q.group(1)
        if inc.startswith("/") or ".." in inc or "solutions" in inc:
            return f"#include {arg[:60]}"
    if re.search(r"\.incbin|__has_include|\bembed\b", text):
        return ".incbin/#embed"
    return ""


def stage_submission(impl, slot, labs):
    """Copy only the manifests' files into the slot's stage; {lab: missing files}."""
    if os.path.isdir(slot.stage):
        shutil.rmtree(slot.stage)
    missing = {}
    for lab in all_labs():
        # Files of the lab folder that are not the student's (e.g. a module
        # the tests load) come from the workbook.
        for d, dirs, fs in os.walk(lab.dir):
            rel = os.path.relpath(d, lab.dir)
            if rel == ".":
                dirs[:] = [x for x in dirs if x not in ("tests", "traces")]
            for f in fs:
                r = os.path.normpath(os.path.join(rel, f))
                if r in lab.files or r in ("lab.json", "README.md"):
                    continue
                dst = os.path.join(slot.stage, lab.name, r)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(os.path.join(d, f), dst)
        for f in lab.files:
            src = os.path.join(impl, lab.name, f) if impl else None
            dst = os.path.join(slot.stage, lab.name, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if src and os.path.isfile(src) and not os.path.islink(src):
                shutil.copyfile(src, dst)
                bad = outside_includes(dst)
                if bad:
                    missing.setdefault(lab.name, []).append(
                        f"labs/{lab.name}/{f} reaches outside the lab ({bad}): not graded")
            else:
                why = "is a link (not taken)" if src and os.path.islink(src) else "is missing"
                missing.setdefault(lab.name, []).append(f"labs/{lab.name}/{f} {why}")
                with open(dst, "w") as fh:
                    fh.write(f'#error "labs/{lab.name}/{f} is missing from the submission"\n')
    return missing


def grade_labs(impl, labs, prior, slot, jobs=2):
    """Grade LABS of the submission at IMPL; a list of lab results."""
    missing = stage_submission(impl, slot, labs)
    if not slot.configured:
        ok, out = configure(slot.dir, slot.stage, prior, False)
        if not ok:
            raise Fail(f"cmake failed: {first_error(out)}", 1)
        slot.configured = True
    out = []
    for lab in labs:
        r = {"lab": lab, "error": "", "results": {}, "score": 0, "max": lab.max_points}
        need = [lab.name] + ([] if prior == "solutions" else lab.uses)
        miss = [m for n in need for m in missing.get(n, [])]
        if miss:
            r["error"] = "; ".join(miss)
        else:
            ok, err, _ = build(slot.dir, [lab.target], slot.stage)
            if not ok:
                r["error"] = f"does not compile: {err}"
            else:
                exe = exe_path(slot.dir, lab)
                names = manifest_names(lab, exe)
                tmo = {t["name"]: t.get("timeout", 60) for t in lab.tests}
                r["results"], _ = run_tests(exe, names, os.path.join(slot.dir, "runs", lab.label),
                                            tmo, jobs)
                r["score"], _ = score_lab(lab, r["results"])
        out.append(r)
    return out


def report_text(results, title=None):
    o = io.StringIO()
    if title:
        o.write(f"# {title}\n")
    tot = mx = 0
    for r in results:
        lab = r["lab"]
        o.write(f"== {lab.name}: {lab.title} ==\n")
        if r["error"]:
            o.write(f"   0 points: {r['error']}\n")
        for t in lab.tests:
            passed, msgs = r["results"].get(t["name"], (False, []))
            p = int(t.get("points", 0))
            o.write(f"== Test {lab.name}: {t['name']} == {'OK' if passed else 'FAIL'} "
                    f"({p if passed else 0}/{p})\n")
            if not passed and not r["error"]:
                for m in msgs:
                    o.write(f"     {m}\n")
        o.write(f"Score: {r['score']}/{r['max']}\n")
        tot += r["score"]
        mx += r["max"]
    o.write(f"Score: {tot}/{mx} (total)\n")
    return o.getvalue()


def test_rows(results):
    for r in results:
        lab = r["lab"]
        for t in lab.tests:
            passed, msgs = r["results"].get(t["name"], (False, []))
            if r["error"]:
                msgs = [r["error"]]
            p = int(t.get("points", 0))
            yield lab, t, passed, p if passed else 0, p, "\n".join(msgs)


def report_json(results):
    labs = []
    for r in results:
        labs.append({"name": r["lab"].name, "label": r["lab"].label, "score": r["score"],
                     "max_score": r["max"], "error": r["error"],
                     "tests": [{"name": t["name"], "passed": ok, "score": s, "max_score": m,
                                "output": out}
                               for lab, t, ok, s, m, out in test_rows([r])]})
    return json.dumps({"score": sum(r["score"] for r in results),
                       "max_score": sum(r["max"] for r in results), "labs": labs}, indent=2) + "\n"


def report_gradescope(results, secs=None):
    tests = []
    for lab, t, ok, s, m, out in test_rows(results):
        tests.append({"name": f"{lab.name}: {t['name']}", "score": s, "max_score": m,
                      "status": "passed" if ok else "failed", "output": out,
                      "visibility": t.get("visibility", "visible")})
    for r in results:
        if r["error"] and not r["lab"].tests:
            tests.append({"name": f"{r['lab'].name}: build", "score": 0, "max_score": 0,
                          "status": "failed", "output": r["error"], "visibility": "visible"})
    doc = {"score": sum(r["score"] for r in results),
           "output": " ".join(f"{r['lab'].name}: {r['score']}/{r['max']}" +
                              (f" ({r['error']})" if r["error"] else "") for r in results),
           "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
    if secs is not None:
        doc["execution_time"] = round(secs)
    return json.dumps(doc, indent=2) + "\n"


def report_junit(results):
    o = io.StringIO()
    o.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="rcu-labs">\n')
    for r in results:
        rows = list(test_rows([r]))
        fails = sum(1 for x in rows if not x[2])
        o.write(f'  <testsuite name={quoteattr(r["lab"].name)} tests="{len(rows)}" '
                f'failures="{fails}" errors="0">\n')
        for lab, t, ok, s, m, out in rows:
            o.write(f'    <testcase classname={quoteattr(lab.name)} name={quoteattr(t["name"])}>\n')
            if not ok:
                first = out.splitlines()[0] if out else "failed"
                o.write(f'      <failure message={quoteattr(first)}>{xml_escape(out)}</failure>\n')
            o.write(f'      <system-out>{xml_escape(f"{s}/{m} points")}</system-out>\n')
            o.write('    </testcase>\n')
        o.write('  </testsuite>\n')
    o.write('</testsuites>\n')
    return o.getvalue()


def render(fmt, results, secs=None, title=None):
    return {"text": lambda: report_text(results, title), "json": lambda: report_json(results),
            "gradescope": lambda: report_gradescope(results, secs),
            "junit": lambda: report_junit(results)}[fmt]()


def check_out_file(path, force):
    if path is None:
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise Fail(f"--out {path}: folder {parent} does not exist")
    if os.path.isdir(path):
        raise Fail(f"--out {path} is a folder")
    if os.path.exists(path) and not force:
        raise Fail(f"--out {path} exists (--force overwrites it)")


def write_out(path, text):
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(path, "w") as f:
            f.write(text)


def cmd_grade(a):
    labs = select_labs(a.labs)
    if a.batch:
        return grade_batch(a, labs)
    check_out_file(a.out, a.force)
    impl = locate_impl(a.impl) if a.impl else LABS
    check_deps()
    t0 = time.time()
    results = grade_labs(impl, labs, a.prior, Slot("0", a.prior), JOBS)
    write_out(a.out, render(a.format, results, time.time() - t0))
    return 0


def grade_batch(a, labs):
    if not a.out:
        raise Fail("--batch needs --out DIR (the folder for the CSV and the reports)")
    if not os.path.isdir(a.batch):
        raise Fail(f"--batch {a.batch} is not a folder")
    out = os.path.abspath(a.out)
    if not os.path.isdir(os.path.dirname(out)):
        raise Fail(f"--out {a.out}: folder {os.path.dirname(out)} does not exist")
    if os.path.isdir(out) and os.listdir(out) and not a.force:
        raise Fail(f"--out {a.out} is not empty (--force writes into it)")
    if os.path.exists(out) and not os.path.isdir(out):
        raise Fail(f"--out {a.out} is a file, not a folder")
    subs = sorted(s for s in os.listdir(a.batch)
                  if os.path.isdir(os.path.join(a.batch, s)) and not s.startswith("."))
    if not subs:
        raise Fail(f"--batch {a.batch} holds no submission folders")
    check_deps()
    os.makedirs(out, exist_ok=True)
    jobs = max(1, a.jobs)
    slots = [Slot(str(i), a.prior) for i in range(jobs)]
    free = list(slots)
    lock = threading.Lock()
    t0 = time.time()

    def grade_one(sub):
        with lock:
            slot = free.pop()
        t1 = time.time()
        try:
            try:
                impl = locate_impl(os.path.join(a.batch, sub))
                results = grade_labs(impl, labs, a.prior, slot, 2)
                err = ""
            except Fail as e:
                results = [{"lab": l, "error": str(e), "results": {}, "score": 0,
                            "max": l.max_points} for l in labs]
                err = str(e)
            secs = time.time() - t1
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", sub)
            with open(os.path.join(out, f"{safe}.txt"), "w") as f:
                f.write(report_text(results, sub))
            with open(os.path.join(out, f"{safe}.json"), "w") as f:
                f.write(report_gradescope(results, secs))
            say(f"{sub}: {sum(r['score'] for r in results)}/{sum(r['max'] for r in results)}"
                f" ({secs:.0f}s){' - ' + err if err else ''}")
            return sub, results
        finally:
            with lock:
                free.append(slot)

    rows = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for sub, results in ex.map(grade_one, subs):
            rows[sub] = results
    with open(os.path.join(out, "grades.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission"] + [l.name for l in labs] + ["total"])
        for sub in subs:
            rs = rows[sub]
            w.writerow([sub] + [r["score"] for r in rs] + [sum(r["score"] for r in rs)])
    say(f"graded {len(subs)} submission(s) in {time.time() - t0:.0f}s: "
        f"{os.path.join(a.out, 'grades.csv')}")
    return 0


# --------------------------------------------------------------- handout

def tracked_files():
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    if r.returncode == 0 and r.stdout:
        return [p for p in r.stdout.decode().split("\0") if p and os.path.exists(os.path.join(ROOT, p))]
    out = []
    for d, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(d, ROOT)
        dirs[:] = [x for x in dirs if not (x.startswith((".git", "build")) or x in ("traces", "__pycache__"))
                   or rel != "."]
        for f in files:
            out.append(os.path.normpath(os.path.join(rel, f)))
    return out


def strip_answers(text):
    m = re.search(r"^## Answers\b.*", text, re.M | re.S)
    return text[:m.start()].rstrip() + "\n" if m else text


def cmd_handout(a):
    out = os.path.abspath(a.out)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise Fail(f"{a.out} exists and is not an empty folder")
    if not os.path.isdir(os.path.dirname(out)):
        raise Fail(f"folder {os.path.dirname(out)} does not exist")
    release = {find_lab(x).name for x in (a.release or [])}
    labs = all_labs()
    files = tracked_files()
    kept = 0
    os.makedirs(out, exist_ok=True)
    for rel in files:
        parts = rel.split("/")
        if parts[0] == "solutions" and not (len(parts) > 1 and parts[1] in release):
            continue
        if parts[0] in ("grading", "bench") or rel in ("docs/instructors.md",) or \
                parts[0].startswith("build"):
            continue
        src = os.path.join(ROOT, rel)
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if parts[0] == "quizzes" and rel.endswith(".md"):
            with open(src) as f:
                text = strip_answers(f.read())
            with open(dst, "w") as f:
                f.write(text)
        elif parts[0] == "labs" and parts[-1] == "lab.json":
            with open(src) as f:
                m = json.load(f)
            m.pop("mutants", None)
            with open(dst, "w") as f:
                json.dump(m, f, indent=2)
                f.write("\n")
        else:
            shutil.copy2(src, dst)
        kept += 1
    # Proof: no line of an unreleased solution region appears anywhere.
    leaks = []
    sol_lines = {}
    for lab in labs:
        if lab.name in release:
            continue
        for f in lab.files:
            try:
                with open(os.path.join(SOLUTIONS, lab.name, f)) as fh:
                    for ln in gen_starter.solution_lines(fh.read()):
                        sol_lines.setdefault(ln, f"solutions/{lab.name}/{f}")
            except OSError:
                pass
    # Lines the workbook shows students anyway (kernel, tests, the starters'
    # unmarked parts) are not secrets: keep only the distinctive ones.
    public = set()
    for rel in files:
        top = rel.split("/")[:2]
        if (top[0] in ("common", "labs") or (top[0] == "solutions" and len(top) > 1
                                              and top[1] in release)) \
                and rel.endswith((".c", ".h")):
            try:
                with open(os.path.join(ROOT, rel), errors="replace") as fh:
                    public.update(ln.strip() for ln in fh)
            except OSError:
                pass
    sol_lines = {k: v for k, v in sol_lines.items() if k not in public}
    for d, _, fs in os.walk(out):
        for f in fs:
            p = os.path.join(d, f)
            try:
                with open(p, errors="replace") as fh:
                    for ln in fh:
                        s = ln.strip()
                        if s in sol_lines:
                            leaks.append(f"{os.path.relpath(p, out)}: '{s}' (from {sol_lines[s]})")
            except OSError:
                pass
    say(f"handout: {kept} files in {a.out} (no solutions/, grading/, bench/"
        f"{', released: ' + ', '.join(sorted(release)) if release else ''}; no quiz answers; no mutants)")
    if leaks:
        for l in leaks[:20]:
            warn(f"solution line in the handout: {l}")
        return 1
    say(f"checked: none of the {len(sol_lines)} solution lines of unreleased labs appears in it")
    say(f"next: cd {a.out} && ./workbook setup && ./workbook status")
    return 0


# ----------------------------------------------------------------- setup

def cmd_setup(a):
    missing = []
    if shutil.which("dpkg-query"):
        for p in PACKAGES:
            r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            if "install ok installed" not in r.stdout:
                missing.append(p)
        if missing:
            say(f"installing: {' '.join(missing)}")
            pre = [] if os.geteuid() == 0 else ["sudo"]
            if pre and not shutil.which("sudo"):
                raise Fail(f"need root to install {' '.join(missing)} (no sudo)", 1)
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            for cmd in (["apt-get", "update", "-q"],
                        ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing):
                if subprocess.run(pre + cmd, env=env, stdin=subprocess.DEVNULL).returncode:
                    raise Fail(f"'{' '.join(cmd)}' failed", 1)
        else:
            say("all packages present: " + " ".join(PACKAGES))
    else:
        say("not a Debian/Ubuntu system: install " + ", ".join(PACKAGES) + " yourself")
    check_deps()
    bdir = os.path.join(ROOT, "build-wb-default")
    ok, out = configure(bdir, "labs", "own")
    if not ok:
        raise Fail(f"cmake failed: {first_error(out)}", 1)
    r = subprocess.run(["ninja", "-C", bdir, "-k", "0"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        say(f"built, with errors in your lab files (./workbook status shows them): {first_error(r.stdout)}")
    else:
        say(f"built in {os.path.relpath(bdir, ROOT)}/. Next: ./workbook status")
    return 0


# ---------------------------------------------------------- bench, docs

def cmd_bench(a):
    script = os.path.join(ROOT, "bench", "bench.py")
    if not os.path.exists(script):
        raise Fail("bench/ is not part of this copy of the workbook")
    cmd = [sys.executable, script]
    if a.quick:
        cmd.append("--quick")
    if a.out:
        cmd += ["--out", os.path.abspath(a.out)]
    return subprocess.call(cmd, cwd=ROOT, stdin=subprocess.DEVNULL)


def cmd_docs(a):
    edition = "instructor" if a.instructor else "student"
    bdir = os.path.join(ROOT, "build-wb-docs")
    conf = ["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja"]
    if a.out:
        out = os.path.abspath(a.out)
        if os.path.exists(out) and os.listdir(out):
            raise Fail(f"{a.out} is not empty: choose an empty or new folder")
        conf.append(f"-DWORKBOOK_DOCS_DIR={out}")
    for cmd in (conf, ["cmake", "--build", bdir, "--target",
                       "docs-instructor" if a.instructor else "docs"]):
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise Fail(f"docs build failed: {first_error(r.stdout)} (is doxygen installed? ./workbook setup)", 1)
    where = os.path.join(a.out, edition) if a.out else os.path.join(bdir, "docs", edition)
    say(f"{edition} edition: {os.path.join(where, 'html', 'index.html')}")
    return 0


# ------------------------------------------------------------- selftest

def cmd_selftest(a):
    import selftest
    return selftest.run(a, sys.modules[__name__])


# ----------------------------------------------------------------- main

HELP = """usage: ./workbook COMMAND [options]

Students
  setup                       install what is missing (apt-get; sudo when not root), then build
  status [--prior own|solutions]
                              the board: each lab's tests passed/total, points, next failing test + hint
  check LAB [--test SUITE/NAME] [--list]
                              run one lab: failures with the assertion, replay seed and timeline
  hint LAB [N]                layered hints: one more each time (or hints 1..N)
  watch LAB [--test SUITE/NAME]
                              re-run check whenever a file of the lab is saved (Ctrl-C stops)
Instructors
  grade [--impl DIR] [--prior own|solutions] [--format text|json|gradescope|junit]
        [--out FILE] [--force] [LAB...]
                              grade a submission (a copy of labs/, or a tree holding one)
  grade --batch DIR --out DIR [-j N] [--prior ...] [LAB...]
                              grade every subfolder of DIR: grades.csv plus one report each
  handout OUT [--release LAB...]
                              the student distribution (no solutions/, quiz answers, mutants)
Maintainers
  selftest [--quick]          prove the workbook: solutions pass, starters fail, mutants caught,
                              starters generated, valgrind clean, docs build (CI runs this)
  gen-starters [--check] [--force] [LAB...]
                              derive labs/NN/* from solutions/NN/* (BEGIN/END SOLUTION, STARTER:)
Readers
  docs [--instructor] [--out DIR]
                              the generated docs (student edition, or with solutions and answers)
  bench [--quick] [--out DIR] the reference RCU against liburcu and pthread_rwlock

LAB is a lab's folder name (01-synchronize-rcu), its number (1) or label (lab1).
Environment: WORKBOOK_SEED=N replays one seed; WORKBOOK_SEEDS=N sets how many run.
"""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Fail(f"{message} (see ./workbook --help)")

    def print_help(self, file=None):
        sys.stdout.write(HELP)


def main(argv):
    p = Parser(prog="workbook", add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    sub = p.add_subparsers(dest="cmd", parser_class=Parser)
    sub.add_parser("setup")
    s = sub.add_parser("status")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("check")
    s.add_argument("lab")
    s.add_argument("--test")
    s.add_argument("--list", action="store_true")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s = sub.add_parser("hint")
    s.add_argument("lab")
    s.add_argument("n", nargs="?", type=int)
    s = sub.add_parser("watch")
    s.add_argument("lab")
    s.add_argument("--test")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    s = sub.add_parser("selftest")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--keep-going", action="store_true")
    s = sub.add_parser("grade")
    s.add_argument("--impl")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s.add_argument("--format", choices=["text", "json", "gradescope", "junit"], default="text")
    s.add_argument("--out")
    s.add_argument("--force", action="store_true")
    s.add_argument("--batch")
    s.add_argument("-j", "--jobs", type=int, default=1)
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("handout")
    s.add_argument("out")
    s.add_argument("--release", nargs="+", metavar="LAB")
    s = sub.add_parser("bench")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--out")
    s = sub.add_parser("docs")
    s.add_argument("--instructor", action="store_true")
    s.add_argument("--out")
    s = sub.add_parser("gen-starters")
    s.add_argument("--check", action="store_true")
    s.add_argument("--force", action="store_true")
    s.add_argument("labs", nargs="*")
    try:
        if not argv:
            sys.stdout.write(HELP)
            return 0
        if argv[0] in ("-h", "--help", "help"):
            sys.stdout.write(HELP)
            return 0
        if not argv[0].startswith("-") and argv[0] not in sub.choices:
            raise Fail(f"unknown command '{argv[0]}' (see ./workbook --help)")
        a = p.parse_args(argv)
        if a.help or not a.cmd:
            sys.stdout.write(HELP)
            return 0
        fn = {"setup": cmd_setup, "status": cmd_status, "check": cmd_check, "hint": cmd_hint,
              "watch": cmd_watch, "selftest": cmd_selftest, "grade": cmd_grade,
              "handout": cmd_handout, "gen-starters": cmd_gen_starters,
              "bench": cmd_bench, "docs": cmd_docs}[a.cmd]
        return fn(a)
    except Fail as e:
        warn(str(e))
        return e.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
