"""Labs and their lab.json."""
import json
import os
import re

from .common import Fail, LABS, ROOT


class Lab:
    def __init__(self, path):
        self.dir = path
        self.name = os.path.basename(path)
        try:
            with open(os.path.join(path, "lab.json")) as f:
                m = json.load(f)
        except (OSError, ValueError) as e:
            raise Fail(f"{self.name}/lab.json is not valid JSON: {e}")
        self.m = m
        self.label = m.get("label", self.name)
        self.title = m.get("title", "")
        self.files = list(m.get("files", []))
        self.uses = list(m.get("uses", []))
        self.modules = list(m.get("modules", []))
        self.tests = list(m.get("tests", []))
        self.hints = list(m.get("hints", []))
        self.mutants = list(m.get("mutants", []))
        self.target = f"{self.label}_tests"
        self.max_points = sum(int(t.get("points", 0)) for t in self.tests)

    def test(self, name):
        for t in self.tests:
            if t.get("name") == name:
                return t
        return None

    def names(self):
        """The lab's graded tests (suite/name), in the manifest's order."""
        return [t["name"] for t in self.tests]

    def timeouts(self):
        """{suite/name: seconds} for every test."""
        return {t["name"]: t.get("timeout", 60) for t in self.tests}


def all_labs():
    if not os.path.isdir(LABS):
        raise Fail(f"no labs/ folder in {ROOT}")
    out = []
    for d in sorted(os.listdir(LABS)):
        p = os.path.join(LABS, d)
        if re.match(r"^\d\d-", d) and os.path.isfile(os.path.join(p, "lab.json")):
            out.append(Lab(p))
    return out


def find_lab(arg, labs=None):
    labs = labs if labs is not None else all_labs()
    a = arg.rstrip("/").split("/")[-1]
    for lab in labs:
        if a in (lab.name, lab.label) or lab.name.startswith(a + "-") or \
                (a.isdigit() and int(a) == int(lab.name[:2])):
            return lab
    names = ", ".join(l.name for l in labs) or "none"
    raise Fail(f"unknown lab '{arg}' (labs: {names})")


def select_labs(args_labs):
    labs = all_labs()
    if not args_labs:
        return labs
    seen, out = set(), []
    for a in args_labs:
        lab = find_lab(a, labs)
        if lab.name not in seen:
            seen.add(lab.name)
            out.append(lab)
    return sorted(out, key=lambda l: l.name)
