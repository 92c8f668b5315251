"""containment - hostile submissions are contained by the grader.

    python3 grading/tests/containment.py [--sandbox bwrap|user]

Rule kept here: each attack of hostile/ is graded exactly as an instructor
grades a submission (`./workbook grade --impl ...`, a separate process), and
is judged only after that command returned: the score must be the starters'
(0), and what the attack tried must have left no trace (no file written, no
solution line seen, no process left, the results true). `./workbook
selftest` runs it as the stage "grading containment"; each check prints one
PASS or FAIL line with the score and what the attempt saw. Last, a class
folder graded with `grade --batch` as an instructor grades a class: a row
and a report per entry, and each entry that is no folder refused with why.
"""
import concurrent.futures
import csv
import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from workbook.common import Fail                     # noqa: E402
from workbook.manifest import all_labs              # noqa: E402
from workbook.run import read_untrusted              # noqa: E402
from workbook.sandbox import Sandbox                 # noqa: E402
import gen_starter                                   # noqa: E402

HOSTILE = os.path.join(HERE, "hostile")
LAB1 = "01-synchronize-rcu"
# Attacks put first in every student function of every lab.
EVERY_FUNCTION = ["exit_group", "raise_bug_signal", "bug_first"]
APPENDED = ["write_outside", "read_solutions", "left_running", "rewrite_results", "fake_output",
            "redefine_asserts", "forge_proofs", "assert_functions", "set_switches",
            "no_sanitize", "pasted_attribute", "asm_syscall", "outside_include", "macro_body",
            "proofs_without_report", "call_proof_writer"]
# The lab 1 file an appended attack goes into (rcu.c unless named here).
APPENDED_TO = {"redefine_asserts": "rculist.h", "macro_body": "rculist.h"}
# Attacks the grader's code check (tools/workbook/objcheck.py) refuses: what
# its report must say. Every other attack is graded with the check off
# (WORKBOOK_GRADE_CHECK_CODE=0): the sandbox and the completion proof must
# contain it on their own, a second net under the first.
REFUSED_AS = {"redefine_asserts": "#undef cr_assert in a header the tests include",
              "forge_proofs": "has __attribute__((constructor))",
              "assert_functions": "globally: make it static",
              "set_switches": "uses setenv, which is not part of the lab's API",
              "no_sanitize": "has __attribute__((no_sanitize_thread))",
              "pasted_attribute": "has __attribute__((constructor))",
              "asm_syscall": "has inline assembly",
              "outside_include": "includes @ROOT@/common/src/internal.h, outside the lab",
              "macro_body": "macro rcu_dereference declares an extern name",
              "call_proof_writer": "uses sim_test_proof, which is not part of the lab's API"}
# Lab 1's budget (--lab-budget) for an appended attack. The attacks act in a
# constructor, before any test; one that keeps Criterion's runner busy
# (left_running, rewrite_results, proofs_without_report) makes the grader
# spend the whole budget, which is how it ends such a run, with 120 s or
# with this.
ATTACK_BUDGET = 8


def copy_starters(dst):
    """The starters' student files (what a student who changed nothing hands in)."""
    for lab in all_labs():
        for f in lab.files:
            src = os.path.join(ROOT, "labs", lab.name, f)
            d = os.path.join(dst, "labs", lab.name, f)
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copyfile(src, d)


def at_each_function(text, line):
    """TEXT with LINE first in every function body (kernel style: a body's
    opening brace alone on its line), and the headers LINE needs."""
    body = re.sub(r"^\{\n", "{\n\t" + line + "\n", text, flags=re.M)
    return "#include <signal.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n" + body


def make(kind, dst, subst):
    copy_starters(dst)
    if kind in EVERY_FUNCTION:
        with open(os.path.join(HOSTILE, f"{kind}.txt")) as f:
            line = f.read().strip()
        n = 0
        for lab in all_labs():
            for fn in lab.files:
                p = os.path.join(dst, "labs", lab.name, fn)
                with open(p) as f:
                    text = f.read()
                n += len(re.findall(r"^\{\n", text, re.M))
                with open(p, "w") as f:
                    f.write(at_each_function(text, line))
        return n
    with open(os.path.join(HOSTILE, f"{kind}.c")) as f:
        code = f.read()
    for k, v in subst.items():
        code = code.replace(k, v)
    with open(os.path.join(dst, "labs", LAB1, APPENDED_TO.get(kind, "rcu.c")), "a") as f:
        f.write(code)
    return 1


def grade(sub, out, labs, env, slot=0, budget=None, check_code=False, prior="own", more=()):
    env = dict(env, WORKBOOK_GRADE_CHECK_CODE="1" if check_code else "0")
    extra = [f"--slot={slot}", f"--prior={prior}"] + \
        ([f"--lab-budget={budget}"] if budget else []) + list(more)
    r = subprocess.run([os.path.join(ROOT, "workbook"), "grade", "--impl", sub, "--format",
                        "json", "--out", out] + extra + labs, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL, env=env)
    try:
        with open(out) as f:
            return r, json.load(f)
    except (OSError, ValueError):
        return r, None


def slot_dir(slot, prior="own"):
    return os.path.join(ROOT, f"build-wb-grade-{prior}-{slot}")


def hostile_lines(slot, prior="own"):
    """What the attempts printed (the lab 1 run's log, as the grader left it)."""
    p = os.path.join(slot_dir(slot, prior), "runs", "lab1", "graded.log")
    try:
        text = read_untrusted(p).decode("utf-8", "replace")
    except OSError:
        return []
    return list(dict.fromkeys(ln.strip() for ln in text.splitlines()
                              if ln.startswith("hostile: ")))


def marked_processes(mark):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    if f.read().startswith(mark.encode()):
                        out.append(int(p))
            except OSError:
                pass
    return out


def solution_lines():
    lines = set()
    for lab in all_labs():
        for fn in lab.files:
            try:
                with open(os.path.join(ROOT, "solutions", lab.name, fn)) as f:
                    lines.update(l for l in gen_starter.solution_lines(f.read()) if len(l) > 12)
            except OSError:
                pass
    return lines


def checks(sandbox=None):
    """Yield (ok, what, detail) for every attack."""
    env = dict(os.environ)
    if sandbox:
        env["WORKBOOK_SANDBOX"] = sandbox
    tmp = tempfile.mkdtemp(prefix="rculabs-containment-")
    try:
        yield from _checks(tmp, env, sandbox)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _checks(tmp, env, sandbox):
    """Each grading on a slot of its own, two at a time where the sandbox
    keeps them apart (bubblewrap: a PID namespace each; the user sandbox
    kills every process of its one user after each run, so one at a time);
    the results in the order of the attacks."""
    secret = solution_lines()
    jobs = [("reference", None)] + [(k, None) for k in EVERY_FUNCTION] + \
        [(k, ATTACK_BUDGET) for k in APPENDED] + [(k, None) for k in LINKS] + \
        [("prior_reference", None)]
    try:
        parallel = Sandbox(sandbox).kind == "bwrap"
    except Fail as e:
        yield False, "sandbox", str(e)
        return
    slots = queue.Queue()
    for i in range(2 if parallel else 1):
        slots.put(i)

    def run(job):
        slot = slots.get()
        try:
            if job[0] == "reference":
                return [reference_check(tmp, env, slot)]
            if job[0] in LINKS:
                return [link_check(job[0], tmp, env, slot)]
            if job[0] == "prior_reference":
                return [prior_check(tmp, env, slot)]
            if job[0] in EVERY_FUNCTION:
                return [every_function_check(job[0], tmp, env, slot)]
            return [attack_check(job[0], tmp, env, slot, secret)]
        finally:
            slots.put(slot)
    with concurrent.futures.ThreadPoolExecutor(slots.qsize()) as ex:
        for results in ex.map(run, jobs):
            yield from results
    yield batch_check(tmp, env, 2 if parallel else 1)


# Links in a submission, each pointing at the reference: (lab graded, what
# the report must say). Staging takes plain files only.
LINKS = {"link_lab_folder": ("01-synchronize-rcu", "symbolic link"),
         "link_labs_folder": ("01-synchronize-rcu", "symbolic link"),
         "link_nested_module": ("03-module-unload", "symbolic link"),
         "hard_link": ("01-synchronize-rcu", "hard link")}


def make_links(kind, dst):
    copy_starters(dst)
    sol = os.path.join(ROOT, "solutions")
    labs = os.path.join(dst, "labs")
    if kind == "link_lab_folder":
        shutil.rmtree(os.path.join(labs, LAB1))
        os.symlink(os.path.join(sol, LAB1), os.path.join(labs, LAB1))
    elif kind == "link_labs_folder":
        shutil.rmtree(labs)
        os.symlink(sol, labs)
    elif kind == "link_nested_module":
        mod = os.path.join(labs, "03-module-unload", "module")
        shutil.rmtree(mod)
        os.symlink(os.path.join(sol, "03-module-unload", "module"), mod)
    else:
        os.unlink(os.path.join(labs, LAB1, "rcu.c"))
        os.link(os.path.join(sol, LAB1, "rcu.c"), os.path.join(labs, LAB1, "rcu.c"))


def link_check(kind, tmp, env, slot):
    """A submission whose files reach the reference through a link."""
    lab, want = LINKS[kind]
    sub = os.path.join(tmp, kind)
    make_links(kind, sub)
    r, res = grade(sub, os.path.join(tmp, f"{kind}.json"), [lab], env, slot, check_code=True)
    if res is None:
        return False, kind, f"grading failed: {r.stdout.strip()[-300:]}"
    err = res["labs"][0]["error"]
    iso = res.get("isolation", "?").split(" ")[0]
    ok = res["score"] == 0 and want in err
    return ok, f"{kind}: {res['score']}/{res['max_score']} ({iso}); {err[:160] or '-'}", \
        "" if ok else f"expected 0 and '{want}'"


def prior_check(tmp, env, slot):
    """Labs 1 and 2 graded together with --prior solutions: the grader
    stages lab 1's reference in the slot's prior/ for lab 2's build. Lab 1's
    files are each one #include of that copy, graded with the code check off
    (which refuses the include on its own): lab 1's build must not read it."""
    sub = os.path.join(tmp, "prior_reference")
    copy_starters(sub)
    lab = next(l for l in all_labs() if l.name == LAB1)
    for f in lab.files:
        ref = os.path.join(slot_dir(slot, "solutions"), "prior", LAB1, f)
        with open(os.path.join(sub, "labs", LAB1, f), "w") as fh:
            fh.write(f'#include "{ref}"\n')
    r, res = grade(sub, os.path.join(tmp, "prior_reference.json"), [LAB1, "02-call-rcu"], env,
                   slot, prior="solutions")
    if res is None:
        return False, "prior_reference", f"grading failed: {r.stdout.strip()[-300:]}"
    lab1 = res["labs"][0]
    iso = res.get("isolation", "?").split(" ")[0]
    return (res["score"] == 0, f"prior_reference (labs 1 and 2, --prior solutions; lab 1 "
            f"includes the reference staged for lab 2): {res['score']}/{res['max_score']} "
            f"({iso}); lab 1: {(lab1['error'] or '-')[:120]}",
            "" if res["score"] == 0 else "lab 1's build read the staged reference")


def reference_check(tmp, env, slot):
    """The honest reference, graded as a submission with every check on,
    earns every point: no check refuses what a student should write."""
    sub = os.path.join(tmp, "reference", "labs")
    for lab in all_labs():
        for f in lab.files:
            d = os.path.join(sub, lab.name, f)
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, "solutions", lab.name, f), d)
    r, res = grade(os.path.dirname(sub), os.path.join(tmp, "reference.json"), [], env, slot,
                   check_code=True)
    if res is None:
        return False, "reference", f"grading failed: {r.stdout.strip()[-300:]}"
    iso = res.get("isolation", "?").split(" ")[0]
    lost = [f"{lab['name']}: {lab['error'] or ', '.join(t['name'] for t in lab['tests'] if not t['passed'])}"
            for lab in res["labs"] if lab["score"] != lab["max_score"]]
    return (not lost, f"the reference solutions graded as a submission: {res['score']}/"
            f"{res['max_score']} ({iso})", "; ".join(lost))


# What the grader says of a test Criterion passed but the attack ended.
CAUGHT_AS = {"exit_group": "ended before its last assertion",
             "raise_bug_signal": "not from the simulated kernel's BUG path",
             "bug_first": "this one is a BUG in your code"}


def every_function_check(kind, tmp, env, slot):
    """KIND's line at the top of every student function, all labs."""
    sub = os.path.join(tmp, kind)
    n = make(kind, sub, {})
    r, res = grade(sub, os.path.join(tmp, f"{kind}.json"), [], env, slot)
    if res is None:
        return False, kind, f"grading failed: {r.stdout.strip()[-300:]}"
    caught = sum(1 for lab in res["labs"] for t in lab["tests"]
                 if CAUGHT_AS[kind] in t["output"])
    iso = res.get("isolation", "?").split(" ")[0]
    return (res["score"] == 0 and caught > 0,
            f"{kind} at the top of {n} student functions: {res['score']}/"
            f"{res['max_score']} ({iso}); {caught} test(s) Criterion passed were failed "
            f"as '{CAUGHT_AS[kind]}'", "" if res["score"] == 0 else
            "points given: " + ", ".join(f"{t['name']}" for lab in res["labs"]
                                         for t in lab["tests"] if t["passed"]))


def attack_check(kind, tmp, env, slot, secret):
    """A constructor appended to lab 1's rcu.c, graded on lab 1 alone."""
    mark = f"rculabs-hostile-{secrets.token_hex(4)}"
    sub = os.path.join(tmp, kind)
    out = os.path.join(tmp, "results", kind, "results.json")
    os.makedirs(os.path.dirname(out))
    tests = " ".join(t["name"] for lab in all_labs() if lab.name == LAB1 for t in lab.tests)
    make(kind, sub, {"@ROOT@": ROOT, "@OUT@": out, "@MARK@": mark, "@TESTS@": tests})
    r, res = grade(sub, out, [LAB1], env, slot, ATTACK_BUDGET, kind in REFUSED_AS)
    # The grade command has returned: whatever the attack left is here now.
    if res is None:
        return False, kind, f"grading failed: {r.stdout.strip()[-300:]}"
    # A refused attack never ran: the slot's log is an earlier run's.
    saw = [] if kind in REFUSED_AS else hostile_lines(slot)
    left = marked_processes(mark)
    score = f"{res['score']}/{res['max_score']}"
    iso = res.get("isolation", "?").split(" ")[0]
    problems = [] if res["score"] == 0 else [f"scored {score}"]
    if left:
        problems.append(f"process(es) {left} still running")
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    if kind == "write_outside":
        paths = [f"{ROOT}/labs/HOSTILE-{mark}", f"{ROOT}/HOSTILE-{mark}",
                 f"{slot_dir(slot)}/lab1_tests.HOSTILE-{mark}"]
        # the user sandbox shares these with the host: the grader removes
        # what the sandbox account left there
        paths += [f"{d}/HOSTILE-{mark}" for d in ("/tmp", "/var/tmp", "/dev/shm")]
        written = [p for p in paths if os.path.exists(p)]
        problems += [f"{p} written" for p in written]
        for p in written:
            os.unlink(p)
        problems += [ln for ln in saw if "slot 1's submission: READ" in ln]
    if kind == "read_solutions":
        seen = [l for l in saw if "READ" in l]
        blob = json.dumps(res)
        leaked = [l for l in secret if l in blob]
        problems += [f"read: {l}" for l in seen] + [f"in the report: {l}" for l in leaked[:3]]
    if kind == "rewrite_results":
        with open(out) as f:
            now = json.load(f)
        if now.get("score") != 0 or "labs" not in now:
            problems.append(f"results file rewritten: {json.dumps(now)[:80]}")
    if kind in REFUSED_AS:
        want = REFUSED_AS[kind].replace("@ROOT@", ROOT)
        said = [lab.get("error") or "" for lab in res["labs"]] + \
            [t["output"] for lab in res["labs"] for t in lab["tests"]]
        if not any(want in o for o in said):
            problems.append(f"not refused as '{want}': {(said or ['-'])[0][:200]}")
        saw.append("refused: " + want.replace(ROOT + "/", ""))
    if not saw and kind != "rewrite_results":
        problems.append("the attack printed nothing: did it run?")
    return (not problems, f"{kind}: {score} ({iso}); saw: " + (" | ".join(saw) or "-"),
            "; ".join(problems))


# A class's folder for `grade --batch`: (entry, the note its grades.csv row
# must carry, or '' for a graded one); alice hands in the reference.
BATCH = {"alice": "", "bob": "", "carol.zip": "an archive, not a folder",
         "dave": "a symbolic link, not a folder"}


def make_batch(batch):
    os.makedirs(batch)
    lab = next(l for l in all_labs() if l.name == LAB1)
    for f in lab.files:
        d = os.path.join(batch, "alice", "labs", LAB1, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, "solutions", LAB1, f), d)
    copy_starters(os.path.join(batch, "bob"))
    open(os.path.join(batch, "carol.zip"), "wb").close()
    os.symlink(os.path.join(batch, "alice"), os.path.join(batch, "dave"))


def batch_check(tmp, env, jobs):
    """`grade --batch` on a class of four, JOBS at a time, lab 1: the
    reference earns every point, the starters none, an archive and a link
    are refused with their reason; a report each, a row each."""
    batch, out = os.path.join(tmp, "batch"), os.path.join(tmp, "batch-out")
    make_batch(batch)
    r = subprocess.run([os.path.join(ROOT, "workbook"), "grade", "--batch", batch, "--out", out,
                        "-j", str(jobs), LAB1], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                       env=dict(env, WORKBOOK_GRADE_CHECK_CODE="1"))
    try:
        with open(os.path.join(out, "grades.csv"), newline="") as f:
            rows = {row["submission"]: row for row in csv.DictReader(f)}
    except OSError:
        return False, "grade --batch", f"no grades.csv (exit {r.returncode}): " \
            f"{r.stdout.strip()[-300:]}"
    problems = []
    for entry, note in BATCH.items():
        row = rows.get(entry)
        if row is None:
            problems.append(f"{entry}: no row")
            continue
        want = row["max"] if entry == "alice" else "0"
        if row["total"] != want or note not in row["note"]:
            problems.append(f"{entry}: {row['total']}/{row['max']} '{row['note']}'")
        if not os.path.isfile(os.path.join(out, row["report"])):
            problems.append(f"{entry}: no report {row['report']}")
    said = ", ".join(f"{e} {rows[e]['total']}/{rows[e]['max']}" for e in BATCH if e in rows)
    return (not problems and r.returncode == 0,
            f"grade --batch, a class of {len(BATCH)} on lab 1, -j {jobs}: {said}; the archive "
            f"and the link refused with their reason, a report each",
            "; ".join(problems) or ("" if r.returncode == 0 else f"exit {r.returncode}"))


def main(argv):
    sandbox = None
    if argv[:1] == ["--sandbox"] and len(argv) > 1:
        sandbox = argv[1]
    bad = 0
    for ok, what, detail in checks(sandbox):
        bad += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {what}" + (f": {detail}" if detail else ""),
              flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
