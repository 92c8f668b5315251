"""Mutants: deliberately wrong solutions that prove the tests can fail.

Rule kept here: a mutant is a patch file beside what it patches,
solutions/NN-*/mutants/NAME.patch (a unified diff, paths a/FILE relative to
solutions/NN-*/), listed with the tests that must catch it in
solutions/NN-*/mutants/index.json ([{name, description, killed_by}]). Mutants
live under solutions/ only, so a handout (which has no solutions/) never
holds one. They are applied to a copy, never to solutions/ itself.
"""
import json
import os
import re
import subprocess

from .common import Fail, ROOT, SOLUTIONS
from .manifest import read_json
from .run import is_stress_name

ENTRY_KEYS = {"name": str, "description": str, "killed_by": list}


class Mutant:
    def __init__(self, lab, entry, patch):
        self.lab = lab
        self.name = entry["name"]
        self.description = entry["description"]
        self.killed_by = list(entry["killed_by"])
        self.patch = patch

    def files(self):
        """The files (relative to the lab's folder) the patch changes."""
        with open(self.patch) as f:
            return sorted(set(re.findall(r"^\+\+\+ b/(\S+)", f.read(), re.M)))


def load(lab):
    """LAB's mutants from its index.json, checked against the patches and tests."""
    d = os.path.join(SOLUTIONS, lab.name, "mutants")
    where = os.path.relpath(os.path.join(d, "index.json"), ROOT)
    if not os.path.isfile(os.path.join(d, "index.json")):
        return []
    index = read_json(os.path.join(d, "index.json"))
    if not isinstance(index, list):
        raise Fail(f"{where}: must be a list of {{name, description, killed_by}}")
    out, names = [], lab.names()
    for i, e in enumerate(index):
        if not isinstance(e, dict) or set(e) != set(ENTRY_KEYS) or \
                any(not isinstance(e[k], t) for k, t in ENTRY_KEYS.items()):
            raise Fail(f"{where}: [{i}] must have exactly name (str), description (str), "
                       f"killed_by (list)")
        for k in e["killed_by"]:
            if k not in names:
                raise Fail(f"{where}: {e['name']}: killed_by '{k}' is no test of {lab.name}")
        patch = os.path.join(d, e["name"] + ".patch")
        if not os.path.isfile(patch):
            raise Fail(f"{where}: {e['name']}: no {os.path.relpath(patch, ROOT)}")
        out.append(Mutant(lab, e, patch))
    listed = {m.name + ".patch" for m in out}
    for f in sorted(os.listdir(d)):
        if f.endswith(".patch") and f not in listed:
            raise Fail(f"{where}: {f} is not listed in the index")
    return out


def check(mu):
    """'' if MU's patch applies cleanly to solutions/ (git apply --check), else why."""
    r = subprocess.run(["git", "apply", "--check", f"--directory=solutions/{mu.lab.name}",
                        mu.patch], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, stdin=subprocess.DEVNULL)
    return r.stdout.strip().replace("\n", " | ") if r.returncode else ""


def apply(mu, copy):
    """Apply MU to COPY (a copy of solutions/); '' or why it did not apply."""
    r = subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch", "-d",
                        os.path.join(copy, mu.lab.name), "-i", mu.patch],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL)
    return r.stdout.strip().replace("\n", " | ") if r.returncode else ""


def changed_lines(mu):
    """{file (relative to the lab's folder): [line numbers]} of the solution
    lines MU's patch removes or inserts before."""
    out, rel, line = {}, None, 0
    with open(mu.patch) as f:
        for ln in f.read().splitlines():
            if ln.startswith("+++ b/"):
                rel = ln[6:].strip()
            elif ln.startswith("@@") and rel:
                line = int(re.match(r"@@ -(\d+)", ln).group(1))
            elif rel and ln.startswith("-") and not ln.startswith("---"):
                out.setdefault(rel, []).append(line)
                line += 1
            elif rel and ln.startswith("+"):
                out.setdefault(rel, []).append(line)
            elif rel and ln.startswith(" "):
                line += 1
    return out


def todos(mu):
    """The TODOs (numbers) whose code MU changes: for each changed line,
    the nearest 'TODO n' above it in the solution file, as a failing test's
    message blames one (student.todo_region())."""
    from .student import todo_region
    out = set()
    for rel, lines in changed_lines(mu).items():
        path = os.path.join(SOLUTIONS, mu.lab.name, rel)
        out |= {n for n in (todo_region(path, max(k, 1))[0] for k in lines) if n is not None}
    return sorted(out)


def mistake_rows(lab):
    """LAB's list of plausible mistakes, one row per mutant: (TODOs, mutant,
    description, deterministic tests that catch it, parallel-tier ones)."""
    rows = []
    for mu in load(lab):
        det = [k for k in mu.killed_by if not is_stress_name(k)]
        rows.append((todos(mu), mu.name, mu.description, det,
                     [k for k in mu.killed_by if is_stress_name(k)]))
    return sorted(rows, key=lambda r: (r[0] or [0], r[1]))


NAME_RE = re.compile(r"[a-z][a-z0-9_-]*")


def patch_text(lab, name, description, killed_by, rel, edited):
    """The patch file for mutant NAME: its header lines and the unified diff
    of solutions/LAB/REL against the file EDITED; None when they are equal."""
    orig = os.path.join(SOLUTIONS, lab.name, rel)
    r = subprocess.run(["diff", "-U3", "--label", f"a/{rel}", "--label", f"b/{rel}", orig,
                        edited], stdout=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    if r.returncode == 0:
        return None
    if r.returncode != 1:
        raise Fail(f"diff {orig} {edited} failed")
    return (f"mutant {name}: {description}\nkilled by: {', '.join(killed_by)}\n\n"
            f"diff --git a/{rel} b/{rel}\n" + r.stdout)


def add(lab, name, description, edited, killers, replace=False):
    """Write mutant NAME of LAB (solutions/NN/mutants/NAME.patch, from the
    edited copy EDITED of one of the lab's files) and list it in index.json
    with KILLERS(REL, the lab file it changes) -> the tests that fail, which
    must not be empty:
    a mistake no test sees is a missing test, not a mutant. REPLACE: a
    mutant of that name is made anew (its patch no longer applies once the
    solution changed). Nothing is written unless every check passed."""
    d = os.path.join(SOLUTIONS, lab.name, "mutants")
    rels = [f for f in lab.files if os.path.basename(f) == os.path.basename(edited)]
    rel = rels[0] if len(rels) == 1 else os.path.basename(edited)
    if not NAME_RE.fullmatch(name):
        raise Fail(f"mutant name '{name}': use lower case letters, digits, _ and - "
                   f"(e.g. count_starts_at_zero)")
    if rel not in lab.files:
        raise Fail(f"{edited}: name it as the solution file it changes "
                   f"({', '.join(lab.files)})")
    if os.path.exists(os.path.join(d, name + ".patch")) and not replace:
        raise Fail(f"{lab.name} already has a mutant {name}: choose another name (--force "
                   f"makes it anew from this copy)")
    if not description.strip():
        raise Fail("--description: say in one sentence what the mistake is")
    probe = patch_text(lab, name, description, [], rel, edited)
    if probe is None:
        raise Fail(f"{edited} is the same as solutions/{lab.name}/{rel}: edit the copy first")
    killed_by = killers(rel)
    if not killed_by:
        raise Fail(f"mutant {name} survives every test of {lab.name}: no test sees this "
                   f"mistake. Write the test that does first, then add the mutant", 1)
    os.makedirs(d, exist_ok=True)
    index = os.path.join(d, "index.json")
    entries = read_json(index) if os.path.isfile(index) else []
    entries = [e for e in entries if e.get("name") != name]
    entries.append({"name": name, "description": description, "killed_by": killed_by})
    with open(os.path.join(d, name + ".patch"), "w") as f:
        f.write(patch_text(lab, name, description, killed_by, rel, edited))
    with open(index, "w") as f:
        f.write(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
    return killed_by
