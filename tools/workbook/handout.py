"""The student handout."""
import json
import os
import re
import shutil
import subprocess

import gen_starter
from .common import Fail, ROOT, SOLUTIONS, say, warn
from .manifest import all_labs, find_lab, seal


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


# Left out of a handout: the instructors' page, and new-lab, whose skeleton
# holds its own solution (a lab made with it would leak it).
MAINTAINERS_ONLY = ("docs/instructors.md", "tools/workbook/newlab.py")
# What a handout is made of: a file here that git does not track is left out.
COURSE_DIRS = ("labs", "solutions", "common", "quizzes", "docs", "cmake", "tools", "grading")


def untracked_course_files():
    """Files under COURSE_DIRS that git neither tracks nor ignores: a handout
    built now would silently leave them out (a new lab not yet added)."""
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "--others", "--exclude-standard", "-z",
                        "--", *COURSE_DIRS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if r.returncode:
        return []
    return sorted(p for p in r.stdout.decode().split("\0") if p)


def strip_answers(text):
    """A quiz without its "## Answers" section, and without the links that
    pointed into it (a link to a stripped anchor would break the docs)."""
    m = re.search(r"^## Answers\b.*", text, re.M | re.S)
    if not m:
        return text
    gone = set(re.findall(r"""<a\s+(?:id|name)=["']([^"']+)["']""", m.group(0)))
    gone |= set(re.findall(r"\{#([\w-]+)\}", m.group(0)))
    kept = text[:m.start()]
    kept = re.sub(r"\[[^\]]*\]\(#([\w-]+)\)",
                  lambda l: "" if l.group(1) in gone else l.group(0), kept)
    kept = re.sub(r"\n{3,}", "\n\n", kept).rstrip() + "\n"
    return kept + "\nThe answers are with your instructor.\n"


def strip_instructor(text):
    """A page without its instructors-only regions, the lines between
    <!-- BEGIN INSTRUCTOR --> and <!-- END INSTRUCTOR -->."""
    text = re.sub(r"^<!-- BEGIN INSTRUCTOR -->\n.*?^<!-- END INSTRUCTOR -->\n?", "", text,
                  flags=re.M | re.S)
    return re.sub(r"\n{3,}", "\n\n", text)


def handout_lab_json(text):
    """A lab.json whose hidden tests are counted, not listed: their names and
    hints say what the grader tries, which a student should find out by
    testing (hidden_tests, manifest.py). Every hint but the first level is
    sealed (manifest.seal()): "hint --test" prints a test's hint when asked, and
    ./workbook hint the next level when asked, never the file at a glance; so
    are the words of the lab's findings (check shows them with the failure)."""
    m = json.loads(text)
    hidden = [t for t in m["tests"] if t.get("visibility") == "hidden"]
    out = {}
    for k, v in m.items():
        if k == "tests":
            out[k] = [dict(t, hint=seal(t["hint"])) for t in v if t not in hidden]
            if hidden:
                out["hidden_tests"] = {"count": len(hidden),
                                       "points": sum(t["points"] for t in hidden)}
        elif k == "hints":
            out[k] = v[:1] + [seal(h) for h in v[1:]]
        elif k == "findings":   # a bug's words, before the student has met it
            out[k] = [dict(f, bug=seal(f["bug"])) for f in v]
        else:
            out[k] = v
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def copy_handout(out, files, release):
    """Copy the tracked FILES a student gets into OUT; how many."""
    kept = 0
    for rel in files:
        parts = rel.split("/")
        if parts[0] == "solutions" and not (len(parts) > 2 and parts[1] in release
                                            and parts[2] != "mutants"):
            continue
        if parts[0] in ("grading", "bench") or rel in MAINTAINERS_ONLY or \
                parts[0].startswith("build"):
            continue
        src = os.path.join(ROOT, rel)
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if parts[0] == "labs" and parts[-1] == "lab.json":
            with open(src) as f:
                text = handout_lab_json(f.read())
            with open(dst, "w") as f:
                f.write(text)
        elif rel.endswith(".md"):
            with open(src) as f:
                text = strip_instructor(f.read())
            if parts[0] == "quizzes":
                text = strip_answers(text)
            with open(dst, "w") as f:
                f.write(text)
        else:
            shutil.copy2(src, dst)
        kept += 1
    return kept


def secret_lines(labs, files, release):
    """{line: where} for the distinctive solution lines of unreleased labs."""
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
    return {k: v for k, v in sol_lines.items() if k not in public}


def find_leaks(out, sol_lines):
    """Every line of a file under OUT that is a secret solution line."""
    leaks = []
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
    return leaks


def cmd_handout(a):
    out = os.path.abspath(a.out)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise Fail(f"{a.out} exists and is not an empty folder")
    if not os.path.isdir(os.path.dirname(out)):
        raise Fail(f"folder {os.path.dirname(out)} does not exist")
    release = {find_lab(x).name for x in (a.release or [])}
    untracked = untracked_course_files()
    if untracked and not a.force:
        more = f" and {len(untracked) - 3} more" if len(untracked) > 3 else ""
        raise Fail(f"{len(untracked)} file(s) git does not track would be left out of the "
                   f"handout ({', '.join(untracked[:3])}{more}): git add them, or pass --force "
                   f"to leave them out")
    files = tracked_files()
    os.makedirs(out, exist_ok=True)
    kept = copy_handout(out, files, release)
    # Proof: no line of an unreleased solution region appears anywhere.
    sol_lines = secret_lines(all_labs(), files, release)
    leaks = find_leaks(out, sol_lines)
    say(f"handout: {kept} files in {a.out} (no grading/, bench/, instructors' pages, quiz "
        f"answers or mutants; " + (f"solutions/ of the released labs only: {', '.join(sorted(release))}, "
        f"which ./workbook status --prior solutions builds on" if release else "no solutions/") + ")")
    if leaks:
        for l in leaks[:20]:
            warn(f"solution line in the handout: {l}")
        return 1
    say(f"checked: none of the {len(sol_lines)} solution lines of unreleased labs appears in it")
    say(f"next: cd {a.out} && ./workbook setup && ./workbook status")
    return 0
