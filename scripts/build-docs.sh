#!/usr/bin/env bash
# Builds the DocC documentation of every library module with the toolchain's own `docc` (no
# swift-docc-plugin, so the root package keeps zero dependencies), and fails when:
#   - a public symbol has no doc comment (scripts/check-doc-comments.swift), or
#   - docc reports any warning: a missing symbol in a ``link``, a broken <doc:article> link, an
#     unresolvable Topics entry, a malformed catalog (--warnings-as-errors).
#
#   scripts/build-docs.sh            # archives in .build/docs/archives/<Module>.doccarchive
#
# Compiles into its own scratch folder (.build/docs), so that it neither waits for nor disturbs the
# normal debug build. Needs only the Swift toolchain (swift, docc).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

scratch="$root/.build/docs"
graphs="$scratch/symbol-graphs"
archives="$scratch/archives"
logs="$scratch/logs"
rm -rf "$graphs" "$archives" "$logs"
mkdir -p "$graphs" "$archives" "$logs"

docc_bin="${DOCC:-$(command -v docc || true)}"
if [[ -z "$docc_bin" ]]; then
  # `docc` ships next to `swift` in the toolchain's bin folder.
  docc_bin="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
fi
[[ -x "$docc_bin" ]] || { echo "build-docs: docc not found in the toolchain" >&2; exit 1; }

echo "== build, then extract symbol graphs (swift-symbolgraph-extract)"
# The same extraction `swift package dump-symbol-graph` performs, for the library modules only (the
# test modules' graphs are not needed), afresh on every run.
swift build --quiet --scratch-path "$scratch"
bin="$(swift build --scratch-path "$scratch" --show-bin-path)"
triple="$(basename "$(dirname "$bin")")"
extract_bin="$(dirname "$docc_bin")/swift-symbolgraph-extract"
[[ -x "$extract_bin" ]] || extract_bin="swift-symbolgraph-extract"
modules=()
for source in Sources/*/; do
  module="$(basename "$source")"
  [[ -f "$bin/Modules/$module.swiftmodule" ]] && modules+=("$module")
done
# -I "$bin/<Target>.build": the module maps SwiftPM makes for the C targets the core imports (CCurl,
# CPublicSuffix), so that loading a module that imports them finds them.
c_includes=()
for source in Sources/*/; do
  target="$(basename "$source")"
  [[ -d "${source}include" && -d "$bin/$target.build" ]] && c_includes+=(-I "$bin/$target.build")
done
for module in "${modules[@]}"; do
  "$extract_bin" -module-name "$module" -target "$triple" -I "$bin/Modules" "${c_includes[@]}" \
    -module-cache-path "$bin/ModuleCache" -minimum-access-level public \
    -emit-extension-block-symbols -output-dir "$graphs"
done

status=0
echo "== doc comments on every public symbol"
swift scripts/check-doc-comments.swift "$graphs"/*.symbols.json || status=1

for module in "${modules[@]}"; do
  source="Sources/$module/"
  module_graphs="$scratch/module-graphs/$module"
  rm -rf "$module_graphs" && mkdir -p "$module_graphs"
  # The module's own symbols, and its extensions of other modules' types.
  cp "$graphs/$module.symbols.json" "$module_graphs/"
  compgen -G "$graphs/$module@*.symbols.json" >/dev/null && cp "$graphs/$module"@*.symbols.json "$module_graphs/"

  catalog=()
  for candidate in "$source"*.docc; do
    [[ -d "$candidate" ]] && catalog=("$candidate")
  done
  if [[ ${#catalog[@]} -eq 0 ]] && ! grep -q '"precise"' "$module_graphs"/*.symbols.json; then
    echo "== $module: no public API yet and no catalog; skipped"
    continue
  fi
  if [[ ${#catalog[@]} -eq 0 ]]; then
    echo "== docc convert $module (warning: no documentation catalog in $source)"
    echo "build-docs: $module has no .docc catalog with an overview and a getting-started article" >&2
    status=1
  else
    echo "== docc convert $module (${catalog[0]})"
  fi

  log="$logs/$module.txt"
  if ! "$docc_bin" convert "${catalog[@]}" \
    --additional-symbol-graph-dir "$module_graphs" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.sessionfetcher.$module" \
    --output-dir "$archives/$module.doccarchive" \
    --warnings-as-errors >"$log" 2>&1; then
    status=1
  fi
  # --warnings-as-errors already fails on them; also catch any warning a docc version only prints.
  if grep -E "(warning|error):" "$log" >/dev/null; then
    grep -E -A3 "(warning|error):" "$log" | sed "s|^|  |"
    status=1
  else
    echo "  ok: $archives/$module.doccarchive"
  fi
done

if [[ $status -ne 0 ]]; then
  echo "build-docs: FAILED (full docc output in $logs)" >&2
  exit 1
fi
echo "build-docs: all modules documented without warnings"
