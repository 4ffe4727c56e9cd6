import FetcherTesting
import Foundation
import TestTraits
import Testing

@testable import SessionFetcher

/// Streams that cannot be continued with a Range request (no length, no ranges: an event stream, a
/// chunked body) are paused without ending the connection on every engine: on the URLSession engine
/// on Linux through the libcurl handle inside FoundationNetworking (`ResponseReadPause`).
///
/// Each case runs in a child process, `timeout-probe stream-pause` (see `StreamPause`), on the
/// engine the tests run on: until a pause takes effect, FoundationNetworking reads the endless answer
/// at loopback speed on the work queue every URLSession of the process shares, which would hold up
/// other tests' fetches.
///
/// Run on their own, not beside the rest of the suite: `SESSIONFETCHER_STREAM_PAUSE_TESTS=1 swift
/// test --skip-build --filter UncontinuableStream` (CI does, on both engines). Beside it, the
/// hundreds of megabytes they move at loopback speed made the suite's short-timeout URLSession
/// tests miss their timeouts before their requests were sent.
@Suite(
  "Streams that cannot be continued",
  .linuxOnly("needs Linux: each case runs timeout-probe as a child process"),
  .enabled(if: ProcessInfo.processInfo.environment["SESSIONFETCHER_STREAM_PAUSE_TESTS"] == "1"))
struct UncontinuableStreamTests {
  struct ProbeLine {
    var sent: Int64 = -1
    var settled = false
    var read: Int64 = -1
    var mismatches = -1
    var connections = -1
    var error = ""

    /// `sent N settled B read N mismatches N connections N error E`.
    init(_ line: String) {
      let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
      func value(_ key: String) -> String? {
        words.firstIndex(of: key).map { $0 + 1 < words.count ? words[$0 + 1] : "" }
      }
      sent = value("sent").flatMap { Int64($0) } ?? -1
      settled = value("settled") == "true"
      read = value("read").flatMap { Int64($0) } ?? -1
      mismatches = value("mismatches").flatMap { Int($0) } ?? -1
      connections = value("connections").flatMap { Int($0) } ?? -1
      error = words.firstIndex(of: "error").map { words[($0 + 1)...].joined(separator: " ") } ?? ""
    }
  }

  #if os(Linux)
    static func probe(timeout: Int, sleep: Int) async throws -> (ChildProcess.Exit, ProbeLine, String) {
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "timeout-probe", arguments: ["stream-pause", "\(timeout)", "\(sleep)"], timeout: 150)
      let line = lines.last ?? ""
      return (exit, ProbeLine(line), line)
    }
  #endif

  /// The consumer stops reading: the server's bytes stop growing (TCP makes it wait) far below the
  /// 2 GiB it would send, with one request; once the consumer reads again, the stream goes on
  /// intact past what the server had sent while paused. (FoundationNetworking reads ahead of a
  /// busy delegate queue: what it read before the pause took effect is buffered, and must stay far
  /// below what an unpaused loopback transfer reaches.)
  @Test func aSlowConsumerHoldsTheServerBack() async throws {
    #if os(Linux)
      let (exit, result, line) = try await Self.probe(timeout: 60, sleep: 0)
      #expect(exit.exitCode == 0, "\(exit): \(line)")
      #expect(result.settled, "the server kept writing: \(line)")
      #expect(result.sent > 0 && result.sent < 1 << 30, "\(line)")
      #expect(result.read >= result.sent + (4 << 20), "\(line)")
      #expect(result.mismatches == 0, "\(line)")
      #expect(result.connections == 1, "\(line)")
      #expect(result.error == "none", "\(line)")
    #endif
  }

  /// A pause longer than the request's timeout is not a timeout: neither the fetcher's timer nor
  /// FoundationNetworking's (which a chunk restarts, and which the pause moves out of the way) ends
  /// the paused transfer, which goes on past what the server had sent while paused.
  @Test func aPauseLongerThanTheTimeoutIsNotATimeout() async throws {
    #if os(Linux)
      // Paused 9 s: longer than both timers (the fetcher's 4 s and URLSession's backstop 2 s after it).
      let (exit, result, line) = try await Self.probe(timeout: 4, sleep: 9)
      #expect(exit.exitCode == 0, "\(exit): \(line)")
      #expect(result.settled && result.sent < 1 << 30, "\(line)")
      #expect(result.read >= result.sent + (4 << 20), "\(line)")
      #expect(result.mismatches == 0, "\(line)")
      #expect(result.error == "none", "\(line)")
    #endif
  }
}
