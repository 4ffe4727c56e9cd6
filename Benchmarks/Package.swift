// swift-tools-version:6.0
// Benchmarks of SessionFetcher against raw URLSession, AsyncHTTPClient and curl on one loopback nginx.
// Run everything with `bash Benchmarks/run.sh` from the repository root; README.md explains the figures.
import PackageDescription

let package = Package(
  name: "SessionFetcherBenchmarks",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "fetcher-bench", targets: ["SessionFetcherBenchmarks"]),
    // COUNT sequential GETs for callgrind (README: "Profiling the fetcher").
    .executable(name: "getloop", targets: ["getloop"]),
  ],
  dependencies: [
    .package(name: "SessionFetcher", path: ".."),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
  ],
  targets: [
    .executableTarget(
      name: "SessionFetcherBenchmarks",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "MIMEDocument", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "_NIOFileSystem", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "getloop",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
