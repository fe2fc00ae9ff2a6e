#!/bin/bash
# check_report.sh - the HTML benchmark report, rendered and looked at as a reader would:
#   1. bench/report/render.py turns the committed example (bench/results/*.json) into HTML, which
#      must equal the committed rendering (so the example stays current with the template), and
#      `deepgemm-bench --render` (when built) must write the same bytes;
#   2. headless Chromium runs the page's script: the DOM must hold the charts (data-charts >= 4,
#      an <svg> each) and no error box;
#   3. a Chromium screenshot must not be blank: enough distinct colours and non-white pixels.
#   bench/report/check_report.sh <source-dir> <work-dir> [deepgemm-bench]     (CTest: bench_report)
# Exit 77 (skipped) without Chromium or Pillow (.ci/setup installs both).
set -euo pipefail
SRC=$(cd "${1:?usage: check_report.sh <source-dir> <work-dir> [deepgemm-bench]}" && pwd)
WORK=${2:?}
BENCH=${3:-}
PYTHON=${PYTHON:-python3}
die() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK"

shopt -s nullglob
examples=("$SRC"/bench/results/*.json)
[ ${#examples[@]} -gt 0 ] || die "no example under bench/results"
for json in "${examples[@]}"; do
  name=$(basename "$json" .json)
  "$PYTHON" "$SRC/bench/report/render.py" "$json" "$WORK/$name.html"
  cmp -s "$WORK/$name.html" "$SRC/bench/results/$name.html" ||
    die "bench/results/$name.html is not what render.py makes of $name.json now: python3 bench/report/render.py bench/results/$name.json bench/results/$name.html"
  if [ -n "$BENCH" ]; then
    "$BENCH" --render "$json" --html "$WORK/$name.bench.html" >/dev/null
    cmp -s "$WORK/$name.html" "$WORK/$name.bench.html" || die "deepgemm-bench --render and render.py differ"
  fi
  echo "ok: $name.html rendered (render.py${BENCH:+ and deepgemm-bench --render}), equal to the committed one"
done

chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "SKIP: no Chromium (Debian: apt-get install chromium)"; exit 77; }
"$PYTHON" -c "import PIL" 2>/dev/null || { echo "SKIP: no Pillow for $PYTHON (pip install pillow)"; exit 77; }
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$WORK/profile")
for json in "${examples[@]}"; do
  name=$(basename "$json" .json)
  page="file://$WORK/$name.html"
  timeout 120 "$chrome" "${flags[@]}" --dump-dom "$page" >"$WORK/$name.dom" 2>"$WORK/chromium.log" ||
    { tail -5 "$WORK/chromium.log"; die "chromium --dump-dom"; }
  charts=$(sed -n 's/.*data-charts="\([0-9]*\)".*/\1/p' "$WORK/$name.dom" | head -n 1)
  svgs=$(grep -o '<svg' "$WORK/$name.dom" | wc -l)
  [ -n "$charts" ] && [ "$charts" -ge 4 ] || die "the page drew ${charts:-no} charts (its script did not finish?)"
  [ "$svgs" -ge "$charts" ] || die "$svgs <svg> elements for $charts charts"
  if grep -q 'id="error" style="display: block' "$WORK/$name.dom"; then
    die "the page shows an error: $(grep -o 'The report could not be drawn[^<]*' "$WORK/$name.dom")"
  fi
  timeout 120 "$chrome" "${flags[@]}" --window-size=1300,2400 --screenshot="$WORK/$name.png" "$page" \
    >>"$WORK/chromium.log" 2>&1 || { tail -5 "$WORK/chromium.log"; die "chromium --screenshot"; }
  "$PYTHON" - "$WORK/$name.png" <<'PY'
import sys
from PIL import Image
image = Image.open(sys.argv[1]).convert("RGB")
w, h = image.size
counts = image.getcolors(maxcolors=w * h)  # [(count, (r, g, b)), ...]
colours = len(counts)
ink = sum(n for n, rgb in counts if min(rgb) < 235) / (w * h)
print(f"screenshot {w}x{h}: {colours} distinct colours, {ink:.1%} of the pixels not near white")
if colours < 64 or ink < 0.04:
    sys.exit("FAIL: the screenshot looks blank")
PY
  echo "ok: $name: $charts charts, $svgs svg, screenshot $WORK/$name.png"
done
echo "bench_report: all checks passed"
