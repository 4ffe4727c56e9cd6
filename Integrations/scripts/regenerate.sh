#!/usr/bin/env bash
# Regenerates the committed OpenAPI client (Sources/HTTPBinAPI/Types*.swift and Client.swift) from
# Sources/HTTPBinAPI/openapi.yaml with swift-openapi-generator's command-line tool.
#
#   Integrations/scripts/regenerate.sh
#
# The generator is built (release, once; then cached) in a scratch package under
# Integrations/.build-generator, which is gitignored. The version is pinned here and must match the
# swift-openapi-runtime the package depends on (see Package.swift). CI never runs this script: it
# builds the committed code, so it does not pay for building the generator.
set -euo pipefail
GENERATOR_VERSION="1.14.3"
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$here/.build-generator"
mkdir -p "$scratch"
cat >"$scratch/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription
let package = Package(
  name: "generator",
  dependencies: [
    .package(url: "https://github.com/apple/swift-openapi-generator", exact: "$GENERATOR_VERSION")
  ],
  targets: []
)
MANIFEST
swift build --package-path "$scratch" -c release --product swift-openapi-generator
generator="$(swift build --package-path "$scratch" -c release --show-bin-path)/swift-openapi-generator"
api="$here/Sources/HTTPBinAPI"
"$generator" generate --config "$api/openapi-generator-config.yaml" --output-directory "$api" \
  "$api/openapi.yaml"
# Swift 6.3 warns about every `public import` the generated code does not use (its
# `@diagnose(UnusedImportAccess, as: ignored)` applies from Swift 6.4 only); a plain `import` is
# public in Swift 6 language mode and does not warn. The package builds with zero warnings.
for file in "$api"/Types*.swift "$api"/Client.swift; do
  sed -i.bak -E 's/^(@_spi\(Generated\) )?public import /\1import /' "$file"
  rm -f "$file.bak"
done
echo "regenerated: $api/Types*.swift and $api/Client.swift (swift-openapi-generator $GENERATOR_VERSION)"
