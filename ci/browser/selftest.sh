#!/usr/bin/env bash
# Self-test of .ci/browser-test: builds fake report directories in a temp dir (one good, the
# rest each broken in one way) and checks that the checker passes the good one and fails each
# broken one with the expected exit code and message.
# usage: ci/browser/selftest.sh   (from any directory; installs what .ci/browser-test needs)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
check=$root/.ci/browser-test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

svg='<svg xmlns="http://www.w3.org/2000/svg" width="640" height="320" viewBox="0 0 640 320"><rect x="10" y="10" width="200" height="100" fill="steelblue"/><text x="20" y="150">chart</text></svg>'
viewport='<meta name="viewport" content="width=device-width, initial-scale=1">'

# report NAME CHARTS HEAD BODY: writes $tmp/NAME/report.html (HEAD in <head>, BODY in <body>)
# and $tmp/NAME/report.json with CHARTS entries in "charts".
report() {
  local dir=$tmp/$1 n=$2 head=$3 body=$4 entries="" i
  mkdir -p "$dir"
  cat >"$dir/report.html" <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
$head
<title>fake report $1</title>
<style>body{font-family:sans-serif;margin:1em} svg{max-width:100%;height:auto} .scroll{overflow-x:auto}</style>
</head><body>
<h1>Fake report</h1>
$( [ "$1" = no_summary ] || echo '<div id="summary"><p>What to pick: same_key.</p></div>' )
<div class="scroll"><table><tr><th>design</th><th>false success</th></tr><tr><td>no_dedup</td><td>1.2 %</td></tr></table></div>
$body
</body></html>
EOF
  for ((i = 0; i < n; i++)); do
    entries+="${entries:+,}{\"id\":\"chart-$i\",\"model\":\"fake\",\"kind\":\"rates\"}"
  done
  printf '{"schema_version":1,"charts":[%s]}\n' "$entries" >"$dir/report.json"
}

two="<figure id=\"chart-0\">$svg</figure><figure id=\"chart-1\">$svg</figure>"
# Two counterexamples: one with its diagram, one the same run (a link to it).
cx="<ul class=\"cx\"><li id=\"cx-1\">run<details class=\"diagram\"><summary>sequence diagram</summary>$svg</details></li><li id=\"cx-2\">the same run as <a href=\"#cx-1\">the diagram above</a></li></ul>"
report good 2 "$viewport" "$two$cx"
report no_summary 2 "$viewport" "$two"
report tall_summary 2 "$viewport<style>#summary{height:5000px}</style>" "$two"
report inner_scroll 2 "$viewport" "$two<div class=\"scroll\" id=\"wide\"><table style=\"width:2000px\"><tr><td>too wide for a window</td></tr></table></div>"
report cx_without_diagram 2 "$viewport" "$two<ul class=\"cx\"><li id=\"cx-9\">a run, not drawn</li></ul>"
report console_error 2 "$viewport" "$two<script>console.error('boom from the page')</script>"
report page_error 2 "$viewport" "$two<script>throw new Error('kaboom from the page')</script>"
report external_img 2 "$viewport" "$two<img src=\"https://example.com/x.png\" alt=\"x\">"
report external_font 2 "$viewport<style>@font-face{font-family:F;src:url(https://example.com/f.woff2)} h1{font-family:F}</style>" "$two"
report local_stylesheet 2 "$viewport<link rel=\"stylesheet\" href=\"style.css\">" "$two"
echo 'h1{color:red}' >"$tmp/local_stylesheet/style.css"
report count_mismatch 3 "$viewport" "$two"
report no_chart 0 "$viewport" ""
report zero_size_svg 2 "$viewport" "<figure id=\"chart-0\">$svg</figure><figure id=\"chart-1\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"></svg></figure>"
report wide_table 2 "$viewport" "$two<table style=\"width:900px\"><tr><td>too wide for a phone</td></tr></table>"
report wide_chart 2 "$viewport" "<figure id=\"chart-0\">$svg</figure><figure id=\"chart-1\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"200\" style=\"max-width:none\"></svg></figure>"
report no_viewport_meta 2 "" "$two"
report chart_without_figure 2 "$viewport" "<figure id=\"chart-0\">$svg</figure><div>$svg</div>"
report no_json 2 "$viewport" "$two"
rm "$tmp/no_json/report.json"
report bad_json 2 "$viewport" "$two"
echo '{"charts": [' >"$tmp/bad_json/report.json"

passed=0
failed=0
# expect NAME CODE PATTERN [ARGS...]: runs the checker with ARGS (default: the fixture dir)
# and wants exit CODE and PATTERN (an extended regex) in its output.
expect() {
  local name=$1 code=$2 pattern=$3 out rc
  shift 3
  [ $# -gt 0 ] || set -- "$tmp/$name"
  rc=0
  out=$(BROWSER_TEST_OUT="$tmp/out-$name" "$check" "$@" 2>&1) || rc=$?
  if [ "$rc" -eq "$code" ] && grep -Eq -- "$pattern" <<<"$out"; then
    passed=$((passed + 1))
    printf 'ok   %-18s exit %s: %s\n' "$name" "$rc" "$(grep -Em1 -- "$pattern" <<<"$out")"
  else
    failed=$((failed + 1))
    printf 'FAIL %-18s exit %s (want %s and /%s/); output:\n%s\n' "$name" "$rc" "$code" "$pattern" "$out"
  fi
}

expect good 0 '2 charts and 1 sequence diagrams rendered'
if [ -s "$tmp/out-good/report-screenshot.png" ] && [ -s "$tmp/out-good/report-phone.png" ]; then
  passed=$((passed + 1))
  echo "ok   good               both screenshots written"
else
  failed=$((failed + 1))
  echo "FAIL good               screenshots missing in $tmp/out-good"
fi
expect no_summary 1 'no #summary element'
expect tall_summary 1 'the summary \(#summary\) is 5000 px tall at 1400 px wide'
expect inner_scroll 1 'at 1400 px wide something scrolls sideways: <div#wide>: content 2000 px wide'
expect cx_without_diagram 1 'counterexample cx-9 has no sequence diagram'
expect console_error 1 'console error: boom from the page'
expect page_error 1 'uncaught exception in the page: .*kaboom from the page'
expect external_img 1 'not self-contained: it requested image https://example\.com/x\.png'
expect external_font 1 'not self-contained: it requested font https://example\.com/f\.woff2'
expect local_stylesheet 1 'not self-contained: it requested stylesheet file://.*/style\.css'
expect count_mismatch 1 '2 <svg> elements but report\.json lists 3 charts'
expect no_chart 1 'no <svg> element'
expect zero_size_svg 1 '<svg> number 2 .*renders 0 x 0 px'
expect wide_table 1 'scrolls horizontally .*<table> 900 px wide'
expect wide_chart 1 'scrolls horizontally .*<svg> 800 px wide'
expect chart_without_figure 1 'chart chart-1 of report\.json is not a <figure id> holding one <svg>'
expect no_viewport_meta 1 'no <meta name="viewport"'
expect no_json 1 'report\.json: no such file'
expect bad_json 1 'report\.json: cannot read it as JSON'
expect missing_dir 2 'no report directory' "$tmp/does-not-exist"
expect two_args 2 'usage' "$tmp/good" "$tmp/good"

echo "selftest: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
