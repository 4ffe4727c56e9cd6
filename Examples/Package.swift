// swift-tools-version:6.0
import PackageDescription

// Each example depends only on the modules it uses; fetch uses MIMEDocument and FetcherService's
// `setBody(_:)` for -F, and HTTPLogging for --log-dir; storage, a storage SDK's fetcher layer, serves
// itself with FetcherTesting. quickstart is the README's quick start, byte
// for byte (scripts/check-snippets.sh checks it and runs it against `demo --serve`). mirror and
// uploader are command-line tools with a `--selftest` against FetcherTesting's server, which CI runs.
let package = Package(
  name: "SessionFetcherExamples",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "demo", targets: ["demo"]),
    .executable(name: "fetch", targets: ["fetch"]),
    .executable(name: "quickstart", targets: ["quickstart"]),
    .executable(name: "storage", targets: ["storage"]),
    .executable(name: "mirror", targets: ["mirror"]),
    .executable(name: "uploader", targets: ["uploader"]),
    // tail-events: an event-stream tail; --selftest serves itself with FetcherTesting.
    .executable(name: "tail-events", targets: ["tail-events"]),
  ],
  dependencies: [
    .package(name: "SessionFetcher", path: ".."),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
  ],
  targets: [
    .executableTarget(
      name: "demo",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
        .product(name: "MIMEDocument", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "fetch",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "MIMEDocument", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "quickstart",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "storage",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "SessionUploadFetcher", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "mirror",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "uploader",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "MIMEDocument", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // tail-events: follows a server-sent event stream, reporting each reconnection.
    .executableTarget(
      name: "tail-events",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
