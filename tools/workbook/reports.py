"""Grade reports: text, JSON, Gradescope, JUnit."""
import copy
import io
import json
import os
import sys
import xml.etree.ElementTree as ET

from .common import Fail
from .run import junit_cases, score_lab


def report_text(results, title=None, isolation=None):
    o = io.StringIO()
    if title:
        o.write(f"# {title}\n")
    if isolation:
        o.write(f"# isolation: {isolation}\n")
    tot = mx = 0
    for r in results:
        lab = r["lab"]
        o.write(f"== {lab.name}: {lab.title} ==\n")
        if r["error"]:
            o.write(f"   0 points: {r['error']}\n")
        for t in lab.tests:
            passed, msgs = r["results"].get(t["name"], (False, []))
            p = int(t.get("points", 0))
            o.write(f"== Test {lab.name}: {t['name']} == {'OK' if passed else 'FAIL'} "
                    f"({p if passed else 0}/{p})\n")
            if not passed and not r["error"]:
                for m in msgs:
                    o.write(f"     {m}\n")
        u = r.get("usage")
        o.write(f"Score: {r['score']}/{r['max']}" +
                (f" (its tests ran {u['seconds']:.1f} s and used {u['cpu_seconds']:.1f} of "
                 f"{u['cpu_budget']:.0f} CPU-s)" if u else "") + "\n")
        if "real" in r:
            o.write(f"{REAL_TITLE}: {real_line(r['real'])}\n")
        tot += r["score"]
        mx += r["max"]
    o.write(f"Score: {tot}/{mx} (total)\n")
    return o.getvalue()


REAL_TITLE = ("On a real kernel (reported, not graded: the guest's console, which the "
              "submission's own code can write to)")


def real_line(x):
    """What a lab's real run (grade --real) came to, in a line."""
    if not x["boots"]:
        return x["first"]
    if not x["failed"]:
        return f"clean in {x['boots']} of {x['boots']} boots"
    return f"failed in {x['failed']} of {x['boots']} boots; the first: {x['first']}"


def test_rows(results):
    for r in results:
        lab = r["lab"]
        for t in lab.tests:
            passed, msgs = r["results"].get(t["name"], (False, []))
            if r["error"]:
                msgs = [r["error"]]
            p = int(t.get("points", 0))
            yield lab, t, passed, p if passed else 0, p, "\n".join(msgs)


def report_json(results, isolation=None):
    labs = []
    for r in results:
        labs.append({"name": r["lab"].name, "label": r["lab"].label, "score": r["score"],
                     "max_score": r["max"], "error": r["error"], "usage": r.get("usage"),
                     "real": r.get("real"),
                     "tests": [{"name": t["name"], "passed": ok, "score": s, "max_score": m,
                                "output": out}
                               for lab, t, ok, s, m, out in test_rows([r])]})
    doc = {"score": sum(r["score"] for r in results),
           "max_score": sum(r["max"] for r in results), "labs": labs}
    if isolation:
        doc["isolation"] = isolation
    return json.dumps(doc, indent=2) + "\n"


def report_gradescope(results, secs=None, isolation=None):
    tests = []
    for lab, t, ok, s, m, out in test_rows(results):
        tests.append({"name": f"{lab.name}: {t['name']}", "score": s, "max_score": m,
                      "status": "passed" if ok else "failed", "output": out,
                      "visibility": t.get("visibility", "visible")})
    for r in results:
        if "real" in r:
            x = r["real"]
            tests.append({"name": f"{r['lab'].name}: {REAL_TITLE}", "score": 0, "max_score": 0,
                          "status": "passed" if x["boots"] and not x["failed"] else "failed",
                          "output": real_line(x), "visibility": "visible"})
    doc = {"score": sum(r["score"] for r in results),
           "output": " ".join(f"{r['lab'].name}: {r['score']}/{r['max']}" +
                              (f" ({r['error']})" if r["error"] else "") for r in results) +
                     (f"\nisolation: {isolation}" if isolation else ""),
           "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
    if secs is not None:
        doc["execution_time"] = round(secs)
    return json.dumps(doc, indent=2) + "\n"


def report_junit(results):
    """JUnit XML built from Criterion's own (--xml) test cases, merged across
    runs, one testsuite per lab, each case annotated with its points. A test
    with no case of Criterion's (the lab did not build, a run was killed)
    gets one saying why."""
    root = ET.Element("testsuites", name="rcu-labs")
    for r in results:
        rows = list(test_rows([r]))
        suite = ET.SubElement(root, "testsuite", name=r["lab"].name, tests=str(len(rows)),
                              failures=str(sum(1 for x in rows if not x[2])), errors="0")
        for lab, t, ok, s, m, out in rows:
            suite.append(junit_case(r.get("junit", {}).get(t["name"]), lab, t, ok, s, m, out))
    root.set("tests", str(sum(int(x.get("tests")) for x in root)))
    root.set("failures", str(sum(int(x.get("failures")) for x in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def junit_case(crit, lab, t, ok, s, m, out):
    """Criterion's <testcase> CRIT (or a new one), named lab/test, with points."""
    case = copy.deepcopy(crit) if crit is not None else ET.Element("testcase")
    case.set("classname", lab.name)
    case.set("name", t["name"])
    judged = [e for e in case if e.tag in ("failure", "error")]
    first = out.splitlines()[0] if out else "failed"
    if not ok and not judged:
        ET.SubElement(case, "failure", message=first).text = out
    for e in judged:
        # Criterion's own says only "The test crashed."; ours carries the cause
        if out:
            e.set("message", first)
            e.text = out
    props = ET.Element("properties")
    ET.SubElement(props, "property", name="points", value=str(s))
    ET.SubElement(props, "property", name="max_points", value=str(m))
    case.insert(0, props)
    ET.SubElement(case, "system-out").text = f"{s}/{m} points"
    return case


def lab_result(lab, results=None, logs=(), error=""):
    """One lab's graded result, as every report reads it."""
    results = results or {}
    score = 0 if error else score_lab(lab, results)[0]
    return {"lab": lab, "error": error, "results": results, "score": score,
            "max": lab.max_points, "junit": junit_cases(logs)}


def render(fmt, results, secs=None, title=None, isolation=None):
    return {"text": lambda: report_text(results, title, isolation),
            "json": lambda: report_json(results, isolation),
            "gradescope": lambda: report_gradescope(results, secs, isolation),
            "junit": lambda: report_junit(results)}[fmt]()


def check_out_file(path, force):
    if path is None:
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise Fail(f"--out {path}: folder {parent} does not exist")
    if os.path.isdir(path):
        raise Fail(f"--out {path} is a folder")
    if os.path.exists(path) and not force:
        raise Fail(f"--out {path} exists (--force overwrites it)")


def write_out(path, text):
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(path, "w") as f:
            f.write(text)
