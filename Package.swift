// swift-tools-version:6.2
import PackageDescription

// The conditions the code branches on by platform, beside `canImport` and `os()`:
// - FOUNDATION_NETWORKING: URLSession is swift-corelibs-foundation's (FoundationNetworking), so the
//   workarounds for its bugs apply. Setting SESSIONFETCHER_APPLE_CHECK=1 when building leaves it
//   out: CI builds the branches Apple platforms take on Linux, as far as corelibs has their API.
// - LIBCURL_ENGINE: the libcurl engine is built, where a libcurl can be loaded (Linux and macOS).
let appleCheck = Context.environment["SESSIONFETCHER_APPLE_CHECK"].map { !$0.isEmpty && $0 != "0" } ?? false
let platformConditions: [SwiftSetting] =
  (appleCheck ? [] : [.define("FOUNDATION_NETWORKING", .when(platforms: [.linux, .android, .windows]))])
  + [.define("LIBCURL_ENGINE", .when(platforms: [.linux, .macOS]))]

let strictSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)] + platformConditions

let package = Package(
  name: "SessionFetcher",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .library(name: "SessionFetcher", targets: ["SessionFetcher"]),
    .library(name: "FetcherService", targets: ["FetcherService"]),
    .library(name: "MIMEDocument", targets: ["MIMEDocument"]),
    .library(name: "HTTPLogging", targets: ["HTTPLogging"]),
    .library(name: "FetcherTesting", targets: ["FetcherTesting"]),
    .library(name: "SessionUploadFetcher", targets: ["SessionUploadFetcher"]),
  ],
  targets: [
    .target(name: "SessionFetcher", dependencies: ["CCurl", "CPublicSuffix"], swiftSettings: strictSettings),
    // The libcurl engine's bridge: loads libcurl at run time (dlopen: libcurl.so.4 on Linux, the
    // system's libcurl.4.dylib on macOS), no curl headers needed.
    .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
    // The cookie jar's Public Suffix List: loads libpsl.so.5 at run time (dlopen), no libpsl headers.
    .target(name: "CPublicSuffix", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
    .target(
      name: "FetcherService", dependencies: ["SessionFetcher", "MIMEDocument"], swiftSettings: strictSettings),
    .target(name: "MIMEDocument", swiftSettings: strictSettings),
    .target(name: "HTTPLogging", dependencies: ["SessionFetcher"], swiftSettings: strictSettings),
    .target(
      name: "FetcherTesting", dependencies: ["SessionFetcher", "FetcherService"],
      swiftSettings: strictSettings),
    .target(
      name: "SessionUploadFetcher", dependencies: ["SessionFetcher", "FetcherService"],
      swiftSettings: strictSettings),
    // A child process of SigpipeTests: fetches with SIGPIPE at its default disposition.
    .executableTarget(
      name: "sigpipe-probe", dependencies: ["SessionFetcher"], path: "Tests/SigpipeProbe",
      swiftSettings: strictSettings),
    // A child process of LoggingExitTests: ends right after a logged fetch.
    .executableTarget(
      name: "logging-exit-probe", dependencies: ["HTTPLogging", "SessionFetcher"],
      path: "Tests/LoggingExitProbe", swiftSettings: strictSettings),
    // A child process of TimeoutTests: a timeout while the engine cannot take a cancellation, and a
    // redirect's answer that comes after its task was cancelled.
    .executableTarget(
      name: "timeout-probe", dependencies: ["SessionFetcher", "FetcherTesting"], path: "Tests/TimeoutProbe",
      swiftSettings: strictSettings),
    // A child process of ContentLengthTrapTests: one GET answered with an impossible Content-Length.
    .executableTarget(
      name: "content-length-probe", dependencies: ["SessionFetcher", "FetcherTesting"],
      path: "Tests/ContentLengthProbe", swiftSettings: strictSettings),
    // A child process of WaitForCompletionTests: waitForCompletion(timeout:) from a tool's top-level
    // code, on the main thread and on the main queue.
    .executableTarget(
      name: "wait-probe", dependencies: ["SessionFetcher", "FetcherTesting"], path: "Tests/WaitProbe",
      swiftSettings: strictSettings),
    // A child process of DecompressionTests: the peak memory of a fetch that meets a compression bomb.
    .executableTarget(
      name: "decoding-probe", dependencies: ["SessionFetcher", "FetcherTesting"],
      path: "Tests/DecodingProbe", swiftSettings: strictSettings),
    // Swift Testing traits the test targets share (tests that block run on threads of their own).
    .target(
      name: "TestTraits", dependencies: ["FetcherTesting"], path: "Tests/TestTraits",
      swiftSettings: strictSettings),
    .testTarget(
      name: "SessionFetcherTests",
      dependencies: ["SessionFetcher", "FetcherService", "FetcherTesting", "TestTraits"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "FetcherServiceTests",
      dependencies: ["FetcherService", "SessionFetcher", "FetcherTesting", "TestTraits"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "MIMEDocumentTests",
      dependencies: ["MIMEDocument", "FetcherTesting", "SessionFetcher", "FetcherService", "TestTraits"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "HTTPLoggingTests",
      dependencies: [
        "HTTPLogging", "SessionFetcher", "FetcherTesting", "FetcherService", "MIMEDocument", "TestTraits",
      ],
      swiftSettings: strictSettings),
    .testTarget(
      name: "SessionUploadFetcherTests",
      dependencies: ["SessionUploadFetcher", "SessionFetcher", "FetcherService", "FetcherTesting"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "FetcherTestingTests", dependencies: ["FetcherTesting", "SessionFetcher", "TestTraits"],
      swiftSettings: strictSettings),
  ]
)
