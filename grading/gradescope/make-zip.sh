#!/usr/bin/env bash
# Make the Gradescope autograder zip: the workbook's tracked files (solutions/
# included: they stay on Gradescope's side) with setup.sh and run_autograder
# at the zip's top level, as Gradescope requires.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-autograder.zip}
case $out in /*) ;; *) out=$PWD/$out ;; esac
[ -e "$out" ] && { echo "make-zip: $out exists" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive --format=tar --prefix=source/ HEAD | tar -x -C "$tmp"
cp "$root/grading/gradescope/setup.sh" "$root/grading/gradescope/run_autograder" "$tmp/"
# Gradescope unpacks the zip into /autograder/source: the workbook is at its top.
(cd "$tmp/source" && cp ../setup.sh ../run_autograder . && zip -qr "$out" .)
echo "wrote $out"
