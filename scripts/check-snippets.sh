#!/usr/bin/env bash
# Compiles every ```swift block of README.md and of the DocC articles (Sources/*/*.docc/*.md), then
# runs the README's quick start against the demo's embedded server.
#
#   scripts/check-snippets.sh            # compile, then run the quick start
#   scripts/check-snippets.sh --no-run   # compile only
#
# scripts/snippets.py writes a package, in a temporary folder, that depends on this checkout by path
# exactly as the README says (`.package(name: "SessionFetcher", path: "../SessionFetcher")`, the
# checkout reached through a symlink named SessionFetcher) and has one executable target per block,
# whose main.swift is the block: each snippet compiles in a scope of its own, in the Swift 6 language
# mode, and compiler errors name the document's own file and line. Set SESSIONFETCHER_SNIPPETS_DIR to
# a folder to keep the package and its build there between runs (incremental).
#
# A block is a whole main.swift unless the line before it (blank lines aside) is a marker:
#
#   <!-- snippet: program; imports: Foundation -->
#       a whole main.swift, with `import` lines added first (for a block that omits them)
#   <!-- snippet: fragment; imports: SessionFetcher; params: fetcher: SessionFetcher, url: URL -->
#       statements that use names the prose defines: the block's leading imports stay at the top
#       and the rest becomes the body of `func snippet(<params>) async throws`; compiled, never run
#   <!-- snippet: manifest -->
#       a Package.swift excerpt, not compiled: each of its `.package(` and `.product(` lines must be
#       one of the generated manifest's own dependency lines, so that what it shows is what is built,
#       and no target dependency may be a plain string (that names a target of the user's package)
#   <!-- snippet: program; same-as: Examples/Sources/quickstart/main.swift -->
#       also identical, byte for byte, to that file (the README's quick start is the `quickstart`
#       example, which this script runs against `demo --serve`)
#
# Needs the Swift toolchain and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
run_quickstart=1
[[ "${1:-}" == "--no-run" ]] && run_quickstart=0

work="${SESSIONFETCHER_SNIPPETS_DIR:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
ln -sfn "$root" "$work/SessionFetcher"

echo "== snippets: generate ($work/snippets)"
python3 scripts/snippets.py generate "$work/snippets"

echo "== snippets: build"
swift build --package-path "$work/snippets"

[[ "$run_quickstart" == 1 ]] || exit 0

echo "== quick start: run against the demo's embedded server"
swift build --package-path Examples
bin="$(swift build --package-path Examples --show-bin-path)"
served="$work/demo-serve.out"
"$bin/demo" --serve >"$served" 2>&1 &
demo_pid=$!
stop_demo() { kill "$demo_pid" 2>/dev/null || true; wait "$demo_pid" 2>/dev/null || true; }
trap 'stop_demo; [[ -n "${SESSIONFETCHER_SNIPPETS_DIR:-}" ]] || rm -rf "$work"' EXIT
url=""
for _ in $(seq 1 300); do
  url="$(grep -o -m1 'http://127\.0\.0\.1:[0-9]*' "$served" || true)"
  [[ -n "$url" ]] && break
  kill -0 "$demo_pid" 2>/dev/null || { cat "$served" >&2; echo "quick start: demo --serve ended" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { cat "$served" >&2; echo "quick start: demo --serve printed no address" >&2; exit 1; }
echo "demo --serve: $url"
timeout 120 "$bin/quickstart" "$url"
echo "quick start: passed"
