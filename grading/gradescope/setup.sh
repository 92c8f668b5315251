#!/usr/bin/env bash
# Gradescope autograder image setup. Base image: Ubuntu 24.04 (CMake 3.28;
# 22.04's CMake 3.22 is too old for the workbook's presets).
# Installs the workbook's packages and prebuilds exactly the build folder
# that run_autograder reuses (build-wb-grade-$PRIOR-0), so that each
# submission compiles only its own files. The autograder zip holds this
# repository (grading/gradescope/make-zip.sh).
set -euo pipefail
cd /autograder/source
. grading/gradescope/config.sh
export DEBIAN_FRONTEND=noninteractive
pkgs=$(python3 -c 'import sys; sys.path.insert(0, "tools"); from workbook.maint import PACKAGES; print(" ".join(PACKAGES))')
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $pkgs zip
have=$(cmake --version | sed -n 's/^cmake version \([0-9][0-9.]*\).*/\1/p')
if [ "$(printf '%s\n3.25\n' "$have" | sort -V | head -1)" != "3.25" ]; then
	echo "setup.sh: CMake $have is older than 3.25: choose the Ubuntu 24.04 base image in Gradescope's autograder settings" >&2
	exit 1
fi
# The user submission code runs as (Gradescope's images have "student").
id student >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin student
# Grading the starters builds the grading folder completely (the kernel, the
# tests, every lab); the scores are thrown away.
# shellcheck disable=SC2086
WORKBOOK_SANDBOX_USER=student ./workbook grade --impl labs --prior "$PRIOR" --out /tmp/prebuild.txt --force $LABS </dev/null
grep '(total)' /tmp/prebuild.txt
# A lab that does not build here would score 0 for every student: fail the
# image's setup instead, with the line that says why.
if grep -E '^ +0 points: (does not compile|refused|cmake failed)' /tmp/prebuild.txt; then
	echo "setup.sh: the starters do not build in this image (above): not ready to grade" >&2
	exit 1
fi
