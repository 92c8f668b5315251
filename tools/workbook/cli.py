"""The command line: ./workbook --help."""
import argparse
import sys

from .common import Fail, warn
from .grade import cmd_grade
from .handout import cmd_handout
from .maint import cmd_bench, cmd_docs, cmd_mistakes, cmd_new_mutant, cmd_selftest, cmd_setup
from .soak import cmd_soak
from .starters import cmd_gen_starters
from .student import cmd_check, cmd_hint, cmd_status, cmd_watch


HELP = """usage: ./workbook COMMAND [options]

Students
  setup                       install what is missing (apt-get; sudo when not root), then build
  status [--prior own|solutions] [LAB...]
                              the board: each lab's tests passed/total, points, next failing test + hint
                              (a lab whose files and tests did not change shows its last result)
  check LAB [--test SUITE/NAME] [--all] [--verbose] [--list] [--prior own|solutions]
                              run one lab: each failure with its cause (assertion or BUG, where,
                              which task), the command that replays it and its timeline; the
                              parallel stress tests run once the others pass (--all: always);
                              --verbose shows each test's own output; code the grader refuses
                              (not the lab's API) is named first, in one line
  hint LAB [N]                layered hints: one more each time (or hints 1..N)
  watch LAB [--test SUITE/NAME] [--prior own|solutions]
                              re-run check whenever a file of the lab is saved (Ctrl-C stops)
  --prior solutions           build a lab on the released reference of the earlier labs
                              (default own: your own earlier labs)
Instructors
  grade [--impl DIR] [--prior own|solutions] [--format text|json|gradescope|junit]
        [--out FILE] [--force] [LAB...]
                              grade a submission (a copy of labs/, or a tree holding one)
  grade --batch DIR --out DIR [-j N] [--prior ...] [LAB...]
                              grade every entry of DIR: grades.csv (a row each) plus reports
        [--lab-budget SECONDS] a lab's tests may use SECONDS of CPU time on each CPU
                              (default 120) and 3 x SECONDS on the wall clock;
                              submission code always runs sandboxed (docs/instructors.md)
        [--slot N]            grade in build folder build-wb-grade-PRIOR-N (default 0; a batch
                              with -j J takes N..N+J-1): two grade commands at once need
                              different slots (a busy one is refused)
  handout OUT [--release LAB...] [--force]
                              the student distribution (no solutions/, quiz answers, mutants):
                              what git tracks; refused while a course file is not in git
                              (--force: leave such files out)
Maintainers
  selftest [--quick] [LAB...] prove the workbook: solutions pass, starters fail, mutants caught,
                              starters generated, valgrind, asan and tsan clean (not with --quick),
                              docs build (CI runs this); LAB...: only those labs and the ones
                              they build on (no grading containment, no docs)
  soak [--runs N] [--modes deterministic,pct,parallel] [LAB...]
                              the solutions' tests N times each (default 20) in each mode
                              (CTest --repeat until-fail): flaky tests show up here
  gen-starters [--check] [--force] [LAB...]
                              derive labs/NN/* from solutions/NN/* (BEGIN/END SOLUTION, STARTER:)
  new-mutant LAB NAME --from FILE --description TEXT
                              FILE, an edited copy of one of the lab's solution files, becomes
                              solutions/NN/mutants/NAME.patch with the tests that catch it
                              (refused when none does)
  mistakes [LAB...]           each lab's plausible mistakes (its mutants) by TODO, with the
                              tests that catch each (deterministic, or the parallel tier only)
Readers
  docs [--instructor] [--out DIR]
                              the generated docs (student edition, or with solutions and answers)
  bench [--quick] [--check] [--out DIR]
                              the reference RCU against liburcu and pthread_rwlock;
                              --check: exit 1 when a target of bench/README is missed
                              beyond its noise band

LAB is a lab's folder name (01-synchronize-rcu), its number (1) or label (lab1).
Environment: WORKBOOK_SEED=N replays one seed; WORKBOOK_SEEDS=N sets how many run;
WORKBOOK_GRADE_CHECK_CODE=0 grades without the code check (the containment tests' switch).
"""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Fail(f"{message} (see ./workbook --help)")

    def print_help(self, file=None):
        sys.stdout.write(HELP)


def main(argv):
    p = Parser(prog="workbook", add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    sub = p.add_subparsers(dest="cmd", parser_class=Parser)
    sub.add_parser("setup")
    s = sub.add_parser("status")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("check")
    s.add_argument("lab")
    s.add_argument("--test")
    s.add_argument("--list", action="store_true")
    s.add_argument("--all", action="store_true")
    s.add_argument("-v", "--verbose", action="store_true")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s = sub.add_parser("hint")
    s.add_argument("lab")
    s.add_argument("n", nargs="?", type=int)
    s = sub.add_parser("watch")
    s.add_argument("lab")
    s.add_argument("--test")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    s = sub.add_parser("selftest")
    s.add_argument("--quick", action="store_true")
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("grade")
    s.add_argument("--impl")
    s.add_argument("--prior", choices=["own", "solutions"], default="own")
    s.add_argument("--format", choices=["text", "json", "gradescope", "junit"], default="text")
    s.add_argument("--out")
    s.add_argument("--force", action="store_true")
    s.add_argument("--batch")
    s.add_argument("-j", "--jobs", type=int, default=1)
    s.add_argument("--lab-budget", type=float, default=None)
    s.add_argument("--slot", type=int, default=0)
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("handout")
    s.add_argument("out")
    s.add_argument("--release", nargs="+", metavar="LAB")
    s.add_argument("--force", action="store_true")
    s = sub.add_parser("bench")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--check", action="store_true")
    s.add_argument("--out")
    s = sub.add_parser("docs")
    s.add_argument("--instructor", action="store_true")
    s.add_argument("--out")
    s = sub.add_parser("soak")
    s.add_argument("--runs", type=int, default=20)
    s.add_argument("--modes", default="deterministic,pct,parallel")
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("mistakes")
    s.add_argument("labs", nargs="*")
    s = sub.add_parser("new-mutant")
    s.add_argument("lab")
    s.add_argument("name")
    s.add_argument("--from", dest="from_file", required=True)
    s.add_argument("--description", required=True)
    s = sub.add_parser("gen-starters")
    s.add_argument("--check", action="store_true")
    s.add_argument("--force", action="store_true")
    s.add_argument("labs", nargs="*")
    try:
        if not argv:
            sys.stdout.write(HELP)
            return 0
        if argv[0] in ("-h", "--help", "help"):
            sys.stdout.write(HELP)
            return 0
        if not argv[0].startswith("-") and argv[0] not in sub.choices:
            raise Fail(f"unknown command '{argv[0]}' (see ./workbook --help)")
        a = p.parse_args(argv)
        if a.help or not a.cmd:
            sys.stdout.write(HELP)
            return 0
        fn = {"setup": cmd_setup, "status": cmd_status, "check": cmd_check, "hint": cmd_hint,
              "watch": cmd_watch, "selftest": cmd_selftest, "grade": cmd_grade,
              "handout": cmd_handout, "gen-starters": cmd_gen_starters,
              "bench": cmd_bench, "docs": cmd_docs, "soak": cmd_soak,
              "new-mutant": cmd_new_mutant, "mistakes": cmd_mistakes}[a.cmd]
        return fn(a)
    except Fail as e:
        warn(str(e))
        return e.code
    except KeyboardInterrupt:
        return 130
