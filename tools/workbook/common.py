"""Paths, the worker count, and the one-line error every command reports.

Rule kept here: a user-facing error is a Fail (one line, an exit status);
nothing else in the package prints a traceback to a student.
"""
import os
import sys


TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TOOLS)
LABS = os.path.join(ROOT, "labs")
SOLUTIONS = os.path.join(ROOT, "solutions")
JOBS = max(1, min(os.cpu_count() or 2, 4))


class Fail(Exception):
    """A user-facing error: one line, exit status 2 (or .code)."""

    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


def say(*a, **k):
    print(*a, **k, flush=True)


def warn(msg):
    print(f"workbook: {msg}", file=sys.stderr, flush=True)
