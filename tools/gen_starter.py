#!/usr/bin/env python3
"""Derive a starter file from its solution.

    python3 tools/gen_starter.py solutions/NN-name/file > labs/NN-name/file

Marker rules (one marker per line, alone on it):
  /* BEGIN SOLUTION */ ... /* END SOLUTION */   the lines between, and the
                                                 markers, are removed;
  /* STARTER: code */                            becomes `code` (same indent),
                                                 one statement a line.
Put a `/* TODO n: what to do */` comment before each region. Unbalanced or
nested markers are an error. `./workbook gen-starters` applies this to every
file a lab's manifest lists.
"""
import re
import sys

BEGIN = "/* BEGIN SOLUTION */"
END = "/* END SOLUTION */"
STARTER = re.compile(r"^(\s*)/\* STARTER: (.*) \*/\s*$")


class MarkerError(ValueError):
    pass


def statements(code):
    """CODE cut after each ';' outside parentheses and quotes: "(void)a;
    (void)b;" is two lines of a starter, as the tree's .clang-format wants
    them. A preprocessor line stays whole."""
    if code.startswith("#"):
        return [code]
    out, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(code):
        if quote:
            if c == quote and code[i - 1] != "\\":
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            out.append(code[start:i + 1].strip())
            start = i + 1
    if code[start:].strip():
        out.append(code[start:].strip())
    return out


def starter(text, where="<input>"):
    """Return the starter derived from solution TEXT (raises MarkerError)."""
    out, skip, begin_line = [], False, 0
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        s = line.strip()
        if s == BEGIN:
            if skip:
                raise MarkerError(f"{where}:{n}: BEGIN SOLUTION inside the region opened at line {begin_line}")
            skip, begin_line = True, n
            continue
        if s == END:
            if not skip:
                raise MarkerError(f"{where}:{n}: END SOLUTION without BEGIN SOLUTION")
            skip = False
            continue
        if skip:
            continue
        m = STARTER.match(line)
        if m:
            code = m.group(2)
            lead = m.group(1) + code[:len(code) - len(code.lstrip())]
            out += [lead + st + "\n" for st in statements(code.strip())]
            continue
        if not line.strip() and out and not out[-1].strip():
            continue    # a region removed between two blank lines leaves one
        out.append(line)
    if skip:
        raise MarkerError(f"{where}:{begin_line}: BEGIN SOLUTION never closed")
    return "".join(out)


def solution_lines(text):
    """The non-trivial lines inside solution regions (for leak checks)."""
    lines, skip = [], False
    for line in text.splitlines():
        s = line.strip()
        if s == BEGIN:
            skip = True
        elif s == END:
            skip = False
        elif skip and len(s) > 12 and not s.startswith(("/*", "*", "//")):
            lines.append(s)
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gen_starter.py SOLUTION_FILE > STARTER_FILE")
    try:
        with open(sys.argv[1]) as f:
            sys.stdout.write(starter(f.read(), sys.argv[1]))
    except (OSError, MarkerError) as e:
        sys.exit(f"gen_starter: {e}")
