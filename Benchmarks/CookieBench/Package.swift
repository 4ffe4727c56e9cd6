// swift-tools-version:6.0
// The cost of Set-Cookie lines: the cookie jar alone, and one response with many lines fetched on
// the current engine. Needs only this repository: `swift run -c release --package-path
// Benchmarks/CookieBench cookie-bench` (see Benchmarks/README.md).
import PackageDescription

let package = Package(
  name: "CookieBench",
  platforms: [.macOS(.v13)],
  dependencies: [.package(name: "SessionFetcher", path: "../..")],
  targets: [
    .executableTarget(
      name: "cookie-bench",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)])
  ]
)
