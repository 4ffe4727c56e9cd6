#!/usr/bin/env bash
# CI for the Integrations/ package (SessionFetcherOpenAPI, SessionFetcherLog, SessionFetcherMetrics,
# SessionFetcherTracing): build with warnings as errors, swift-format lint, the tests, the example.
#
#   .ci/integrations.sh
#
# The interop tests (the generated OpenAPI client against real httpbin, side by side with
# OpenAPIURLSession) run when SESSIONFETCHER_HTTPBIN_URL is set — `interop_start` of
# .ci/servers.sh exports it — and are skipped, saying so, otherwise. The generated client is
# committed (Integrations/scripts/regenerate.sh), so the generator is not built here.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
section() { echo "== integrations: $1 [$(($(date +%s) - start)) s]"; }

# Loopback only; libcurl would send even loopback traffic through a proxy.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy="127.0.0.1,127.0.0.2,localhost,::1"

section "swift build (Integrations, warnings are errors in its own targets)"
# -warnings-as-errors would also apply to the dependencies, which SwiftPM builds with warnings
# suppressed; the log is checked for warnings in Integrations' own sources instead.
build_log="$(mktemp)"
trap 'rm -f "$build_log"' EXIT
swift build --package-path Integrations --build-tests 2>&1 | tee "$build_log"
if grep -E "^$PWD/(Integrations/(Sources|Tests)|Sources)/.*: (warning|error):" "$build_log"; then
  echo "integrations: warnings in the package's own sources (above)" >&2
  exit 1
fi

section "swift-format lint (Integrations, generated client excluded)"
find Integrations/Package.swift Integrations/Sources Integrations/Tests -name '*.swift' \
  -not -path 'Integrations/Sources/HTTPBinAPI/*' -print0 \
  | xargs -0 swift-format lint --strict --configuration .swift-format

if [ -n "${SESSIONFETCHER_HTTPBIN_URL:-}" ]; then
  section "tests, with the httpbin interop at $SESSIONFETCHER_HTTPBIN_URL"
else
  section "tests (SESSIONFETCHER_HTTPBIN_URL not set: the httpbin interop tests are skipped)"
fi
swift test --package-path Integrations --skip-build

section "example: swift run --package-path Integrations integrations-example"
swift run --package-path Integrations --skip-build integrations-example --log-level info

section "done"
