import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A `Content-Length` that rounds to 2^63 as a Double (9223372036854775296 and up) ends a process
/// that uses a bare URLSession, inside FoundationNetworking 6.3: its libcurl header callback converts
/// `CURLINFO_CONTENT_LENGTH_DOWNLOAD` (a Double) with `Int64(_:)`, which traps. The URLSession engine
/// has libcurl refuse such a length first (`CURLOPT_MAXFILESIZE_LARGE`, see `ResponseHeadGuard`).
/// These tests run the fetch in a child process, `content-length-probe` (built beside the tests):
/// the bare URLSession's trap is pinned (one that starts passing tells that the toolchain fixed it),
/// and both engines must live through it with an error.
@Suite("An impossible Content-Length")
struct ContentLengthTrapTests {
  /// The values that trap: 2^63 − 1 and the values just below it that round up to 2^63.
  static let trapping = ["9223372036854775807", "9223372036854775806", "9223372036854775296"]

  #if os(Linux)
    @Test("kills a process that uses a bare URLSession (FoundationNetworking's trap)", arguments: trapping)
    func bareURLSessionTraps(contentLength: String) async throws {
      let (exit, lines) = try await Self.runProbe(["urlsession", contentLength])
      #expect(
        Self.trapped(exit, lines),
        "FoundationNetworking no longer traps (\(exit): \(lines)): the URLSession engine's limitation in the Linux notes can go"
      )
    }

    @Test("just below the rounding boundary, a bare URLSession survives")
    func bareURLSessionSurvivesBelowTheBoundary() async throws {
      let (exit, lines) = try await Self.runProbe(["urlsession", "9223372036854775295"])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.last == "survived", "\(lines)")
    }

    @Test("the URLSession engine ends the fetch with an error, in a process of its own", arguments: trapping)
    func urlSessionEngineSurvivesInAChild(contentLength: String) async throws {
      let (exit, lines) = try await Self.runProbe(["fetcher", "urlSession", contentLength])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.last == "survived", "\(lines)")
      #expect(
        lines.contains { $0.hasPrefix("ended: error ") && $0.contains("Maximum file size exceeded") },
        "\(lines)")
    }

    @Test("the URLSession engine still fetches a body just below the rounding boundary")
    func urlSessionEngineBelowTheBoundary() async throws {
      let (exit, lines) = try await Self.runProbe(["fetcher", "urlSession", "9223372036854775295"])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.last == "survived", "\(lines)")
      // Announced as 2^63 − 513 bytes, three arrive: libcurl did not refuse the length itself.
      #expect(!lines.contains { $0.contains("Maximum file size exceeded") }, "\(lines)")
    }

    @Test("the libcurl engine ends the fetch with an error, in a process of its own", arguments: trapping)
    func libcurlEngineSurvivesInAChild(contentLength: String) async throws {
      if let reason = FetcherEngine.libcurl.unavailableReason {
        Issue.record("libcurl engine unavailable: \(reason)")
        return
      }
      let (exit, lines) = try await Self.runProbe(["fetcher", "libcurl", contentLength])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.last == "survived", "\(lines)")
      #expect(lines.contains { $0.hasPrefix("ended: error ") }, "\(lines)")
    }

    /// Runs `content-length-probe` (built beside the tests) with `arguments`, and returns how it
    /// ended and the lines it printed.
    /// Killed by FoundationNetworking's trap: SIGILL (SIGTRAP on some builds), also when a
    /// sanitizer's handler catches it and then dies or exits with its own code (the backtrace names
    /// the first signal).
    static func trapped(_ exit: ChildProcess.Exit, _ lines: [String]) -> Bool {
      if exit.signal == SIGILL || exit.signal == SIGTRAP { return true }
      let died = exit.signal != nil || (exit.exitCode ?? 0) != 0
      return died && lines.contains { $0.contains("Signal 4:") || $0.contains("Signal 5:") }
    }

    /// Swift's crash handler is off in the child: the trap then ends it with its signal. Under
    /// ThreadSanitizer, the handler's fork of the backtracer fails a sanitizer check instead, and the
    /// child exits with the sanitizer's code before it names the signal.
    static func runProbe(_ arguments: [String]) async throws -> (exit: ChildProcess.Exit, lines: [String]) {
      var environment = ProcessInfo.processInfo.environment
      environment["SWIFT_BACKTRACE"] = "enable=no"
      return try await ChildProcess.runProbe(
        named: "content-length-probe", arguments: arguments, environment: environment)
    }
  #endif

  /// In this process: the libcurl engine gives an error (the connection closes 3 bytes into a
  /// body announced as 2^63 − 1 bytes), or `responseTooLarge` before the first byte with a limit.
  @Test("the libcurl engine fails cleanly, with and without maximumResponseBodyLength", arguments: trapping)
  func libcurlEngineFailsCleanly(contentLength: String) async throws {
    if let reason = FetcherEngine.libcurl.unavailableReason {
      Issue.record("libcurl engine unavailable: \(reason)")
      return
    }
    let reply = Data("HTTP/1.1 200 OK\r\nContent-Length: \(contentLength)\r\n\r\nabc".utf8)
    let server = try HostileServer { _ in .bytes(reply) }
    defer { server.stop() }
    for limit in [nil, 1_000] as [Int64?] {
      let fetcher = SessionFetcher.fetcher(url: server.url("/huge"))
      fetcher.engine = .libcurl
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = makeCallbackQueue()
      fetcher.maximumResponseBodyLength = limit
      let result = await fetcher.fetchResult(timeout: 60)
      #expect(!(result.error is FetchTimeout))
      if let limit {
        #expect(result.fetcherError == .responseTooLarge(limit: limit), "\(String(describing: result.error))")
      } else {
        #expect(result.error != nil, "a 3-byte body announced as \(contentLength) bytes passed")
      }
    }
  }
}
