#!/usr/bin/env python3
"""Check the labs' designs against the Linux-kernel memory model with herd7.

    python3 tools/herd7_check.py --herd7 PATH --lkmm DIR [--herdlib DIR] [--write]

The simulated kernel's own explorer (common/tests/test_litmus.c) is stronger
than LKMM in places (docs/memory_model.md names them), so a "Never" it finds
proves nothing about LKMM. This script asks herd7 itself. Each file in
common/tests/lkmm/ is one design written as a herd7 C litmus test; its
header lists variants, one per line:

     *   NAME   EDITS   VERDICT   WHY

EDITS is "." (the file as it is) or words: -T drops every line that ends
with the comment /* T */, +T turns a comment "/* T: code */" into the code.
VERDICT is what LKMM must answer (Never or Sometimes). Every variant is run;
a verdict that differs fails the check (exit 1). With --write the table goes
into docs/memory_model.md between its HERD7 TABLE markers.

herd7 is not a Debian package and its code stays out of this repository:
docs/memory_model.md says how the table was made and how to remake it. DIR
is Linux's tools/memory-model (linux-kernel.cfg and the files it names).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LITMUS_DIR = os.path.join(ROOT, "common", "tests", "lkmm")
PAGE = os.path.join(ROOT, "docs", "memory_model.md")
BEGIN, END = "<!-- BEGIN HERD7 TABLE -->", "<!-- END HERD7 TABLE -->"
VARIANT = re.compile(r"^ \*   (\S+)\s+(\.|(?:[-+]\S+\s+)*[-+]\S+)\s+(Never|Sometimes)\s+(.*)$")
OBSERVATION = re.compile(r"^Observation \S+ (Never|Sometimes|Always) (\d+) (\d+)")


def variants(text):
    """[(name, edits, verdict, why)] from a litmus file's header."""
    out = []
    for line in text.splitlines():
        m = VARIANT.match(line)
        if m:
            edits = [] if m.group(2) == "." else m.group(2).split()
            out.append((m.group(1), edits, m.group(3), m.group(4).strip()))
    return out


def apply_edits(text, edits):
    """TEXT with EDITS made; an edit that changes nothing is an error."""
    lines = text.splitlines(keepends=True)
    for edit in edits:
        tag, before = edit[1:], len(lines)
        if edit[0] == "-":
            end = re.compile(r"/\* %s \*/\s*$" % re.escape(tag))
            lines = [l for l in lines if not end.search(l)]
            changed = len(lines) != before
        else:
            alt = re.compile(r"^(\s*)/\* %s: (.*) \*/\s*$" % re.escape(tag))
            changed = False
            for n, l in enumerate(lines):
                m = alt.match(l)
                if m:
                    lines[n] = "%s%s /* %s */\n" % (m.group(1), m.group(2), tag)
                    changed = True
        if not changed:
            raise ValueError("edit %s matches no line" % edit)
    return "".join(lines)


def run_herd7(args, text, name):
    """(verdict, positive, states) herd7 gives for litmus TEXT."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".litmus")
        with open(path, "w") as f:
            f.write(re.sub(r"^C \S+", "C " + name, text, count=1))
        cmd = [args.herd7, "-I", args.lkmm]
        if args.herdlib:
            cmd += ["-I", args.herdlib]
        cmd += ["-conf", os.path.join(args.lkmm, "linux-kernel.cfg"), path]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=args.lkmm)
    for line in res.stdout.splitlines():
        m = OBSERVATION.match(line)
        if m:
            return m.group(1), int(m.group(2)), int(m.group(2)) + int(m.group(3))
    raise RuntimeError("herd7 gave no verdict for %s: %s" % (name, (res.stderr or res.stdout).strip()))


def table(rows, version):
    out = ["Checked with %s. *States*: the final states herd7 found; *reach*: how many satisfy"
           " the `exists` clause." % version, "",
           "| Test | Variant | LKMM (herd7) | Expected | States | Reach | Why |",
           "|---|---|---|---|---|---|---|"]
    for file, name, got, want, pos, states, why in rows:
        out.append("| `%s` | %s | %s | %s | %d | %d | %s |" % (file, name, got, want, states, pos, why))
    return "\n".join(out)


def write_page(block):
    with open(PAGE) as f:
        page = f.read()
    if BEGIN not in page or END not in page:
        sys.exit("herd7_check: %s has no %s ... %s block" % (PAGE, BEGIN, END))
    head, rest = page.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(PAGE, "w") as f:
        f.write(head + BEGIN + "\n" + block + "\n" + END + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--herd7", required=True, help="the herd7 executable")
    ap.add_argument("--lkmm", required=True, help="Linux's tools/memory-model")
    ap.add_argument("--herdlib", help="herdtools7's herd/libdir, if herd7 is not installed")
    ap.add_argument("--write", action="store_true", help="write the table into docs/memory_model.md")
    args = ap.parse_args()
    if not os.access(args.herd7, os.X_OK):
        sys.exit("herd7_check: %s is not an executable: build herdtools7 (docs/memory_model.md) "
                 "and pass --herd7 PATH" % args.herd7)
    if not os.path.isfile(os.path.join(args.lkmm, "linux-kernel.cfg")):
        sys.exit("herd7_check: no linux-kernel.cfg in %s: pass Linux's tools/memory-model as --lkmm"
                 % args.lkmm)
    version = subprocess.run([args.herd7, "-version"], capture_output=True, text=True).stdout.split(",")[0]
    rows, wrong = [], 0
    for file in sorted(f for f in os.listdir(LITMUS_DIR) if f.endswith(".litmus")):
        with open(os.path.join(LITMUS_DIR, file)) as f:
            text = f.read()
        for name, edits, want, why in variants(text):
            got, pos, states = run_herd7(args, apply_edits(text, edits), file[:-7] + "+" + name)
            ok = got == want
            wrong += not ok
            print("%-4s %s %s: %s (expected %s), %d of %d states" %
                  ("ok" if ok else "FAIL", file, name, got, want, pos, states))
            rows.append((file, name, got, want, pos, states, why))
    if not rows:
        sys.exit("herd7_check: no variants found in %s" % LITMUS_DIR)
    if args.write:
        write_page(table(rows, "herd7 " + version.strip()))
    print("%d variants, %d as expected" % (len(rows), len(rows) - wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
