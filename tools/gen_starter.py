#!/usr/bin/env python3
"""Derive a starter file from its solution (placeholder; the workbook command owns this)."""
import re, sys
def starter(text):
    out, skip = [], False
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s == "/* BEGIN SOLUTION */": skip = True; continue
        if s == "/* END SOLUTION */": skip = False; continue
        if skip: continue
        m = re.match(r"^(\s*)/\* STARTER: (.*) \*/\s*$", line)
        if m: out.append(m.group(1) + m.group(2) + "\n"); continue
        out.append(line)
    return "".join(out)
if __name__ == "__main__":
    sys.stdout.write(starter(open(sys.argv[1]).read()))
