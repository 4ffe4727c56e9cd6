#!/usr/bin/env bash
# Builds a fuzzer of this package with libFuzzer and AddressSanitizer and runs it for a bounded time.
#
#   Fuzz/run.sh [seconds] [target]     seconds: default 60; target: default MIMEParserFuzzer
#
# The committed seeds in Corpus/<name>/ (name = target without "Fuzzer") are read, never written,
# and Dictionaries/<name>.dict is used when it exists;
# new inputs go to corpus-work/<name>/ and findings to corpus-work/artifacts/ (both git-ignored).
# Exits 0 when the time ran out without a finding, non-zero on a crash, leak, timeout or build error.
set -euo pipefail

seconds="${1:-60}"
target="${2:-MIMEParserFuzzer}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name="${target%Fuzzer}"
work="$here/corpus-work/$name"
artifacts="$here/corpus-work/artifacts"
mkdir -p "$work" "$artifacts"

swift build -c release --package-path "$here" --product "$target" -Xswiftc -sanitize=fuzzer,address
binary="$(swift build -c release --package-path "$here" --show-bin-path)/$target"

dictionary=()
if [ -f "$here/Dictionaries/$name.dict" ]; then dictionary=(-dict="$here/Dictionaries/$name.dict"); fi

echo "Fuzzing $target for ${seconds}s (seeds: Corpus/$name, findings: corpus-work/artifacts)"
status=0
# Swift's own crash reporter would hold the process long after libFuzzer has written its report.
SWIFT_BACKTRACE=enable=no "$binary" "$work" "$here/Corpus/$name" "${dictionary[@]}" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "$target: finding (exit $status); reproduce with: $binary <file from $artifacts>" >&2
fi
exit "$status"
