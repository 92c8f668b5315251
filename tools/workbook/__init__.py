"""workbook - the RCU Labs command (run it as ./workbook; see --help).

Rule kept here: nothing about a particular lab is written in this package.
Every lab is found under labs/NN-name/ and described by its lab.json
(files, uses, modules, tests with points, hints), read by manifest.py alone.
Results always come from Criterion's own report file (--json=FILE), never
from what the tested code prints; a test passes only if the runner recorded
it as PASSED. Nothing is deleted or overwritten without --force.
Standard library only (Debian 12's python3).

Modules, by seam:
  common    paths, Fail, say/warn          manifest  labs and lab.json (the one loader)
  build     configure, build, first_error  run       Criterion binaries, their reports
  reports   text/json/gradescope/junit     grade     staging, grading, batch
  student   status/check/hint/watch        starters  gen-starters
  handout   the student copy               maint     setup/bench/docs/selftest
  cli       the parser; --help written from it
  newlab    new-lab's skeleton (left out of a handout)
  cmakefrag what CMake needs of a manifest     ctest     CTest discovery
"""
