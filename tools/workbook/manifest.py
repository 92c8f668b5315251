"""Labs and their lab.json: the one loader every command uses.

Rule kept here: lab.json is read only here, and only as the schema below
allows. A missing or mistyped key, a wrong type, points that do not add up
to 100, a test without a hint, or a hint citing a TODO the lab's starter
does not hold fails loudly, in one line naming the file and the key, before
any command does anything. Defaults (a test's timeout, its visibility) are
stated once, here.

lab.json, format 1:
  name        str, the lab's folder name            (required)
  label       str, labN: CTest label, target prefix  (required)
  title       str                                    (required)
  files       [str], the student's files             (required, non-empty)
  api         {defines: [str], calls?: [str], header_macros?: [str]}: what
              the student's object files may define globally, what they may
              call beyond the kernel's <linux/...> API and the "defines" of
              the labs used, and which macros a student header may define
              (tools/workbook/objcheck.py checks it on the compiler's output;
              required)
  uses        [str], earlier labs linked             (optional, default [])
  modules     [{name, source, lab?, dir?: "tests"}]  (optional, default [])
  tests       [{name: "suite/test", points: int, hint: str,
                timeout?: seconds (DEFAULT_TIMEOUT), visibility?: str}]
  hidden_tests {count: int, points: int}: a handout's stand-in for the
              tests whose visibility is "hidden" (their names and hints stay
              with the instructor; ./workbook handout writes it; optional,
              and then no test may be "hidden")
  hints       [str], layered hints for ./workbook hint (required, non-empty)
              A handout seals every hint but the first level (a test's
              "hint" and hints[1:]): "sealed:" and the text in base64, so
              that a student who opens lab.json does not read an answer by
              accident; the loader unseals them (seal(), unseal())
  check_seeds int, 1..SEEDS: how many seeds each seed sweep runs in the
              student's check, status and watch (optional; default: all
              SEEDS, what grade and selftest always run)
  race_watch  bool: the simulated kernel watches student code's plain
              accesses for data races, as KCSAN does (common/src/watch.c;
              optional, default false while the memory model is turned on
              lab by lab)
  late_stores bool: student code's plain stores outlive the function that
              made them (sim_config::late_stores; optional, default false)
  early_loads bool: student code's loads may return older values, within
              coherence and barriers (sim_config::early_loads; optional,
              default false)
  real        {"modules": [{"name", "source"}], "cmdline", "about"}: the lab runs on
              a real Linux kernel too (./workbook check N --real,
              tools/workbook/real.py): each module is built as a real
              NAME.ko from SOURCE (one of "files", the student's, or a given
              module of the lab's tests/, always the workbook's copy) and the
              given files of the lab's real/ folder (its real.h, if any, is
              read before SOURCE's first line); real/scenario.sh loads
              them; "cmdline" adds to the kernel's command line, "about"
              says in a sentence what the run shows (both optional)
  format      1                                      (required)
"""
import base64
import difflib
import json
import os
import re

import gen_starter
from .common import Fail, LABS, ROOT, SOLUTIONS

FORMAT = 1
DEFAULT_TIMEOUT = 60          # seconds a test may run, unless its "timeout" says
SEEDS = 20                    # seeds per sweep (common/src/test.c, sim_seeds_count())
VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")

# key: (type, required); a type of list means "a list of that"
TOP_KEYS = {"format": (int, True), "name": (str, True), "label": (str, True),
            "title": (str, True), "api": (dict, True), "files": ([str], True), "uses": ([str], False),
            "modules": ([dict], False), "tests": ([dict], True), "hints": ([str], True),
            "check_seeds": (int, False), "race_watch": (bool, False), "late_stores": (bool, False), "early_loads": (bool, False),
            "hidden_tests": (dict, False), "real": (dict, False), "findings": ([dict], False)}
TEST_KEYS = {"name": (str, True), "points": (int, True), "hint": (str, True),
             "timeout": ((int, float), False), "visibility": (str, False)}
API_KEYS = {"defines": ([str], True), "calls": ([str], False), "header_macros": ([str], False)}
HIDDEN_KEYS = {"count": (int, True), "points": (int, True)}
MODULE_KEYS = {"name": (str, True), "source": (str, True), "lab": (str, False),
               "dir": (str, False)}
REAL_KEYS = {"modules": ([dict], True), "cmdline": (str, False), "about": (str, False)}
REAL_MODULE_KEYS = {"name": (str, True), "source": (str, True)}
# A kernel BUG whose site is not its cause ("a callback list still links
# it" is found where callbacks are invoked, made where lists are spliced):
# the TODOs that failure sends the student to, in this lab.
FINDING_KEYS = {"bug": (str, True), "todos": ([int], True)}
SEALED = "sealed:"


def seal(text):
    """TEXT as a handout's lab.json keeps a hint: not readable at a glance."""
    return SEALED + base64.b64encode(text.encode()).decode()


def unseal(text):
    """A hint as written by seal(), or as the instructors' lab.json has it."""
    if not text.startswith(SEALED):
        return text
    try:
        return base64.b64decode(text[len(SEALED):], validate=True).decode()
    except ValueError:
        return text


TODO_CITE = re.compile(r"\bTODOs?\s+(\d+(?:\s*(?:,|-|–|to|and)\s*\d+)*)")
TODO_MARK = re.compile(r"\bTODO (\d+)\b")
# A TODO's own comment ("/* TODO 3: ...", " * TODO 7 (helper): ..."), not a
# comment that cites one ("... with TODO 1's rcu_barrier()", "(TODO 2)").
TODO_OPENS = re.compile(r"\bTODO (\d+)(?: \([^)]*\))?:")


def read_json(path):
    """The JSON document at PATH; Fail, naming the file, if unreadable or invalid."""
    where = os.path.relpath(path, ROOT)
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise Fail(f"{where}: cannot be read: {e.strerror}")
    except ValueError as e:
        raise Fail(f"{where}: not valid JSON: {e}")


def _type_name(t):
    if isinstance(t, list):
        return f"a list of {_type_name(t[0])}"
    if isinstance(t, tuple):
        return "a number"
    return {str: "a string", int: "an integer", dict: "an object"}[t]


def _is(value, t):
    if isinstance(t, list):
        return isinstance(value, list) and all(_is(v, t[0]) for v in value)
    if t in (int, (int, float)) and isinstance(value, bool):
        return False
    return isinstance(value, t)


def check_keys(where, obj, schema):
    """Raise Fail for an unknown, missing or mistyped key of OBJ."""
    if not isinstance(obj, dict):
        raise Fail(f"{where}: must be an object")
    for k in obj:
        if k not in schema:
            near = difflib.get_close_matches(k, schema, 1)
            fix = f"did you mean '{near[0]}'?" if near else f"known keys: {', '.join(schema)}"
            if k == "mutants":
                fix = "mutants live in solutions/NN-*/mutants/ since format 1: remove it"
            raise Fail(f"{where}: unknown key '{k}': {fix}")
    for k, (t, required) in schema.items():
        if k not in obj:
            if required:
                example = ': add "format": 1' if k == "format" else ""
                raise Fail(f"{where}: missing key '{k}' ({_type_name(t)}){example}")
        elif not _is(obj[k], t):
            raise Fail(f"{where}: '{k}' must be {_type_name(t)}")


def cited_todos(text):
    """The TODO numbers TEXT cites: 'TODO 3', 'TODOs 1, 2', 'TODOs 6-8', 'TODOs 4 to 8'."""
    out = set()
    for m in TODO_CITE.finditer(text):
        for a, b in re.findall(r"(\d+)(?:\s*(?:-|–|to)\s*(\d+))?", m.group(1)):
            out.update(range(int(a), int(b or a) + 1))
    return out


def starter_todos(name, files):
    """The TODO numbers the lab's starter holds (derived from solutions/), or
    None where this copy has no solution to derive it from (a handout, whose
    labs/ files are the student's own work)."""
    found = set()
    for f in files:
        try:
            with open(os.path.join(SOLUTIONS, name, f)) as fh:
                text = gen_starter.starter(fh.read(), f)
        except (OSError, gen_starter.MarkerError):
            return None
        found.update(int(n) for n in TODO_MARK.findall(text))
    return found


def validate(where, m, folder):
    """Every check of lab.json format 1; raise Fail naming the first problem."""
    check_keys(where, m, TOP_KEYS)
    if m["format"] != FORMAT:
        raise Fail(f"{where}: 'format' is {m['format']}; this workbook reads format {FORMAT}")
    if m["name"] != folder:
        raise Fail(f"{where}: 'name' is '{m['name']}', not the folder's '{folder}'")
    if not re.fullmatch(r"lab\d+", m["label"]):
        raise Fail(f"{where}: 'label' must be labN, not '{m['label']}'")
    for k in ("files", "tests", "hints"):
        if not m[k]:
            raise Fail(f"{where}: '{k}' is empty")
    check_keys(f"{where}: api", m["api"], API_KEYS)
    for i, mod in enumerate(m.get("modules", [])):
        check_keys(f"{where}: modules[{i}]", mod, MODULE_KEYS)
        if mod.get("dir", "tests") != "tests":
            raise Fail(f"{where}: modules[{i}]: 'dir' may only be \"tests\"")
    if "real" in m:
        check_keys(f"{where}: real", m["real"], REAL_KEYS)
        for i, mod in enumerate(m["real"]["modules"]):
            check_keys(f"{where}: real: modules[{i}]", mod, REAL_MODULE_KEYS)
            if mod["source"] not in m["files"] and not mod["source"].startswith("tests/"):
                raise Fail(f"{where}: real: modules[{i}]: '{mod['source']}' is neither one of "
                           f"the lab's 'files' nor a given module in its tests/")
    for i, f in enumerate(m.get("findings", [])):
        check_keys(f"{where}: findings[{i}]", f, FINDING_KEYS)
        if not f["bug"].strip() or not f["todos"]:
            raise Fail(f"{where}: findings[{i}]: needs the BUG's words and at least one TODO")
    seen = set()
    for i, t in enumerate(m["tests"]):
        at = f"{where}: tests[{i}]"
        check_keys(at, t, TEST_KEYS)
        if not re.fullmatch(r"[A-Za-z_]\w*/[A-Za-z_]\w*", t["name"]):
            raise Fail(f"{at}: 'name' must be suite/test, not '{t['name']}'")
        if t["name"] in seen:
            raise Fail(f"{at}: test '{t['name']}' is listed twice")
        seen.add(t["name"])
        if t["points"] < 0 or not t["hint"].strip():
            raise Fail(f"{at} ({t['name']}): needs points >= 0 and a hint")
        if t.get("timeout", DEFAULT_TIMEOUT) <= 0:
            raise Fail(f"{at} ({t['name']}): 'timeout' must be > 0 seconds")
        if t.get("visibility", "visible") not in VISIBILITY:
            raise Fail(f"{at} ({t['name']}): 'visibility' must be one of {', '.join(VISIBILITY)}")
    if not 1 <= m.get("check_seeds", SEEDS) <= SEEDS:
        raise Fail(f"{where}: 'check_seeds' must be 1..{SEEDS}, not {m['check_seeds']}")
    total = sum(t["points"] for t in m["tests"])
    if "hidden_tests" in m:
        h = m["hidden_tests"]
        check_keys(f"{where}: hidden_tests", h, HIDDEN_KEYS)
        if h["count"] < 1 or h["points"] < 0:
            raise Fail(f"{where}: hidden_tests needs count >= 1 and points >= 0")
        if any(t.get("visibility") == "hidden" for t in m["tests"]):
            raise Fail(f"{where}: hidden_tests stands in for the hidden tests: list them "
                       f"or count them, not both")
        total += h["points"]
    if total != 100:
        raise Fail(f"{where}: tests' points add up to {total}, not 100")
    check_todos(where, m, folder)


def check_todos(where, m, folder):
    have = starter_todos(folder, m["files"])
    if have is None:
        return
    texts = [(f"tests '{t['name']}' hint", unseal(t["hint"])) for t in m["tests"]] + \
        [(f"hints[{i}]", unseal(h)) for i, h in enumerate(m["hints"])]
    for t in m["tests"]:
        if not cited_todos(unseal(t["hint"])):
            raise Fail(f"{where}: tests '{t['name']}' hint names no TODO: say which TODO "
                       f"the failure is about (e.g. 'TODO 3')")
    texts += [(f"findings[{i}]", f"TODO {', '.join(map(str, f['todos']))}")
              for i, f in enumerate(m.get("findings", []))]
    for what, text in texts:
        missing = sorted(cited_todos(text) - have)
        if missing:
            cites, holds = (", ".join(map(str, x)) for x in (missing, sorted(have)))
            raise Fail(f"{where}: {what} cites TODO {cites}, which the starter does not "
                       f"hold (it has TODO {holds})")


HINT_CALL = re.compile(r"\b([A-Za-z_]\w*)\(\)")


def hint_call_problems(lab):
    """The calls 'name()' a hint of LAB names that exist nowhere the student
    can look: not in the lab's solution (or, in a handout, its files), its
    tests, the solutions of the labs it uses, nor common/include. Each as
    'where: name()'. A hint must not send a student after a call that the
    code never makes."""
    texts = []
    dirs = [os.path.join(SOLUTIONS, n) for n in [lab.name] + lab.uses] + \
        [lab.dir, os.path.join(ROOT, "common", "include")]
    for d in dirs:
        for dp, _, fs in os.walk(d):
            for f in fs:
                if f.endswith((".c", ".h")):
                    try:
                        with open(os.path.join(dp, f), errors="replace") as fh:
                            texts.append(fh.read())
                    except OSError:
                        pass
    known = set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(texts)))
    out = []
    for where, text in [(f"tests '{t['name']}' hint", t["hint"]) for t in lab.tests] + \
            [(f"hints[{i}]", h) for i, h in enumerate(lab.hints)]:
        out += [f"{where}: {c}()" for c in HINT_CALL.findall(text) if c not in known]
    return out


class Lab:
    """One lab, as its lab.json describes it (validated)."""

    def __init__(self, path):
        self.dir = path
        self.name = os.path.basename(path)
        where = os.path.relpath(os.path.join(path, "lab.json"), ROOT)
        m = read_json(os.path.join(path, "lab.json"))
        validate(where, m, self.name)
        self.m = m
        self.label = m["label"]
        self.title = m["title"]
        self.files = list(m["files"])
        self.api = dict(m["api"])
        self.uses = list(m.get("uses", []))
        self.modules = list(m.get("modules", []))
        # What runs on a real kernel (--real): modules built from student
        # files, the kernel's command line beyond the workbook's own.
        self.real_modules = list(m.get("real", {}).get("modules", []))
        self.real_cmdline = m.get("real", {}).get("cmdline", "")
        self.real_about = m.get("real", {}).get("about", "")
        # Only given modules (lab 5's): the run shows the lab's story on the
        # kernel's own code, the same for every student.
        self.real_given = bool(self.real_modules) and \
            not any(mod["source"] in self.files for mod in self.real_modules)
        self.tests = [dict(t, hint=unseal(t["hint"])) for t in m["tests"]]
        self.hints = [unseal(h) for h in m["hints"]]
        self.findings = [dict(f, bug=unseal(f["bug"])) for f in m.get("findings", [])]
        self.check_seeds = m.get("check_seeds", SEEDS)
        self.target = f"{self.label}_tests"
        # A handout's lab.json counts its hidden tests instead of listing them.
        self.hidden_summary = m.get("hidden_tests")
        self.max_points = sum(t["points"] for t in self.tests) + \
            (self.hidden_summary["points"] if self.hidden_summary else 0)

    def test(self, name):
        for t in self.tests:
            if t["name"] == name:
                return t
        return None

    def builds_on(self):
        """The earlier labs this lab's tests run: those it links ("uses") and
        those whose modules it loads ("modules" with a "lab")."""
        return self.uses + [m["lab"] for m in self.modules
                            if m.get("lab", self.name) not in self.uses + [self.name]]

    def names(self):
        """The lab's graded tests (suite/name), in the manifest's order."""
        return [t["name"] for t in self.tests]

    def timeouts(self):
        """{suite/name: seconds} for every test (DEFAULT_TIMEOUT unless it says)."""
        return {t["name"]: t.get("timeout", DEFAULT_TIMEOUT) for t in self.tests}


def all_labs():
    """Every lab under labs/, each lab.json validated; the first problem fails."""
    if not os.path.isdir(LABS):
        raise Fail(f"no labs/ folder in {ROOT}")
    out = []
    for d in sorted(os.listdir(LABS)):
        p = os.path.join(LABS, d)
        if re.match(r"^\d\d-", d) and os.path.isfile(os.path.join(p, "lab.json")):
            out.append(Lab(p))
    names = {l.name for l in out}
    for lab in out:
        for u in lab.uses + [m["lab"] for m in lab.modules if "lab" in m]:
            if u not in names:
                raise Fail(f"labs/{lab.name}/lab.json: uses '{u}', which is no lab folder")
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
