"""What CMake needs of a lab's manifest, as a CMake fragment.

    python3 -m workbook.cmakefrag --lab DIR --out FILE

Rule kept here: CMake never reads lab.json itself. Workbook.cmake runs this
at configure time; the one loader (manifest.py) validates the manifest and
this writes the few facts the build needs as set() commands, each variable
named WB_<lab folder>_<key>. A manifest the loader refuses stops the
configure with the loader's own one-line message.
"""
import argparse
import os
import sys

from .common import Fail
from .manifest import Lab

STEPS = ("race_watch", "late_stores", "early_loads")


def quote(items):
    """A CMake list, quoted; every item checked to need no escaping."""
    for i in items:
        if any(c in i for c in '";\\$\n'):
            raise Fail(f"'{i}': a manifest value CMake cannot take as it is")
    return '"' + ";".join(items) + '"'


def fragment(lab):
    """The set() commands for LAB."""
    v = f"WB_{lab.name}_"
    modules = ["|".join([m["name"], m["source"], m.get("lab", "-"), m.get("dir", "-")])
               for m in lab.modules]
    lines = [f"# Written by tools/workbook/cmakefrag.py from labs/{lab.name}/lab.json.",
             f"set({v}LABEL {quote([lab.label])})",
             f"set({v}FILES {quote(lab.files)})",
             f"set({v}USES {quote(lab.uses)})",
             f"set({v}STEPS {quote([s for s in STEPS if lab.m.get(s)])})",
             f"set({v}HEADER_MACROS {quote(lab.api.get('header_macros', []))})",
             f"set({v}MODULES {quote(modules)})"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lab", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        text = fragment(Lab(os.path.abspath(a.lab)))
    except Fail as e:
        sys.stderr.write(f"{e}\n")
        return 1
    old = None
    if os.path.isfile(a.out):
        with open(a.out) as f:
            old = f.read()
    if old != text:         # an unchanged fragment keeps its time stamp
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
