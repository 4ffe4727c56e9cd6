import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `--selftest`: runs the same loop as a real tail against the test server on 127.0.0.1, whose
/// `/sse` route sends `retry: 200`, drops the connection after three events, and continues from
/// the `Last-Event-ID` it is sent. The stream starts from a saved ID, as `--last-event-id` does.
enum SelfTest {
  static func run(_ options: TailOptions) async throws -> Bool {
    guard options.engine.isAvailable else {
      throw SelfTestFailure("the \(options.engine) engine is unavailable")
    }
    let server = try TestServer()
    defer { server.stop() }
    var local = options
    local.insecureHTTP = true
    // Events 101…106 (the saved ID is 100); the connection is dropped after 103.
    let url = server.url("/sse?events=6&id=101&dropAfter=3&retry=200&interval=20")
    TailOutput.error("tail-events: self-test on the \(options.engine) engine against \(url.absoluteString)")
    let outcome = try await Tail.run(
      local.eventSource(url: url, lastEventID: "100"), lastEventID: "100",
      maximumReconnections: local.maximumReconnections
    ) { $0.id == "106" }

    var checks: [(String, Bool)] = []
    let ids = outcome.updates.compactMap { update -> String? in
      if case .event(let event) = update { return event.id }
      return nil
    }
    checks.append(("the events are 101 to 106, each once (got \(ids))", ids == (101...106).map(String.init)))
    let reconnections = outcome.updates.enumerated().compactMap { index, update in
      if case .reconnecting(let delay, let cause, let attempt) = update {
        return (index, delay, cause, attempt)
      }
      return nil
    }
    checks.append(("one reconnection was reported (got \(reconnections.count))", reconnections.count == 1))
    if let (index, delay, cause, attempt) = reconnections.first {
      checks.append(("it came after event 103 (position \(index))", index == 3))
      let code = (cause as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(cause)"
      checks.append(("its cause is the dropped connection (\(code))", cause is URLError))
      checks.append(("its delay is the server's retry: 200 ms (got \(delay) s)", abs(delay - 0.2) < 1e-9))
      checks.append(("it was attempt 1 (got \(attempt))", attempt == 1))
    }
    let sent = server.requests(path: "/sse").map { $0.header("Last-Event-ID") ?? "none" }
    checks.append(("Last-Event-ID was 100, then 103 (got \(sent))", sent == ["100", "103"]))
    checks.append(("the run ended at event 106 (\(outcome.ending))", outcome.ending == .stoppedByCaller))
    if options.log {
      SessionFetcher.flushLogs()
      let index = SessionFetcher.loggingRunDirectory?.appendingPathComponent("index.html")
      let exists = index.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
      checks.append(("HTTPLogging wrote the run's index.html", exists))
    }
    for (check, passed) in checks { TailOutput.error("  \(passed ? "ok  " : "FAIL") \(check)") }
    let passed = checks.allSatisfy(\.1)
    TailOutput.error("tail-events: self-test \(passed ? "passed" : "FAILED") (\(checks.count) checks)")
    return passed
  }
}

/// The self-test could not run.
struct SelfTestFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
