#!/usr/bin/env bash
# Gradescope autograder image setup (Ubuntu base image): install the
# workbook's packages and build it once, so that each submission only
# rebuilds the student files. The autograder zip holds this whole folder's
# repository (make it with grading/gradescope/make-zip.sh).
set -euo pipefail
cd /autograder/source
./workbook setup </dev/null
