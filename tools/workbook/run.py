"""Running Criterion binaries and reading their reports."""
import glob
import json
import os
import re
import resource
import secrets
import select
import signal
import stat
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

from .common import Fail, ROOT


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


def run_binary(exe, args, cwd, env, wall, log_path, echo=False, sandbox=None, cpu=None,
               usage=None):
    """Run a test binary in its own process group with a wall-clock limit
    (inside SANDBOX, a sandbox.Sandbox, when given: every process it started
    is gone when this returns) and, with CPU, a limit on the CPU time its
    processes use (tree_cpu(), sampled every POLL seconds, so a run may
    overshoot it by that much). USAGE, a dict when given, receives "cpu" (the
    CPU seconds the run used) and "stopped" ("cpu", "wall" or None).
    Returns (returncode or None when a limit stopped it, seconds)."""
    t0 = time.time()
    how = {"args": [exe] + args, "preexec_fn": _limits, "env": env}
    if sandbox:
        how = sandbox.wrap(how["args"], cwd, env, rw=[cwd], ro=sandbox_reads(exe))
    uid = sandbox.uid if sandbox and sandbox.switch else None
    with open(log_path, "w") as log:
        if echo:
            p = subprocess.Popen(cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, **how)
            reader = threading.Thread(target=_tee, args=(p.stdout, log), daemon=True)
            reader.start()
        else:
            p = subprocess.Popen(cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, **how)
        rc, stopped, used = _wait_limited(p, wall, cpu, uid)
        try:
            os.killpg(p.pid, signal.SIGKILL)   # workers die with the runner; be sure
        except ProcessLookupError:
            pass
        if rc is None:
            p.wait()
        if sandbox:
            sandbox.reap()
        if echo:
            reader.join(5)
    if usage is not None:
        usage.update(cpu=used, stopped=stopped)
    return rc, time.time() - t0


def _wait_limited(p, wall, cpu, uid):
    """Wait for the process P within WALL seconds and CPU seconds of CPU time
    (None: no CPU limit): (returncode or None, what stopped it or None, CPU
    seconds used: the last sample, or wait4()'s count when larger, which
    covers only the children P itself reaped: bubblewrap never reaps its
    namespace's first process, so under it the sample is all there is)."""
    deadline = time.time() + wall
    used = 0.0
    try:
        pidfd = os.pidfd_open(p.pid)
    except (OSError, AttributeError):
        pidfd = None
    try:
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                return p.returncode, None, max(used, ru.ru_utime + ru.ru_stime)
            if cpu is not None:
                used = max(used, tree_cpu(p.pid, uid))
                if used > cpu:
                    return None, "cpu", used
            left = deadline - time.time()
            if left <= 0:
                return None, "wall", used
            if pidfd is None:
                time.sleep(min(POLL, left))
            else:
                select.select([pidfd], [], [], min(POLL, left))
    finally:
        if pidfd is not None:
            os.close(pidfd)


CLK_TCK = os.sysconf("SC_CLK_TCK")
POLL = 0.25                  # seconds between two looks at a run's CPU time


def _cpu_table():
    """{pid: (ppid, uid, CPU seconds, state)} of every process: its threads'
    user and system time plus what the children it reaped used, and its
    state letter (/proc/PID/stat)."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                st = f.read()
            uid = os.stat(f"/proc/{p}").st_uid
        except OSError:
            continue
        f = st[st.rindex(b")") + 2:].split()     # from field 3 (state) on
        out[int(p)] = (int(f[1]), uid, sum(int(x) for x in f[11:15]) / CLK_TCK, f[0])
    return out


def tree_cpu(root, uid=None):
    """CPU seconds (user + system) used so far by process ROOT and every
    process descended from it, and, when UID is given, by every process of
    that user that is still alive (which catches a process that left the
    tree by a double fork).
    Each process counts its own time and that of the children it reaped, so
    nothing is counted twice. Does not promise: the time of an orphan whose
    new parent is not counted, once it is gone."""
    procs = _cpu_table()
    kids = {}
    for pid, (ppid, _, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    seen, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p in procs and p not in seen:
            seen.add(p)
            todo += kids.get(p, [])
    if uid is not None:
        # not a dead one an earlier run left for init to reap: its time is spent
        seen |= {p for p, (_, u, _, st) in procs.items() if u == uid and st not in b"ZX"}
    return sum(procs[p][2] for p in seen)


def sandbox_reads(exe):
    """What a test binary reads at run time besides the workbook: itself and
    the modules built beside it (never the rest of its build folder, which
    holds the build's intermediate files)."""
    d = os.path.dirname(os.path.abspath(exe))
    lab = os.path.basename(exe)[:-len("_tests")] if exe.endswith("_tests") else ""
    out = [os.path.abspath(exe)]
    if lab and os.path.isdir(os.path.join(d, "modules", lab)):
        out.append(os.path.join(d, "modules", lab))
    return out


def _tee(pipe, log):
    for line in iter(pipe.readline, b""):
        s = line.decode("utf-8", "replace")
        log.write(s)
        if not s.startswith("[PASS]"):
            sys.stdout.write(s)
            sys.stdout.flush()


def read_untrusted(path, cap=16 << 20):
    """The bytes of PATH, a file a test run could have written or replaced:
    a regular file only (no link, no FIFO to block on), at most CAP bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        chunks, n = [], 0
        while n < cap:
            b = os.read(fd, min(1 << 20, cap - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_report(json_path):
    """{"suite/name": (passed, [messages])} from Criterion's JSON report, or None."""
    try:
        raw = read_untrusted(json_path).decode("utf-8", "replace")
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
        root = ET.fromstring(read_untrusted(xml_path))
        out = {}
        for s in root.iter("testsuite"):
            for t in s.iter("testcase"):
                msgs = [(e.get("message") or e.text or "").strip() for e in t]
                out[f"{s.get('name')}/{t.get('name')}"] = (t.get("status") == "PASSED", msgs)
        return out
    except (OSError, ET.ParseError, ValueError):
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


# ------------------------------------------------- the completion proof
# A test passes only if Criterion reports it PASSED *and* the harness
# (common/src/test.c) wrote its proof record: "<suite/name> <nonce> <kind>"
# into a file named here, with a nonce drawn here for each run. An exit
# status, however it is produced (exit, _exit, a raw exit_group, a fork that
# exits), never writes one.

SIGNAL_END = {"BUG_SIGNAL": "bug", "SIGTRAP": "bug", "SIGSEGV": "fault", "SIGBUS": "fault",
              "SIGABRT": "abort"}
_ENDS = {}


def expected_ends(exe):
    """{suite/name: kind of proof its pass needs} for the test binary EXE,
    read from the workbook's own test sources (never from a submission):
    "end", or for a test declared with .signal = X the kernel's "bug", a real
    "fault", or "abort"."""
    base = os.path.basename(exe)
    if base == "common_tests":
        srcs = os.path.join(ROOT, "common", "tests", "*.c")
    else:
        srcs = None
        for d in glob.glob(os.path.join(ROOT, "labs", "*", "lab.json")):
            try:
                with open(d) as f:
                    if f"{json.load(f).get('label')}_tests" == base:
                        srcs = os.path.join(os.path.dirname(d), "tests", "*.c")
            except (OSError, ValueError):
                pass
    if srcs in _ENDS:
        return _ENDS[srcs]
    ends = {}
    for path in sorted(glob.glob(srcs)) if srcs else []:
        with open(path, errors="replace") as f:
            for suite, name, sig in test_declarations(f.read()):
                ends[f"{suite}/{name}"] = SIGNAL_END.get(sig, "signal " + sig) if sig else "end"
    _ENDS[srcs] = ends
    return ends


_SIM_TEST = re.compile(r"\bSIM_TEST\(\s*(\w+)\s*,\s*(\w+)\s*((?:,[^{]*?)?)\)\s*\{", re.S)
# A one-line-per-test table: #define ROW(params) \ SIM_TEST(suite, name, ...)
_ROW_MACRO = re.compile(r"^#define\s+(\w+)\(([^)]*)\)\s*\\\s*\n\s*SIM_TEST\(([^)]*)\)", re.M)


def _signal_of(args):
    sig = re.search(r"\.signal\s*=\s*(\w+)", args)
    return sig.group(1) if sig else None


def _split_args(text, start):
    """The top-level, comma-separated arguments of the call whose "(" is at
    TEXT[start] (strings and nested parentheses kept whole)."""
    args, depth, cur, i, quote = [], 0, "", start + 1, None
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == "\\":
                cur += text[i + 1]
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote, cur = c, cur + c
        elif c == "(":
            depth, cur = depth + 1, cur + c
        elif c == ")" and depth == 0:
            return args + [cur.strip()]
        elif c == ")":
            depth, cur = depth - 1, cur + c
        elif c == "," and depth == 0:
            args, cur = args + [cur.strip()], ""
        else:
            cur += c
        i += 1
    return args


def test_declarations(text):
    """(suite, name, signal or None) of each test the C source TEXT declares:
    each SIM_TEST(suite, name, ...) { and each row of a table macro
    (#define ROW(...) followed by SIM_TEST(p1, p2, .signal = p3, ...) on its
    next line), whose arguments are read by the macro's parameter names."""
    decls = [(m.group(1), m.group(2), _signal_of(m.group(3))) for m in _SIM_TEST.finditer(text)]
    for m in _ROW_MACRO.finditer(text):
        params = [p.strip() for p in m.group(2).split(",")]
        inner = [a.strip() for a in m.group(3).split(",")]
        sig = _signal_of(m.group(3))
        for row in re.finditer(r"^%s\(" % re.escape(m.group(1)), text, re.M):
            args = dict(zip(params, _split_args(text, row.end() - 1)))
            decls.append((args.get(inner[0], inner[0]), args.get(inner[1], inner[1]),
                          args.get(sig, sig) if sig else None))
    return decls


def new_proof(base):
    """A fresh proof file BASE.proof and nonce for one run; the environment
    entry that tells the harness."""
    path = base + ".proof"
    if os.path.lexists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o622)
    os.fchmod(fd, 0o622)              # the sandbox user appends; only we read
    os.close(fd)
    nonce = secrets.token_hex(16)
    return path, nonce, {"WORKBOOK_PROOF": f"{nonce} {path}"}


def read_proofs(path, nonce):
    """{suite/name: {kinds}} of the records in PATH that carry NONCE. Read
    only after every process of the run is gone."""
    out = {}
    try:
        data = read_untrusted(path, 1 << 20).decode("utf-8", "replace")
    except OSError:
        return out
    for ln in data.splitlines():
        parts = ln.split(" ")
        if len(parts) == 3 and parts[1] == nonce:
            out.setdefault(parts[0], set()).add(parts[2])
    return out


def require_proof(name, verdict, proofs, ends):
    """VERDICT (passed, messages) for NAME, a pass kept only with its proof."""
    passed, msgs = verdict
    need = ends.get(name, "end")
    if not passed or need in proofs.get(name, ()):
        return verdict
    if need == "end":
        why = ("ended before its last assertion (exit status 0 without reaching the end: "
               "an exit(), _exit() or exit_group in the tested code, or in a process it forked)")
    elif need == "bug":
        why = "ended by the BUG signal, but not from the simulated kernel's BUG path"
    elif need == "fault":
        why = ("ended by SIGSEGV, but not by a fault inside an unloaded module (a NULL or "
               "wild pointer, or a raise()/kill(), is not the crash this test expects)")
    else:
        why = f"ended by {need}, which the grader cannot prove came from the kernel"
    return False, [why]


CRITERION_CRASH = "The test crashed."
CRITERION_TIMEOUT = "The test timed out."


def test_log(logdir, test):
    """The file the harness writes TEST's own output to (common/src/test.c)."""
    return os.path.join(logdir, test.replace("/", "-", 1) + ".log")


def run_tests(exe, names, workdir, timeouts=None, jobs=2, echo=False, extra_env=None,
              filter_names=True, trace_dir=None):
    """Run NAMES (suite/name) of EXE; {name: (passed, messages)} for each.
    Tests are grouped by timeout (Criterion's --timeout lowers each test's
    own); a group that outlives its wall-clock limit is rerun one test at a
    time so that one hang costs only that test. A pass needs its proof.
    Each test writes its output to its own log (WORKBOOK_TEST_LOG_DIR); a
    failing test's messages end with the cause read from it (failure_cause())."""
    os.makedirs(workdir, exist_ok=True)
    logdir = os.path.join(workdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    for n in names:
        try:
            os.unlink(test_log(logdir, n))
        except OSError:
            pass
    timeouts = timeouts or {}
    env = clean_env(dict(extra_env or {},
                         WORKBOOK_TRACE_DIR=trace_dir or os.path.join(workdir, "traces"),
                         WORKBOOK_TEST_LOG_DIR=logdir))
    ends = expected_ends(exe)
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
        proof, nonce, penv = new_proof(base)
        rc, secs = run_binary(exe, args, workdir, dict(env, **penv), wall, base + ".log", echo)
        logs.append(base + ".log")
        rep = parse_report(base + ".json")
        if rep is not None:
            proofs = read_proofs(proof, nonce)
            rep = {n: require_proof(n, v, proofs, ends) for n, v in rep.items()}
        return rc, rep

    for tmo, group in sorted(groups.items()):
        wall = tmo * ((len(group) + jobs - 1) // jobs) + 30
        rc, rep = one_run(group, tmo, wall)
        if rc is None or rep is None:
            for n in group:              # one at a time
                rc1, rep1 = one_run([n], tmo, tmo + 30)
                if rep1 and n in rep1:
                    results[n] = rep1[n]
                else:
                    why = CRITERION_TIMEOUT if rc1 is None else \
                        "the test runner wrote no report (it crashed)"
                    results[n] = (False, [why])
            continue
        for n in group:
            results[n] = rep.get(n, (False, ["not run: no such test in the binary"]))
    # the runs of a lab are in .../runs/labN: the fallback replay command
    label = os.path.basename(os.path.normpath(workdir))
    for n, (ok, msgs) in results.items():
        if not ok:
            again = f"./workbook check {label} --test {n}" if re.fullmatch(r"lab\d+", label) \
                else None
            results[n] = (False, with_cause(msgs, read_log(logdir, n),
                                            float(timeouts.get(n, 60)), again,
                                            own_prefix(workdir)))
    return results, logs


def _no_silent_failure(r):
    if not r[0] and not r[1]:
        return (False, ["failed without an assertion message: it died of an unexpected "
                        "signal, a BUG other than the expected one, or left early "
                        "(exit()); ./workbook check shows its output"])
    return r


def is_stress_name(name):
    """The parallel stress tier: tests named SUITE/parallel* (real threads,
    slow, not replayable, and a hang there is found only near its time-out)."""
    return name.split("/", 1)[1].startswith("parallel")


# Tests per run of Criterion's runner in a graded tier, per job. Its report
# comes only at its end, and a test scores only with that report: when the
# lab's budget stops a run, the tests of that run alone lose their points.
CHUNK_PER_JOB = 4


def run_graded(exe, names, workdir, timeouts, jobs, budget, sandbox=None):
    """Grade NAMES of EXE inside SANDBOX within the lab's budget: BUDGET
    seconds of CPU time on each of JOBS CPUs (user + system time of every
    process of the runs), and three times BUDGET on the wall clock (a busy
    machine slows a lab; tests waiting on nothing use no CPU). The
    deterministic tests first, then the parallel stress tier, each in runs
    of a few tests: the runner writes its report only at its end, and a test
    scores only with that report. Returns ({name: (passed, messages)}, the
    Budget, which says what the runs used)."""
    budget = Budget(float(budget), jobs)
    results = {}
    tiers = [[n for n in names if not is_stress_name(n)], [n for n in names if is_stress_name(n)]]
    size = CHUNK_PER_JOB * jobs
    runs = [t[i:i + size] for t in tiers for i in range(0, len(t), size)]
    for i, chunk in enumerate(runs):
        if budget.spent():
            for n in chunk:
                results[n] = (False, [f"not run: {budget.describe()} before it started"])
            continue
        results.update(_run_graded_chunk(exe, chunk, workdir, "graded" + (f"{i}" if i else ""),
                                         timeouts, jobs, budget, sandbox))
    return results, budget


class Budget:
    """What is left of a lab's budget (run_graded())."""

    def __init__(self, seconds, jobs):
        self.seconds, self.jobs = seconds, jobs
        self.cpu, self.wall = seconds * jobs, seconds * 3
        self.cpu_used = self.wall_used = 0.0
        self.stopped = None

    def spent(self):
        return self.cpu - self.cpu_used < 0.5 or self.wall - self.wall_used < 1

    def charge(self, usage, secs):
        self.cpu_used += usage.get("cpu", 0.0)
        self.wall_used += secs
        self.stopped = usage.get("stopped") or self.stopped

    def usage(self):
        """What the lab's runs used, for the report."""
        return {"seconds": round(self.wall_used, 1), "cpu_seconds": round(self.cpu_used, 1),
                "cpu_budget": self.cpu, "wall_limit": self.wall}

    def describe(self, why=None):
        """What ran out, as a clause: "the lab's CPU budget (...) was spent"."""
        if (why or self.stopped) == "wall":
            return (f"the lab's wall-clock limit ({self.wall:.0f} s; its tests waited without "
                    f"using the CPU, or the machine was busy) was reached")
        return (f"the lab's CPU budget ({self.cpu:.0f} CPU-s: {self.seconds:.0f} s on each of "
                f"{self.jobs} CPUs) was spent")


def _run_graded_chunk(exe, names, workdir, stem, timeouts, jobs, budget, sandbox):
    """One run of NAMES within what is left of BUDGET. A test scores only
    with the runner's report (a proof alone is what code inside the test
    process could forge); when the budget stops the run, its tests fail with
    the cause from their own logs ("not finished when ...", "not run: ...")."""
    os.makedirs(workdir, exist_ok=True)
    base = os.path.join(workdir, stem)
    for ext in (".json", ".xml", ".log"):
        if os.path.lexists(base + ext):
            os.unlink(base + ext)
    wall = budget.wall - budget.wall_used
    # Tests keep their own timeouts (a loaded machine slows the parallel
    # torture tests many times over); the lab's budget bounds the whole run.
    tmo = min(wall, max(float(timeouts.get(n, 60)) for n in names))
    logdir = os.path.join(workdir, "logs")    # the caller gave it to the sandbox user
    os.makedirs(logdir, exist_ok=True)
    env = clean_env({"WORKBOOK_TRACE_DIR": os.path.join(workdir, "traces"),
                     "WORKBOOK_TEST_LOG_DIR": logdir})
    proof, nonce, penv = new_proof(base)
    if sandbox and sandbox.switch:
        # Writable by this run's own account alone (each grading slot has
        # one): not by another slot's submission, even in the user sandbox.
        os.chown(proof, sandbox.uid, sandbox.gid)
        os.chmod(proof, 0o200)
    args = ["--color=never", "--verbose", f"-j{jobs}", f"--json={base}.json",
            f"--timeout={tmo:.1f}", f"--filter={extglob(names)}"]
    usage = {}
    rc, secs = run_binary(exe, args, workdir, dict(env, **penv), wall, base + ".log",
                          sandbox=sandbox, cpu=budget.cpu - budget.cpu_used, usage=usage)
    budget.charge(usage, secs)
    # Every process of the run is gone: only now read what it left.
    proofs = read_proofs(proof, nonce)
    ends = expected_ends(exe)
    rep = parse_report(base + ".json") if rc is not None else None
    results = {}
    for n in names:
        if rep is not None:
            v = rep.get(n, (False, ["not run: no such test in the binary"]))
            results[n] = require_proof(n, v, proofs, ends)
        elif rc is None and ends.get(n, "end") in proofs.get(n, ()):
            results[n] = (False, [f"finished, but {budget.describe(usage['stopped'])} before "
                                  f"Criterion's runner reported its run: a test scores only "
                                  f"with the runner's report (regrade with a larger "
                                  f"--lab-budget)"])
        elif rc is None and os.path.exists(test_log(logdir, n)):
            # It started (the harness opened its log), and its log may say how
            # far: its BUG or the harness's hang report (written before the
            # test's time-out), with the seed; cause_lines() shows it as it
            # shows a crash's.
            ran = failure_cause(read_log(logdir, n)).get("bug")
            results[n] = (False, [f"not finished when {budget.describe(usage['stopped'])}"] +
                          ([CRITERION_CRASH] if ran else []))
        elif rc is None:
            results[n] = (False, [f"not run: {budget.describe(usage['stopped'])} before it "
                                  f"started"])
        else:
            results[n] = (False, ["the test runner wrote no report (it crashed or was "
                                  "killed)"])
    # The cause of each failure, from the test's own log: messages only (a
    # submission could write there; no verdict ever comes from it).
    for n, (ok, msgs) in results.items():
        if not ok:
            results[n] = _no_silent_failure((False, with_cause(
                msgs, read_log(logdir, n), float(timeouts.get(n, 60)), None,
                own_prefix(workdir))))
    return results


def read_log(logdir, test):
    try:
        return read_untrusted(test_log(logdir, test), 1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def _rel(text):
    """Paths as the student types them: relative to the workbook's root."""
    text = text.replace(ROOT + "/", "")
    text = re.sub(r"\bbuild-wb-grade[\w-]*/impl/", "labs/", text)   # grade's copy
    return re.sub(r"(?:\.\./)+(labs|solutions|common)/", r"\1/", text)


RACE_ACCESS = re.compile(r"(read|write)( \(marked\))? to \S+ of (\d+) bytes by task (\S+) "
                         r"\(pid \d+\) on cpu (-?\d+):$")


def race_accesses(lines, start):
    """The two accesses of the KCSAN report whose headline is line START (the
    report is framed by lines of "="), each as one line: kind, task, CPU,
    file:line and function."""
    out = []
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("=====")),
               len(lines))
    for i in range(start, end):
        m = RACE_ACCESS.match(lines[i].strip())
        if not m:
            continue
        fn, where, note = "", "", ""
        for nx in lines[i + 1:end]:
            t = nx.strip()
            if not t:
                break
            if re.search(r"\S:\d+$", t):
                where = t
            elif t.startswith("("):
                note = t.strip("()")
            else:
                fn = t
        out.append(f"{m.group(1)}{m.group(2) or ''} of {m.group(3)} bytes by {m.group(4)} "
                   f"on CPU {m.group(5)} at {where or '?'}" + (f" in {fn}()" if fn else "") +
                   (f": {note}" if note else ""))
    return out[:2]


def failure_cause(log, timeout=None):
    """The cause of a failure, from the test's own log LOG (its stderr and
    stdout, as common/src/bug.c, trace.c and test.c write them): a dict with
    the first BUG:/WARNING: headline ("bug"), its "at" file:line (and a
    crash's "callers" in the lab's code), the "task"
    it hit, the test's own "likely" cause of it (sim_likely_cause()), the tasks that were "stuck" (blocked, or the one running at a
    livelock), and the "replay" and "timeline" lines. Keys absent when the log
    holds no such line."""
    lines = [_rel(ln.rstrip()) for ln in log.splitlines()]
    c = {}
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("BUG: KCSAN: ") and i and lines[i - 1].startswith("====="):
            c.setdefault("accesses", race_accesses(lines, i))  # the BUG line follows
        elif "bug" not in c and (s.startswith("BUG: ") or s.startswith("WARNING: ")):
            c["bug"] = s
            more = []
            for nx in lines[i + 1:i + 8]:
                t = nx.strip()
                m = re.match(r"(at|called from) (\S+:\d+)( in \S+\(\))?$", t)
                if m and m.group(1) == "at" and "at" not in c:
                    c["at"] = m.group(2) + (m.group(3) or "")
                elif m and m.group(1) == "called from":
                    c.setdefault("callers", []).append(m.group(2) + (m.group(3) or ""))
                elif t.startswith("task: ") and "task" not in c:
                    c["task"] = t[len("task: "):]
                elif t.startswith("likely cause: ") and "likely" not in c:
                    c["likely"] = t[len("likely cause: "):]
                elif t.startswith("last scheduling point: ") and "at" not in c:
                    c["at"] = t.split(": ", 1)[1]
                elif t.startswith(("tasks:", "seed:", "replay:", "timeline:", "rerun:")) or \
                        t.startswith("BUG: "):
                    break
                elif t and not more and "at" not in c:
                    more.append(t)    # a BUG's second line (lockdep's details)
            if more:
                c["detail"] = more[0]
        elif s == "tasks:" and "stuck" not in c:
            stuck = []
            for nx in lines[i + 1:]:
                if not nx.startswith("  ") or nx.strip().endswith(":"):
                    break
                t = " ".join(nx.split())
                if " blocked " in f" {t} " or (" running " in f" {t} " and "livelock" in
                                                c.get("bug", "")):
                    stuck.append(t)
            c["stuck"] = stuck
        elif s.startswith("this test expected ") and "unexpected" not in c:
            c["unexpected"] = s       # bug.c: why this BUG is not the one expected
        elif s.startswith("assertion failed at ") and "assert" not in c:
            c["assert"] = s[len("assertion failed at "):]
        elif s.startswith("replay: ") and "replay" not in c:
            c["replay"] = s[len("replay: "):]
        elif s.startswith("rerun: ") and "replay" not in c:
            c["replay"] = s[len("rerun: "):]
        elif s.startswith("timeline: ") and "timeline" not in c:
            c["timeline"] = s[len("timeline: "):]
        elif re.match(r"(test \S+ )?timed out", s) and "bug" not in c:
            c["bug"] = s
    return c


STUCK_SHOWN = 4


def stuck_first(stuck):
    """The stuck tasks, those last seen in a student's own code first (not
    in a test's or the kernel's): the one that matters is rarely the test's
    own waiter, and a list cut short must not hide it."""
    def rank(t):
        m = re.search(r"\(last at (\S+):\d+\)", t)
        return 0 if m and m.group(1).startswith("labs/") and "/tests/" not in m.group(1) else 1
    return sorted(stuck, key=rank)


# The words before a lab site where the kernel's check found a BUG (student.py
# blames no TODO for it).
FOUND_IN_KERNEL = "found by the kernel in a call from"


def own_prefix(workdir):
    """'labs/NN-name/' of the lab whose runs WORKDIR holds (.../runs/labN),
    or None."""
    from .manifest import find_lab
    label = os.path.basename(os.path.normpath(workdir))
    if not re.fullmatch(r"lab\d+", label):
        return None
    try:
        return f"labs/{find_lab(label).name}/"
    except Fail:
        return None


def cause_lines(c, msgs, timeout=None, replay_cmd=None, own=None):
    """The student-visible lines of a failure: the assertion messages MSGS
    (Criterion's), or instead of "The test crashed."/"timed out." the BUG
    with where and who; then the stuck tasks, the replay and timeline lines."""
    out = []
    crashed = any(m in (CRITERION_CRASH, CRITERION_TIMEOUT) for m in msgs)
    timed_out = CRITERION_TIMEOUT in msgs
    for m in msgs:
        if re.fullmatch(r"\d+ assertion\(s\) failed\.", m) and c.get("assert"):
            out.append(c["assert"])        # Criterion's count; the harness saw which
        elif m not in (CRITERION_CRASH, CRITERION_TIMEOUT):
            out.append(_rel(m))
    if c.get("bug") and (crashed or not out):
        # a file:line inside the simulated kernel tells a student nothing: the
        # lab's own frame that called it does
        # A BUG the kernel's own check raised says where it was found, not
        # where the mistake is (a list corrupted in one TODO, walked in
        # another's): "found ... called from", which next: does not blame.
        sites = [a for a in [c.get("at")] + c.get("callers", [])
                 if a and not a.startswith("common/src/")]
        where = f" at {sites[0]}" if sites else ""
        if sites and sites[0] != c.get("at") and not c["bug"].startswith("BUG: crashed"):
            # shown under this lab's own code only: lab 3's BUG found in lab
            # 2's kthread says nothing about lab 3
            where = f" - {FOUND_IN_KERNEL} {sites[0]}" if not own or \
                sites[0].startswith(own) else ""
        who = f" (task {c['task']})" if c.get("task") else ""
        out.append(f"{c['bug']}{where}{who}")
        if c.get("accesses"):
            out.extend(f"  {a}" for a in c["accesses"])
        elif c.get("detail"):
            out.append(f"  {c['detail']}")
        if c.get("unexpected"):
            out.append(f"  {c['unexpected']}")
        if c.get("likely"):
            out.append(f"  likely cause: {c['likely']}")
    elif timed_out:
        out.append(f"timed out after {timeout:g} s" if timeout else "timed out")
    elif crashed or not out:
        out.append("crashed without a BUG report (a signal, an abort() or exit()); "
                   "replay it to see its output")
    if timed_out and c.get("bug") and "timed out" not in c["bug"]:
        out.append(f"  (timed out after {timeout:g} s)" if timeout else "  (timed out)")
    hang = timed_out or re.search(r"deadlock|livelock|hung|timed out|stall", c.get("bug", ""))
    stuck = stuck_first(c.get("stuck") or []) if hang else []
    for t in stuck[:STUCK_SHOWN]:
        out.append(f"  stuck: {t}")
    if len(stuck) > STUCK_SHOWN:
        out.append(f"  ... and {len(stuck) - STUCK_SHOWN} more stuck (./workbook check "
                   f"--verbose shows every task)")
    if c.get("replay"):
        out.append(f"replay: {c['replay']}")
    elif replay_cmd:
        out.append(f"replay: {replay_cmd}")
    if c.get("timeline"):
        out.append(f"timeline: {timeline_shown(c['timeline'])}")
    return out


def timeline_shown(path):
    """Where the student finds the picture at PATH. check draws it in the
    workbook's traces/; a graded run draws it in the grader's slot, out of
    the student's reach, and the replay line draws the same file in traces/."""
    p = os.path.abspath(path)
    if os.path.dirname(p) == os.path.join(ROOT, "traces"):
        return _rel(p)
    return f"traces/{os.path.basename(p)}, drawn by the replay (the grader keeps none)"


def with_cause(msgs, log, timeout=None, replay_cmd=None, own=None):
    return cause_lines(failure_cause(log, timeout), msgs, timeout, replay_cmd, own)


def exe_path(bdir, lab):
    return os.path.join(bdir, lab.target)


def score_lab(lab, results):
    pts, passed = 0, 0
    for t in lab.tests:
        if results.get(t["name"], (False,))[0]:
            pts += int(t.get("points", 0))
            passed += 1
    return pts, passed
