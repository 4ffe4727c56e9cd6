// swift-tools-version:6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
  .swiftLanguageMode(.v6)
]

let package = Package(
  name: "SessionFetcherIntegrations",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .library(name: "SessionFetcherOpenAPI", targets: ["SessionFetcherOpenAPI"]),
    .library(name: "SessionFetcherLog", targets: ["SessionFetcherLog"]),
    .library(name: "SessionFetcherMetrics", targets: ["SessionFetcherMetrics"]),
    .library(name: "SessionFetcherTracing", targets: ["SessionFetcherTracing"]),
    .executable(name: "integrations-example", targets: ["IntegrationsExample"]),
  ],
  dependencies: [
    .package(name: "SessionFetcher", path: ".."),
    .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
  ],
  targets: [
    // Shared plumbing (not a product): the bounded off-queue delivery every monitor uses, and the
    // snapshot of a fetcher's event that travels through it.
    .target(
      name: "FetcherMonitorSupport",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
      ],
      swiftSettings: strictSettings),
    .target(
      name: "SessionFetcherOpenAPI",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ],
      swiftSettings: strictSettings),
    .target(
      name: "SessionFetcherLog",
      dependencies: [
        "FetcherMonitorSupport",
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSettings),
    .target(
      name: "SessionFetcherMetrics",
      dependencies: [
        "FetcherMonitorSupport",
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
      ],
      swiftSettings: strictSettings),
    .target(
      name: "SessionFetcherTracing",
      dependencies: [
        "FetcherMonitorSupport",
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: strictSettings),
    // The client generated from Sources/HTTPBinAPI/openapi.yaml by scripts/regenerate.sh (committed;
    // the generator plugin is not built here).
    .target(
      name: "HTTPBinAPI",
      dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
      exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
      swiftSettings: strictSettings),
    .executableTarget(
      name: "IntegrationsExample",
      dependencies: [
        "SessionFetcherOpenAPI", "SessionFetcherLog", "SessionFetcherMetrics", "SessionFetcherTracing",
        "HTTPBinAPI",
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: strictSettings),
    .testTarget(
      name: "SessionFetcherIntegrationsTests",
      dependencies: [
        "SessionFetcherOpenAPI", "SessionFetcherLog", "SessionFetcherMetrics", "SessionFetcherTracing",
        "HTTPBinAPI",
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: strictSettings),
  ]
)
