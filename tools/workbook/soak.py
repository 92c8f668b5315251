"""soak - the reference solutions, every test, many runs, in every mode.

    ./workbook soak [--runs N] [--modes deterministic,pct,parallel] [LAB...]

Rule kept here: a test that fails once in a hundred runs is a defect, so
the proof is repetition, and the repetition is CTest's own
(`--repeat until-fail:N`), over the one CTest test per workbook test that
the build discovers. Each mode is only an environment: the same binaries,
the seeds each test sweeps, WORKBOOK_SCHED=pct for PCT's schedules,
WORKBOOK_MODE=parallel for real threads (tests that force their schedule
stay deterministic there); nothing else of the caller's WORKBOOK_*
settings. A deterministic or PCT test sweeps the same seeds every run, so
its repeats prove it deterministic (one schedule, one result) rather than
try new schedules; parallel runs differ each time. Needs solutions/;
writes only its build folder.
"""
import os
import re
import subprocess
import time

from .build import build, configure, first_error
from .common import Fail, JOBS, ROOT, SOLUTIONS, say
from .manifest import all_labs, find_lab
from .run import clean_env

MODES = {
    "deterministic": {},
    "pct": {"WORKBOOK_SCHED": "pct"},
    "parallel": {"WORKBOOK_MODE": "parallel"},
}


def parse_modes(text):
    modes = [m for m in text.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise Fail(f"unknown mode '{','.join(bad) or text}': choose from {', '.join(MODES)}")
    return modes


def ctest_summary(out):
    """'N tests' and the names CTest lists as failed, from its output."""
    m = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", out)
    failed = re.findall(r"^\s*\d+ - (\S+) \(", out, re.M)
    return (int(m.group(3)) if m else 0), failed


def soak_label(bdir, label, mode, runs):
    env = clean_env(MODES[mode])
    t0 = time.time()
    r = subprocess.run(["ctest", "--test-dir", bdir, "-L", f"^{label}$", "-j", str(JOBS),
                        "--repeat", f"until-fail:{runs}", "--output-on-failure"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL)
    n, failed = ctest_summary(r.stdout)
    ok = r.returncode == 0 and n > 0
    detail = f"{n} tests x {runs} runs" if ok else ("failed: " + ", ".join(failed)
                                                     if failed else "no tests ran")
    say(f"{'PASS' if ok else 'FAIL'}  {mode:13} {label:7} {detail} ({time.time() - t0:.0f}s)")
    if not ok:
        tail = r.stdout[-4000:]
        say("      " + tail.replace("\n", "\n      "))
        setting = " ".join(f"{k}={v}" for k, v in MODES[mode].items())
        for name in failed:
            say(f"      replay: {setting + ' ' if setting else ''}ctest --test-dir "
                f"{os.path.relpath(bdir, ROOT)} -R '^{re.escape(name)}$' --output-on-failure")
    return ok


def cmd_soak(a):
    if not os.path.isdir(SOLUTIONS):
        raise Fail("soak runs the reference solutions: this copy has no solutions/")
    if a.runs < 1:
        raise Fail("--runs takes a whole number of at least 1")
    modes = parse_modes(a.modes)
    labs = [find_lab(x) for x in a.labs] if a.labs else all_labs()
    bdir = os.path.join(ROOT, "build-wb-soak")
    ok, out = configure(bdir, "solutions", "own")
    if not ok:
        raise Fail(f"cmake failed: {first_error(out)}", 1)
    ok, err, _ = build(bdir, ["common_tests"] + [lab.target for lab in labs])
    if not ok:
        raise Fail(f"build failed: {err}", 1)
    labels = ([] if a.labs else ["common"]) + [lab.label for lab in labs]
    bad = 0
    for mode in modes:
        for label in labels:
            bad += not soak_label(bdir, label, mode, a.runs)
    say(f"soak: {len(modes) * len(labels) - bad} of {len(modes) * len(labels)} "
        f"(mode, suite) pairs passed every one of {a.runs} runs")
    return 1 if bad else 0
