// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "SessionFetcherExamples",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "demo", targets: ["demo"])
  ],
  dependencies: [
    .package(name: "SessionFetcher", path: "..")
  ],
  targets: [
    .executableTarget(
      name: "demo",
      dependencies: [
        .product(name: "SessionFetcher", package: "SessionFetcher"),
        .product(name: "FetcherService", package: "SessionFetcher"),
        .product(name: "MIMEDocument", package: "SessionFetcher"),
        .product(name: "HTTPLogging", package: "SessionFetcher"),
        .product(name: "FetcherTesting", package: "SessionFetcher"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    )
  ]
)
