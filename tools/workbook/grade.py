"""Grading: staging a submission, grading it, grading a batch."""
import concurrent.futures
import csv
import os
import re
import shutil
import threading
import time

from .build import build, check_deps, configure, first_error
from .common import Fail, JOBS, LABS, ROOT, say
from .manifest import all_labs, select_labs
from .reports import check_out_file, lab_result, render, report_gradescope, report_text, write_out
from .run import exe_path, run_tests


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
        need = [lab.name] + ([] if prior == "solutions" else lab.uses)
        miss = [m for n in need for m in missing.get(n, [])]
        if miss:
            out.append(lab_result(lab, error="; ".join(miss)))
            continue
        ok, err, _ = build(slot.dir, [lab.target], slot.stage)
        if not ok:
            out.append(lab_result(lab, error=f"does not compile: {err}"))
            continue
        res, logs = run_tests(exe_path(slot.dir, lab), lab.names(),
                              os.path.join(slot.dir, "runs", lab.label), lab.timeouts(), jobs)
        out.append(lab_result(lab, res, logs))
    return out


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
                results = [lab_result(l, error=str(e)) for l in labs]
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
