#!/usr/bin/env bash
# The HTTPLogging run viewer in a real browser: writes a showcase run with the test server (the
# HTTPLoggingTests showcaseRun test, into a temporary folder), opens its index.html in headless
# Chromium through .ci/viewer_check.py, checks the page (rows, bars, filters, the detail pane, no
# script from the data runs, a 0-fetch page, broken and unfinished data) and saves a screenshot.
#
#   bash .ci/viewer-check.sh                      # screenshot: .build-viewer-check/viewer.png
#
# Without Chromium it skips with a reason (exit 0), except with CI=true, where it installs Debian's
# `chromium`. Environment: VIEWER_CHECK_OUT (screenshot folder), VIEWER_CHECK_SWIFT_FLAGS (extra
# `swift test` flags, e.g. "--scratch-path .build-x"), CHROMIUM (the browser to use).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "viewer-check: $*"; }

chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}"
if [ -z "$chromium" ]; then
  if [ "${CI:-}" != true ]; then
    say "SKIPPED: Chromium is not installed (apt-get install chromium, or run with CI=true to install it)"
    exit 0
  fi
  say "installing Debian's chromium"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq chromium >/dev/null
  chromium="$(command -v chromium)"
fi
say "using $("$chromium" --version 2>/dev/null | head -n 1)"

out="${VIEWER_CHECK_OUT:-.build-viewer-check}"
mkdir -p "$out"
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT

# shellcheck disable=SC2086  # the flags are words
HTTPLOGGING_VIEWER_RUN_DIR="$runs" swift test ${VIEWER_CHECK_SWIFT_FLAGS:-} \
  --filter 'HTTPLoggingTests.LoggingFileTests/showcaseRun' >"$out/showcase-test.log" 2>&1 || {
  cat "$out/showcase-test.log"
  say "FAILED: the showcase run was not written"
  exit 1
}
run="$(find "$runs" -mindepth 1 -maxdepth 1 -type d -name '*_log_*' | sort | tail -n 1)"
[ -f "$run/index.html" ] || { say "FAILED: no run folder in $runs"; exit 1; }

python3 .ci/viewer_check.py --chromium "$chromium" --run "$run" --screenshot "$out/viewer.png"
say "screenshot: $out/viewer.png"
