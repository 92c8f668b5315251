#!/bin/sh
# screenshot.sh - open pages of the generated HTML in headless Chromium, as a
# reader would, and save a screenshot of each.
# Usage: docs/screenshot.sh HTML_DIR OUT_DIR PAGE.html [PAGE.html ...]
set -eu
html=$(cd "$1" && pwd); out=$2; shift 2
mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
for page in "$@"; do
	name=$(basename "$page" .html)
	timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update \
		--disable-sync --no-first-run --user-data-dir="$profile" \
		--hide-scrollbars --window-size=1280,1600 --virtual-time-budget=5000 \
		--screenshot="$out/$name.png" "file://$html/$page" >/dev/null 2>&1
	echo "$out/$name.png"
done
