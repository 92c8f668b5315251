"""The command line: ./workbook --help.

Rule kept here: the parser is the one description of the commands. --help
is written from it: each command's synopsis is argparse's own usage line,
beside the sentence that says what it does, so the two cannot drift apart.
"""
import argparse
import sys
import textwrap

from .common import Fail, warn
from .grade import cmd_grade
from .handout import cmd_handout
from .maint import cmd_bench, cmd_docs, cmd_mistakes, cmd_new_mutant, cmd_selftest, cmd_setup
from .soak import cmd_soak
from .starters import cmd_gen_starters
from .student import cmd_check, cmd_hint, cmd_status, cmd_watch

WIDTH = 100        # --help's lines
SYNOPSIS = 28      # a synopsis longer than this puts its description on the next line

FOOTER = """LAB is a lab's folder name (01-synchronize-rcu), its number (1) or label (lab1).
--prior solutions builds a lab on the released reference of the earlier labs (default own: your
own earlier labs).
Environment: WORKBOOK_SEED=N replays one seed; WORKBOOK_SEEDS=N sets how many run;
WORKBOOK_GRADE_CHECK_CODE=0 grades without the code check (the containment tests' switch).
"""


def cmd_new_lab(a):
    """new-lab: a maintainer's command, left out of a handout (handout.py)."""
    try:
        from .newlab import cmd_new_lab as new_lab
    except ImportError:
        raise Fail("new-lab is a maintainer's command: run it in the workbook's own "
                   "repository, not in a handout", 2)
    return new_lab(a)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Fail(f"{message} (see ./workbook --help)")

    def print_help(self, file=None):
        sys.stdout.write(help_text(self) if hasattr(self, "groups") else
                         "\n".join(command_help(self)) + "\n")

    def _get_formatter(self):
        # One unwrapped usage line: help_text() wraps it.
        return argparse.HelpFormatter(self.prog, width=10000)


def prior(s):
    s.add_argument("--prior", choices=["own", "solutions"], default="own")


def one_lab(s, test=True):
    s.add_argument("lab", metavar="LAB")
    if test:
        s.add_argument("--test", metavar="SUITE/NAME")


def some_labs(s):
    s.add_argument("labs", nargs="*", metavar="LAB")


def flags(s, *names):
    for name in names:
        s.add_argument(name, action="store_true")


def student_commands(cmd):
    cmd("setup", cmd_setup, "install what is missing (apt-get; sudo when not root), then build")
    s = cmd("status", cmd_status,
            "the board: each lab's tests passed/total, points, next failing test + hint (a lab "
            "whose files and tests did not change shows its last result)")
    prior(s)
    some_labs(s)
    s = cmd("check", cmd_check,
            "run one lab: each failure with its cause (assertion or BUG, where, which task), the "
            "command that replays it and its timeline; the parallel stress tests run once the "
            "others pass (--all: always); --verbose shows each test's own output; --list lists "
            "the tests; code the grader refuses (not the lab's API) is named first, in one line; "
            "--real: the lab's module on a real Linux kernel in QEMU instead, up to N boots "
            "(default 3), stopping at the first failure")
    one_lab(s)
    flags(s, "--all")
    s.add_argument("-v", "--verbose", action="store_true")
    flags(s, "--list", "--real")
    s.add_argument("--boots", type=int, default=None, metavar="N")
    prior(s)
    s = cmd("hint", cmd_hint, "layered hints: one more each time (or hints 1..N); "
            "--test: the hint of one test, once it has failed")
    one_lab(s, test=False)
    s.add_argument("n", nargs="?", type=int, metavar="N")
    s.add_argument("--test", metavar="SUITE/NAME")
    s = cmd("watch", cmd_watch, "re-run check whenever a file of the lab is saved (Ctrl-C stops)")
    one_lab(s)
    prior(s)
    s.add_argument("--once", action="store_true", help=argparse.SUPPRESS)


def instructor_commands(cmd):
    s = cmd("grade", cmd_grade,
            "grade a submission (--impl: a copy of labs/, or a tree holding one), or with --batch "
            "every entry of DIR (--out DIR gets grades.csv, a row each, plus reports; -j N at "
            "once); --lab-budget: a lab's tests may use SECONDS of CPU time on each CPU (default "
            "120) and 3 x SECONDS on the wall clock; --slot N grades in build folder "
            "build-wb-grade-PRIOR-N (default 0; a batch with -j J takes N..N+J-1): two grade "
            "commands at once need different slots (a busy one is refused); --real N: each "
            "lab's module also built and booted N times on a real kernel, in the sandbox too, "
            "and reported beside its score, never graded (its verdicts come from a kernel the "
            "submission's code runs in). Submission code always runs sandboxed "
            "(docs/instructors.md)")
    s.add_argument("--impl", metavar="DIR")
    prior(s)
    s.add_argument("--format", choices=["text", "json", "gradescope", "junit"], default="text")
    s.add_argument("--out", metavar="FILE|DIR")
    flags(s, "--force")
    s.add_argument("--batch", metavar="DIR")
    s.add_argument("-j", "--jobs", type=int, default=1, metavar="N")
    s.add_argument("--lab-budget", type=float, default=None, metavar="SECONDS")
    s.add_argument("--slot", type=int, default=0, metavar="N")
    s.add_argument("--real", type=int, default=0, metavar="N")
    some_labs(s)
    s = cmd("handout", cmd_handout,
            "the student distribution (no solutions/, quiz answers, mutants): what git tracks; "
            "refused while a course file is not in git (--force: leave such files out); "
            "--release LAB... adds those labs' solutions")
    flags(s, "--force")
    s.add_argument("--release", nargs="+", metavar="LAB")
    s.add_argument("out", metavar="OUT")


def maintainer_commands(cmd):
    s = cmd("selftest", cmd_selftest,
            "prove the workbook: solutions pass, starters fail, mutants caught, starters "
            "generated, valgrind, asan and tsan clean (not with --quick), docs build (CI runs "
            "this); LAB...: only those labs and the ones they build on (no grading containment, "
            "no docs)")
    flags(s, "--quick")
    some_labs(s)
    s = cmd("soak", cmd_soak,
            "the solutions' tests N times each (default 20) in each mode (CTest --repeat "
            "until-fail): flaky tests show up here")
    s.add_argument("--runs", type=int, default=20, metavar="N")
    s.add_argument("--modes", default="deterministic,pct,parallel", metavar="MODE,...")
    some_labs(s)
    s = cmd("gen-starters", cmd_gen_starters,
            "derive labs/NN/* from solutions/NN/* (BEGIN/END SOLUTION, STARTER:)")
    flags(s, "--check", "--force")
    some_labs(s)
    s = cmd("new-lab", cmd_new_lab,
            "the skeleton of a new lab (manifest, handout, student file with one TODO, its "
            "solution, two tests, a mutant, a quiz) that passes the selftest as it is; "
            "regenerates the Classroom workflow")
    s.add_argument("name", metavar="NN-name")
    s.add_argument("--title", metavar="TEXT")
    s = cmd("new-mutant", cmd_new_mutant,
            "FILE, an edited copy of one of the lab's solution files, becomes "
            "solutions/NN/mutants/NAME.patch with the tests that catch it (refused when none "
            "does; --force makes a mutant of that name anew, e.g. once the solution changed "
            "and its patch no longer applies)")
    one_lab(s, test=False)
    s.add_argument("name", metavar="NAME")
    s.add_argument("--from", dest="from_file", required=True, metavar="FILE")
    s.add_argument("--description", required=True, metavar="TEXT")
    flags(s, "--force")
    s = cmd("mistakes", cmd_mistakes,
            "each lab's plausible mistakes (its mutants) by TODO, with the tests that catch each "
            "(deterministic, or the parallel tier only); --real N: each mistake of a module "
            "also on a real kernel, N boots each, beside the simulation's verdict (--write: "
            "into docs/instructors.md)")
    s.add_argument("--real", type=int, default=0, metavar="N")
    flags(s, "--write")
    some_labs(s)


def reader_commands(cmd):
    s = cmd("docs", cmd_docs, "the generated docs (student edition, or with solutions and answers)")
    flags(s, "--instructor")
    s.add_argument("--out", metavar="DIR")
    s = cmd("bench", cmd_bench,
            "the reference RCU against liburcu and pthread_rwlock; --check: exit 1 when a "
            "target of bench/README is missed beyond its noise band")
    flags(s, "--quick", "--check")
    s.add_argument("--out", metavar="DIR")


GROUPS = [("Students", student_commands), ("Instructors", instructor_commands),
          ("Maintainers", maintainer_commands), ("Readers", reader_commands)]


def build():
    """The parser, with each command's group, text and function attached."""
    p = Parser(prog="workbook", add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    sub = p.add_subparsers(dest="cmd", parser_class=Parser)
    p.groups = {}
    for group, commands in GROUPS:
        def cmd(name, fn, text, group=group):
            s = sub.add_parser(name, add_help=False)
            s.set_defaults(fn=fn)
            s.text = text
            p.groups.setdefault(group, []).append(s)
            return s
        commands(cmd)
    return p, sub


def command_help(s):
    """Command S's lines of --help: its synopsis (argparse's usage, wrapped
    between options, never inside one) and what it does."""
    synopsis = s.format_usage().replace("usage: workbook ", "", 1).strip()
    depth, kept = 0, []
    for c in synopsis:        # a space inside [...] does not break a line
        depth += (c == "[") - (c == "]")
        kept.append("\0" if c == " " and depth else c)
    lines = [l.replace("\0", " ") for l in
             textwrap.wrap("".join(kept), WIDTH - 2, initial_indent="  ",
                           subsequent_indent="        ", break_on_hyphens=False)]
    text = textwrap.wrap(s.text, WIDTH - SYNOPSIS - 2, break_on_hyphens=False)
    if len(lines) == 1 and len(lines[0]) <= SYNOPSIS:
        lines[0] = lines[0].ljust(SYNOPSIS + 2) + text.pop(0)
    return lines + [" " * (SYNOPSIS + 2) + t for t in text]


def help_text(p):
    """--help, from P's commands, group by group."""
    out = ["usage: ./workbook COMMAND [options]", ""]
    for group, parsers in p.groups.items():
        out.append(group)
        for s in parsers:
            out += command_help(s)
    return "\n".join(out) + "\n\n" + FOOTER


def main(argv):
    p, sub = build()
    try:
        if not argv or argv[0] in ("-h", "--help", "help"):
            sys.stdout.write(help_text(p))
            return 0
        if not argv[0].startswith("-") and argv[0] not in sub.choices:
            raise Fail(f"unknown command '{argv[0]}' (see ./workbook --help)")
        if argv[0] in sub.choices and ("-h" in argv[1:] or "--help" in argv[1:]):
            sys.stdout.write("usage: ./workbook " + "\n".join(command_help(sub.choices[argv[0]]))
                             .lstrip() + "\n\n" + FOOTER)
            return 0
        a = p.parse_args(argv)
        if a.help or not a.cmd:
            sys.stdout.write(help_text(p))
            return 0
        return a.fn(a)
    except Fail as e:
        warn(str(e))
        return e.code
    except KeyboardInterrupt:
        return 130
