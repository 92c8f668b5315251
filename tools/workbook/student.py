"""The student's commands: status, check, hint, watch."""
import argparse
import json
import os
import shutil
import subprocess
import time

from .build import build, configure, first_error
from .common import Fail, JOBS, LABS, ROOT, say, warn
from .manifest import find_lab, select_labs
from .run import exe_path, failure_details, list_tests, run_tests, score_lab


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
    names = lab.names()
    if only_test:
        if only_test not in names and only_test not in list_tests(exe):
            raise Fail(f"{lab.name} has no test '{only_test}' (see ./workbook check {lab.name} --list)")
        names = [only_test]
    extra = {}
    for k in ("WORKBOOK_SEED", "WORKBOOK_SEEDS", "WORKBOOK_MODE"):
        if os.environ.get(k):
            extra[k] = os.environ[k]
    res, logs = run_tests(exe, names, os.path.join(bdir, "runs", lab.label), lab.timeouts(), JOBS, echo,
                          extra, trace_dir=os.path.join(ROOT, "traces"))
    return res, "", logs


def first_failing(lab, res):
    for t in lab.tests:
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
        n = len(lab.tests)
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
                                             list=False))
            except Fail as e:
                warn(str(e))
            if a.once:
                return 0
            wait_for_save(files, last)
    except KeyboardInterrupt:
        say("")
        return 0
