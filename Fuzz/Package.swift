// swift-tools-version:6.0
// libFuzzer targets for SessionFetcher's parsers. Build and run with `./run.sh [seconds] [target]`;
// README.md explains longer runs.
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, whatever the checkout is called.
let rootPackage = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

/// A fuzzer executable: a module whose only entry is `LLVMFuzzerTestOneInput`, started by
/// `FuzzerEntryPoint`. On Linux SwiftPM links every executable with `--defsym main=<Module>_main`;
/// pointing both symbols at the shim hands `main` to libFuzzer's driver.
func fuzzer(_ name: String, testing product: String) -> Target {
  .executableTarget(
    name: name,
    dependencies: [.product(name: product, package: rootPackage), "FuzzerEntryPoint"],
    swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])],
    linkerSettings: [
      .unsafeFlags(
        [
          "-Xlinker", "--defsym", "-Xlinker", "\(name)_main=swiftpm_fuzzer_main",
          "-Xlinker", "--defsym", "-Xlinker", "main=swiftpm_fuzzer_main",
        ], .when(platforms: [.linux]))
    ])
}

var targets: [Target] = [
  .target(name: "FuzzerEntryPoint", swiftSettings: [.swiftLanguageMode(.v6)]),
  fuzzer("MIMEParserFuzzer", testing: "MIMEDocument"),
]
// Fuzzers of other modules join when their sources are present.
let optionalFuzzers = [
  ("ResponseHeadersFuzzer", "FetcherService"), ("CookieParserFuzzer", "SessionFetcher"),
  ("SSEParserFuzzer", "SessionFetcher"), ("RequestBuildingFuzzer", "SessionFetcher"),
  ("UploadResponseFuzzer", "SessionUploadFetcher"),
]
for (name, product) in optionalFuzzers
where FileManager.default.fileExists(atPath: "\(Context.packageDirectory)/Sources/\(name)") {
  targets.append(fuzzer(name, testing: product))
}

let package = Package(
  name: "SessionFetcherFuzz",
  platforms: [.macOS(.v13)],
  products: targets.filter { $0.type == .executable }.map { .executable(name: $0.name, targets: [$0.name]) },
  dependencies: [.package(path: "..")],
  targets: targets
)
