"""gen-starters: labs/ derived from solutions/."""
import os

import gen_starter
from .common import Fail, LABS, ROOT, SOLUTIONS, say, warn
from .manifest import select_labs


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
