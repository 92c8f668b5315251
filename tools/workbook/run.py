"""Running Criterion binaries and reading their reports."""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

from .common import ROOT


OUTPUT_CAP = 64 << 20        # bytes a graded run may write (RLIMIT_FSIZE)


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


def junit_cases(log_paths):
    """{suite/name: <testcase>} from Criterion's own XML reports (--xml) of the
    runs whose logs are LOG_PATHS; a later run's verdict wins, and a test a
    run filtered out (SKIPPED there) is taken from the run that ran it."""
    out = {}
    for log in log_paths:
        try:
            root = ET.parse(log[:-4] + ".xml").getroot()
        except (OSError, ET.ParseError):
            continue
        for s in root.iter("testsuite"):
            for t in s.iter("testcase"):
                if t.get("status") == "SKIPPED":
                    continue
                for e in t.iter():
                    if e.text:
                        e.text = e.text.replace(ROOT + "/", "")
                out[f"{s.get('name')}/{t.get('name')}"] = t
    return out


def list_tests(exe):
    """Test names (suite/name) the binary holds, from --list: Criterion's tree
    ("suite: N tests" then "├── name") or the tsan shim's "suite/name" lines."""
    r = subprocess.run([exe, "--list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True, stdin=subprocess.DEVNULL, timeout=60,
                       env=clean_env({"ASAN_OPTIONS": "detect_leaks=0"}))
    names, suite = [], None
    for ln in r.stdout.splitlines():
        m = re.match(r"^(\S+): \d+ tests?$", ln)
        if m:
            suite = m.group(1)
            continue
        m = re.match(r"^[├└│]── (\S+)", ln)
        if m and suite:
            names.append(f"{suite}/{m.group(1)}")
        elif re.fullmatch(r"[A-Za-z_]\w*/[A-Za-z_]\w*", ln.strip()):
            names.append(ln.strip())
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


def score_lab(lab, results):
    pts, passed = 0, 0
    for t in lab.tests:
        if results.get(t["name"], (False,))[0]:
            pts += int(t.get("points", 0))
            passed += 1
    return pts, passed
