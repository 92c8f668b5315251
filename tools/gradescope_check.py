"""Check a results.json against Gradescope's autograder specification.

    python3 tools/gradescope_check.py results.json

Fields (Gradescope "Autograder Specifications", results.json): top level
`score` (number; required unless every test has a score), `execution_time`
(number), `output` (string), `visibility` and `stdout_visibility`
(hidden | after_due_date | after_published | visible), `tests` (list),
`leaderboard` (list); each test: `score`, `max_score` (numbers), `status`
(passed | failed), `name`, `name_format`, `number`, `output`,
`output_format`, `tags`, `visibility`, `extra_data`.
"""
import json
import sys

VIS = {"hidden", "after_due_date", "after_published", "visible"}
TOP = {"score", "execution_time", "output", "output_format", "test_output_format",
       "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
       "leaderboard"}
TEST = {"score", "max_score", "status", "name", "name_format", "number", "output",
        "output_format", "tags", "visibility", "extra_data"}


def problems(doc, lab_names=()):
    p = []
    num = (int, float)
    if not isinstance(doc, dict):
        return ["top level is not an object"]
    for k in doc:
        if k not in TOP:
            p.append(f"unknown top-level field '{k}'")
    tests = doc.get("tests", [])
    if "score" not in doc and not all("score" in t for t in tests):
        p.append("no top-level score and a test without score")
    if "score" in doc and (not isinstance(doc["score"], num) or isinstance(doc["score"], bool)):
        p.append("score is not a number")
    for k in ("visibility", "stdout_visibility"):
        if k in doc and doc[k] not in VIS:
            p.append(f"{k} '{doc[k]}' is not one of {sorted(VIS)}")
    if "output" in doc and not isinstance(doc["output"], str):
        p.append("output is not a string")
    if not isinstance(tests, list):
        return p + ["tests is not a list"]
    total = 0
    for i, t in enumerate(tests):
        w = f"tests[{i}]"
        if not isinstance(t, dict):
            p.append(f"{w} is not an object")
            continue
        for k in t:
            if k not in TEST:
                p.append(f"{w}: unknown field '{k}'")
        for k in ("score", "max_score"):
            if k in t and (not isinstance(t[k], num) or isinstance(t[k], bool)):
                p.append(f"{w}: {k} is not a number")
        if "status" in t and t["status"] not in ("passed", "failed"):
            p.append(f"{w}: status '{t['status']}'")
        if "visibility" in t and t["visibility"] not in VIS:
            p.append(f"{w}: visibility '{t['visibility']}'")
        if not isinstance(t.get("name", ""), str) or not isinstance(t.get("output", ""), str):
            p.append(f"{w}: name/output not strings")
        if lab_names and not any(str(t.get("name", "")).startswith(n) for n in lab_names):
            p.append(f"{w}: name '{t.get('name')}' does not begin with a lab's folder name")
        if isinstance(t.get("score"), num) and isinstance(t.get("max_score"), num) \
                and not 0 <= t["score"] <= t["max_score"]:
            p.append(f"{w}: score {t['score']} outside 0..{t['max_score']}")
        total += t.get("score", 0) if isinstance(t.get("score"), num) else 0
    if isinstance(doc.get("score"), num) and abs(doc["score"] - total) > 1e-9 and tests:
        p.append(f"score {doc['score']} is not the sum of the tests' scores {total}")
    return p


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    pr = problems(doc, sys.argv[2:])
    for x in pr:
        print(x)
    print(f"{sys.argv[1]}: {'valid' if not pr else f'{len(pr)} problem(s)'} "
          f"({len(doc.get('tests', []))} tests, score {doc.get('score')})")
    sys.exit(1 if pr else 0)
