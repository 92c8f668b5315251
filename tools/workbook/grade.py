"""Grading: staging a submission, grading it, grading a batch.

Rule kept here: the grader (this process) is trusted, the submission is not.
Only the files the manifests list are taken from a submission; what the
compiler makes of them must be C that uses the lab's API and nothing else
(objcheck.py, before and after the build); its build and its test runs
happen in a sandbox (sandbox.py); a test passes only with the
proof that it reached its end (run.py); results are computed and written only
after every process of the submission is gone, from what the grader itself
holds (the proof, the report Criterion's runner wrote), never from a file the
submission could have written to in the grader's place. A real-kernel run
(--real) is built and booted in the same sandbox and only reported: what it
says comes from a kernel the submission's code runs in.
"""
import concurrent.futures
import csv
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time

from . import objcheck, real
from .build import check_deps, configure, first_error
from .common import Fail, JOBS, LABS, ROOT, SOLUTIONS, say
from .manifest import all_labs, select_labs
from .reports import check_out_file, lab_result, render, report_gradescope, report_text, write_out
from .run import clean_env, exe_path, run_graded
from .sandbox import Sandbox

LAB_BUDGET = 120      # CPU-seconds per job (and 3x on the wall clock) a lab's tests may use
BUILD_WALL = 300      # seconds a lab's build may take


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
    """A reusable build folder for grading (one per parallel job), and the
    sandbox its submissions run in."""

    def __init__(self, key, prior, sandbox=None):
        self.dir = os.path.join(ROOT, f"build-wb-grade-{prior}-{key}")
        self.stage = os.path.join(self.dir, "impl")
        self.prior_dir = os.path.join(self.dir, "prior")
        self.prior = prior
        self.configured = False
        self.sandbox = sandbox

    def claim(self):
        """Hold this slot's folder for this process (released when it ends):
        a second grade command in the same folder would scrub and rebuild
        the first one's submission under it."""
        os.makedirs(self.dir, exist_ok=True)
        self._lock = open(os.path.join(self.dir, ".workbook-slot.lock"), "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Fail(f"{os.path.relpath(self.dir, ROOT)} is in use by another grade command: "
                       "give this one another --slot", 1)
        if self.sandbox:
            self.sandbox.seal(self.dir)
        return self

    def scrub(self):
        """Nothing of the previous submission stays: its staged files, the
        objects and binaries built from them, its runs."""
        for p in (self.stage, os.path.join(self.dir, "runs"), os.path.join(self.dir, "modules")):
            if os.path.isdir(p):
                shutil.rmtree(p)
        if not os.path.isdir(self.dir):
            return
        for e in os.listdir(self.dir):
            if e.endswith("_tests") and os.path.isfile(os.path.join(self.dir, e)):
                os.unlink(os.path.join(self.dir, e))
        cm = os.path.join(self.dir, "CMakeFiles")
        if os.path.isdir(cm):
            for t in os.listdir(cm):
                p = os.path.join(cm, t, "impl")
                if t.endswith(".dir") and os.path.isdir(p):
                    shutil.rmtree(p)


def stage_prior(slot, labs, prior):
    """With PRIOR "solutions", the reference's files of the earlier labs that
    LABS build on (what WORKBOOK_PRIOR=solutions links) copied into the slot
    by the grader, so that no sandboxed step needs solutions/. Only those:
    grading lab 3 alone puts labs 1 and 2 there, never lab 3's own
    reference; grading labs 1 and 2 together puts lab 1's there, which only
    lab 2's steps may read (prior_hidden()). With "own", none. The graded
    labs' hidden tests (solutions/NN/tests/*.c, test code, not reference
    code) go there in either case: CMake builds them in from
    WORKBOOK_SOLUTIONS."""
    if os.path.isdir(slot.prior_dir):
        shutil.rmtree(slot.prior_dir)
    # What a lab builds from an earlier lab: the labs it uses and the labs
    # whose modules it loads (lab 4 builds lab 3's module/mymod.c).
    used = {u for lab in labs for u in lab.builds_on()} if prior == "solutions" else set()
    for lab in labs:
        hidden = os.path.join(SOLUTIONS, lab.name, "tests")
        if os.path.isdir(hidden):
            shutil.copytree(hidden, os.path.join(slot.prior_dir, lab.name, "tests"))
    for lab in all_labs():
        if lab.name not in used:
            continue
        for f in lab.files:
            src = os.path.join(SOLUTIONS, lab.name, f)
            if os.path.isfile(src):
                dst = os.path.join(slot.prior_dir, lab.name, f)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)


def not_a_plain_file(top, path):
    """Why PATH, inside the submission folder TOP, is not taken as a student
    file, or '': each folder from TOP down to it must be a real folder (no
    symbolic link at any depth), the file a regular file with one name (no
    hard link to a file elsewhere), its real path inside TOP's."""
    top = os.path.abspath(top)
    rel = os.path.relpath(os.path.abspath(path), top)
    if rel == ".." or rel.startswith(".." + os.sep):
        return "lies outside the submission folder: not taken"
    cur, st = top, None
    for part in rel.split(os.sep):
        cur = os.path.join(cur, part)
        try:
            st = os.lstat(cur)
        except OSError:
            return "is missing"
        if stat.S_ISLNK(st.st_mode):
            return (f"is reached through a symbolic link ({os.path.relpath(cur, top)}): "
                    "not taken; hand in the files themselves")
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file: not taken"
    if st.st_nlink > 1:
        return (f"is a hard link (one file, {st.st_nlink} names): not taken; hand in a "
                "copy")
    if not os.path.realpath(path).startswith(os.path.realpath(top) + os.sep):
        return "lies outside the submission folder: not taken"
    return ""


def stage_submission(impl, slot, labs, top=None):
    """Copy only the manifests' files into the slot's stage, each only if it
    is a plain file of the submission folder TOP (IMPL's by default);
    {lab: files missing or not taken}."""
    slot.scrub()
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
            why = not_a_plain_file(top or impl, src) if src else "is missing"
            if not why:
                shutil.copyfile(src, dst)
            else:
                missing.setdefault(lab.name, []).append(f"labs/{lab.name}/{f} {why}")
                with open(dst, "w") as fh:
                    fh.write(f'#error "labs/{lab.name}/{f} is missing from the submission"\n')
    return missing


def prior_hidden(slot, lab):
    """The reference files staged in the slot's prior/ that LAB's sandboxed
    steps must not read: all but those of the labs LAB builds on. Grading
    labs 1 and 2 together with --prior solutions stages lab 1's reference
    for lab 2; lab 1's own build must not see it (an #include of it would
    hand in the reference)."""
    keep = set(lab.builds_on())
    return [os.path.join(slot.prior_dir, other.name, f) for other in all_labs()
            if other.name not in keep for f in other.files
            if os.path.isfile(os.path.join(slot.prior_dir, other.name, f))]


def sandboxed_build(slot, lab):
    """Build LAB's target in the slot's sandbox: (ok, first error)."""
    sb = slot.sandbox
    sb.give(slot.dir, keep=[slot.prior_dir])
    how = sb.wrap(["ninja", "-C", slot.dir, lab.target], slot.dir, clean_env(), rw=[slot.dir],
                  limits={"cpu": BUILD_WALL}, hide=prior_hidden(slot, lab))
    try:
        r = subprocess.run(stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", stdin=subprocess.DEVNULL, timeout=BUILD_WALL,
                           cwd=slot.dir, **how)
        out, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired:
        out, rc = f"error: the build took more than {BUILD_WALL}s", 1
    finally:
        sb.reap()
        sb.take(slot.dir)
    if rc:
        return False, first_error(out, slot.stage)
    return True, ""


def sandboxed_objcheck(slot, lab, prior, objects):
    """objcheck.py's refusals for LAB's student code in the slot, run in the
    slot's sandbox (the compiler and binutils read the submission there):
    before the build (OBJECTS false: what the preprocessor sees) or after."""
    used = [u for u in lab.uses] if prior == "solutions" else []
    spec = objcheck.spec_for(slot.dir, lab, slot.stage,
                             [os.path.join(slot.prior_dir, u) for u in used])
    spec["objects"] = objects
    path = os.path.join(slot.dir, "objcheck-spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    env = clean_env({"PYTHONPATH": os.path.join(ROOT, "tools")})
    how = slot.sandbox.wrap([py, "-B", "-m", "workbook.objcheck", path], slot.dir, env,
                            ro=[slot.dir], limits={"cpu": BUILD_WALL},
                            hide=prior_hidden(slot, lab))
    try:
        r = subprocess.run(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", stdin=subprocess.DEVNULL, timeout=BUILD_WALL,
                           cwd=slot.dir, **how)
        out = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else None
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        out = None
    finally:
        slot.sandbox.reap()
    if not isinstance(out, list) or not all(isinstance(x, str) for x in out):
        return ["the grader's check of the code could not run: ./workbook check shows why"]
    return out


def real_run(slot, lab, boots, result):
    """LAB's module from the slot's submission on a real kernel, BOOTS boots
    in the slot's sandbox (grade --real): what the report says of it, never
    points."""
    if result["error"]:
        return {"boots": 0, "failed": 0, "first": "not run: the lab was not graded"}
    top = os.path.join(slot.dir, "real")
    confined = real.Confined(slot.sandbox, ro=[slot.stage, os.path.join(top, "rculabs_flood")])
    staged = os.path.relpath(slot.stage, ROOT)
    try:
        failed, n, first = real.cmd_real(lab, slot.stage, boots, every=True, quiet=True,
                                         top=top, confined=confined, tell=progress)
    except Fail as e:
        failed, n, first = 0, 0, f"not run: {e}"
    return {"boots": n, "failed": failed,
            "first": first and first.replace(staged, "labs")}


def progress(*a, **k):
    """A real run's progress lines: on standard error, off the report's way."""
    print(*a, **k, file=sys.stderr, flush=True)


def grade_labs(impl, labs, prior, slot, jobs=2, budget=LAB_BUDGET, top=None, boots=0):
    """Grade LABS of the submission at IMPL (inside the submission folder
    TOP, IMPL itself by default), each with BOOTS real boots reported beside
    it where it has a real run of the student's code; a list of lab results."""
    missing = stage_submission(impl, slot, labs, top)
    if not slot.configured:
        # No CTest discovery: it runs the test binary (so the submission's
        # constructors) during the build, outside the test run's sandbox.
        # Nor docs or benchmark targets: the sandboxed build cannot read
        # docs/ or bench/ (sandbox.HIDDEN), which their configure reads.
        extra = ["-DWORKBOOK_DISCOVER_TESTS=OFF", "-DWORKBOOK_DOCS=OFF", "-DWORKBOOK_BENCH=OFF"]
        # The staged copy also carries the labs' hidden tests
        # (solutions/NN/tests/), which a graded build needs with either prior.
        stage_prior(slot, labs, prior)
        extra.append(f"-DWORKBOOK_SOLUTIONS={slot.prior_dir}")
        ok, out = configure(slot.dir, slot.stage, prior, False, extra=extra)
        if not ok:
            raise Fail(f"cmake failed: {first_error(out)}", 1)
        slot.configured = True
    out = []
    for lab in labs:
        t1 = time.time()
        need = [lab.name] + ([] if prior == "solutions" else lab.uses)
        miss = [m for n in need for m in missing.get(n, [])]
        check = os.environ.get("WORKBOOK_GRADE_CHECK_CODE", "1") != "0"
        refused = sandboxed_objcheck(slot, lab, prior, False) if check and not miss else []
        if miss:
            r = lab_result(lab, error="; ".join(miss))
        elif refused:
            r = lab_result(lab, error=f"refused: {objcheck.summary(refused)}")
        else:
            ok, err = sandboxed_build(slot, lab)
            refused = sandboxed_objcheck(slot, lab, prior, True) if ok and check else []
            if not ok:
                r = lab_result(lab, error=f"does not compile: {err}")
            elif refused:
                r = lab_result(lab, error=f"refused: {objcheck.summary(refused)}")
            else:
                wd = os.path.join(slot.dir, "runs", lab.label)
                if os.path.isdir(wd):
                    shutil.rmtree(wd)
                os.makedirs(os.path.join(wd, "logs"))
                slot.sandbox.give(wd)
                res, used = run_graded(exe_path(slot.dir, lab), lab.names(), wd,
                                       lab.timeouts(), jobs, budget, slot.sandbox)
                slot.sandbox.take(wd)
                r = lab_result(lab, res)  # verdicts from the proofs, not the runner's XML
                r["usage"] = used.usage()
        if boots and lab.real_modules and not lab.real_given:
            r["real"] = real_run(slot, lab, boots, r)
        r["isolation"] = slot.sandbox.kind
        r["seconds"] = time.time() - t1
        out.append(r)
    return out


def cmd_grade(a):
    if a.slot < 0:
        raise Fail(f"--slot {a.slot}: a slot is a number from 0")
    labs = select_labs(a.labs)
    budget = float(getattr(a, "lab_budget", None) or LAB_BUDGET)
    if a.real < 0:
        raise Fail(f"--real {a.real}: the number of real boots is 0 or more")
    if a.real:
        real.kernel()     # what --real needs, said in one line before any grading
    if a.batch:
        return grade_batch(a, labs, budget)
    check_out_file(a.out, a.force)
    impl = locate_impl(a.impl) if a.impl else LABS
    check_deps()
    hide = [os.path.dirname(os.path.abspath(a.out))] if a.out else []
    sb = Sandbox(hide=hide, slot=a.slot)
    t0 = time.time()
    slot = Slot(str(a.slot), a.prior, sb).claim()
    results = grade_labs(impl, labs, a.prior, slot, JOBS, budget, a.impl or LABS, a.real)
    # Every sandboxed process is gone (each step reaped its own): only now
    # the results are written, by us, where the submission could not write.
    write_out(a.out, render(a.format, results, time.time() - t0, isolation=sb.describe()))
    return 0


def csv_cell(text):
    """TEXT as a CSV cell a spreadsheet shows as text: a submission's folder
    name (or an error quoting it) that starts like a formula (=, +, -, @, a
    tab or a carriage return) gets a leading apostrophe."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def report_name(entry):
    """A file name for ENTRY's reports that no other entry can share."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", entry).strip(".")[:60] or "_"
    return f"{safe}-{hashlib.sha1(entry.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def not_gradable(entry, path):
    """Why batch ENTRY at PATH is no submission folder, or ''."""
    if os.path.islink(path):
        return "a symbolic link, not a folder (not followed)"
    if os.path.isdir(path):
        return ""
    if re.search(r"\.(zip|tar|tgz|tar\.gz|tar\.xz|7z|rar)$", entry, re.I):
        return "an archive, not a folder: unpack it into a folder of its own"
    return "not a folder"


def batch_folders(a):
    """--batch and --out checked: (the reports' folder, made; the entries)."""
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
    entries = sorted(os.listdir(a.batch))
    if not entries:
        raise Fail(f"--batch {a.batch} is empty")
    check_deps()
    os.makedirs(out, exist_ok=True)
    return out, entries


def batch_slots(a, hide):
    """One claimed slot per parallel job (slots a.slot .. a.slot + jobs - 1: a
    second batch at once takes another --slot), each with its sandbox."""
    first = Sandbox(hide=hide, slot=a.slot)
    jobs = max(1, a.jobs)
    if first.kind == "user" and jobs > 1:
        say("isolation 'user' (no namespaces): grading one submission at a time, since "
            "parallel submissions would share /tmp")
        jobs = 1
    return [Slot(str(a.slot + i), a.prior,
                 first if i == 0 else Sandbox(first.kind, hide, a.slot + i)).claim()
            for i in range(jobs)]


def write_entry_reports(out, entry, results, secs, slot):
    """ENTRY's text and Gradescope reports in OUT; their file name's stem."""
    name = report_name(entry)
    iso = slot.sandbox.describe() if slot else None
    with open(os.path.join(out, f"{name}.txt"), "w") as f:
        f.write(report_text(results, entry, iso))
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        f.write(report_gradescope(results, secs, iso))
    return name


def write_grades_csv(path, labs, entries, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)    # every cell through csv_cell(): a name is no formula
        w.writerow(["submission", "report"] + [l.name for l in labs] +
                   ["total", "max", "seconds", "isolation", "note"])
        for entry in entries:
            rs, secs, iso, name, err = rows[entry]
            w.writerow([csv_cell(entry), f"{name}.txt"] + [r["score"] for r in rs] +
                       [sum(r["score"] for r in rs), sum(r["max"] for r in rs),
                        f"{secs:.1f}", iso, csv_cell(err)])


def grade_batch(a, labs, budget):
    """Every entry of --batch graded, JOBS at a time, each in a slot of its
    own: a report per entry and grades.csv in --out."""
    out, entries = batch_folders(a)
    slots = batch_slots(a, [out, os.path.abspath(a.batch)])
    free = list(slots)
    lock = threading.Lock()
    t0 = time.time()

    def grade_one(entry):
        path = os.path.join(a.batch, entry)
        t1 = time.time()
        err = not_gradable(entry, path)
        slot = None
        try:
            if err:
                results = [lab_result(l, error=err) for l in labs]
            else:
                with lock:
                    slot = free.pop()
                try:
                    results = grade_labs(locate_impl(path), labs, a.prior, slot, 2, budget,
                                         path, a.real)
                except Fail as e:
                    results = [lab_result(l, error=str(e)) for l in labs]
                    err = str(e)
            secs = time.time() - t1
            iso = slot.sandbox.kind if slot else "-"
            name = write_entry_reports(out, entry, results, secs, slot)
            say(f"{entry}: {sum(r['score'] for r in results)}/{sum(r['max'] for r in results)}"
                f" ({secs:.0f}s, {iso}){' - ' + err if err else ''}")
            return entry, (results, secs, iso, name, err)
        finally:
            if slot:
                with lock:
                    free.append(slot)

    with concurrent.futures.ThreadPoolExecutor(len(slots)) as ex:
        rows = dict(ex.map(grade_one, entries))
    write_grades_csv(os.path.join(out, "grades.csv"), labs, entries, rows)
    say(f"graded {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} in "
        f"{time.time() - t0:.0f}s ({slots[0].sandbox.describe()}): "
        f"{os.path.join(a.out, 'grades.csv')}")
    return 0
