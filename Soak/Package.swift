// swift-tools-version:6.0
// Reliability programs for SessionFetcher, run by `.ci/run` (kept out of the root package so that
// `swift test` stays quick):
//   swift run -c release --package-path Soak soak          fault soak, leaks, RSS over 10,000 fetches
//   swift run -c release --package-path Soak proxy-probe   fetches through the `http_proxy` of its environment
//   swift run -c release --package-path Soak crash-resume  SIGKILL mid-transfer, resumed by a new process
//   swift run -c release --package-path Soak netsoak       network soak: nginx in a network namespace,
//                                                          link faults and a fault proxy (root, `ip`)
//   swift run -c release --package-path Soak stream-memory 1 GiB of events and of lines streamed,
//                                                          peak RSS growth (flat memory)
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, whatever the checkout is called.
let rootPackage = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
  name: "SessionFetcherSoak",
  platforms: [.macOS(.v13)],
  dependencies: [.package(path: "..")],
  targets: [
    // What the programs share: a lock-protected value, a seeded generator, SHA-256, RSS and malloc.
    .target(name: "SoakSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "soak",
      dependencies: [
        "SoakSupport",
        .product(name: "SessionFetcher", package: rootPackage),
        .product(name: "FetcherService", package: rootPackage),
        .product(name: "FetcherTesting", package: rootPackage),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "crash-resume",
      dependencies: [
        "SoakSupport",
        .product(name: "SessionFetcher", package: rootPackage),
        .product(name: "SessionUploadFetcher", package: rootPackage),
        .product(name: "FetcherTesting", package: rootPackage),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "netsoak",
      dependencies: [
        "SoakSupport",
        .product(name: "SessionFetcher", package: rootPackage),
        .product(name: "FetcherService", package: rootPackage),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "stream-memory",
      dependencies: [
        "SoakSupport",
        .product(name: "SessionFetcher", package: rootPackage),
        .product(name: "FetcherTesting", package: rootPackage),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "proxy-probe",
      dependencies: [.product(name: "SessionFetcher", package: rootPackage)],
      swiftSettings: [.swiftLanguageMode(.v6)]),
  ]
)
