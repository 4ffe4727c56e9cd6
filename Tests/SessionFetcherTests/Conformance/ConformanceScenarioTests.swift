import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The conformance behaviours that take more than one request or act during a fetch (connection
/// reuse, closes, cancellation, concurrency), one scenario per behaviour, on the process's engine.
@Suite("Conformance: scenarios", .serialized)
struct ConformanceScenarioTests {
  enum Scenario: String, CaseIterable, Sendable, CustomStringConvertible {
    case sequentialRequestsReuseAConnection = "sequential requests reuse one connection"
    case serverConnectionCloseIsHonoured =
      "an answer's Connection: close makes the next request open a new connection"
    case requestConnectionCloseIsHonoured =
      "a request's Connection: close makes the next request open a new connection"
    case serverClosingAfterEachAnswerIsRecovered = "a server that closes after every answer without saying so"
    case cancellationBeforeStartSendsNothing = "a task cancelled before the fetch starts sends nothing"
    case cancellationDuringTheBodyEndsTheFetch = "a task cancelled during the body ends the fetch"
    case cancellationAfterARedirectEndsTheFetch = "a task cancelled after a redirect ends the fetch"
    case stopWhileWaitingCompletesAsCancelled =
      "stopping a fetch that waits for its answer completes it as cancelled"
    case concurrentRequestsAllComplete = "sixteen requests at once all complete"

    var description: String { rawValue }
  }

  @Test(arguments: Scenario.allCases)
  func behaviour(_ scenario: Scenario) async throws {
    switch scenario {
    case .sequentialRequestsReuseAConnection:
      let server = try TestServer()
      defer { server.stop() }
      let service = Self.service()
      for index in 0..<3 {
        #expect(
          await service.fetcher(url: server.url("/bytes/10?n=\(index)")).fetchResult(timeout: 60).error == nil
        )
      }
      let connections = server.requests.map(\.connectionID)
      if FetcherEngine.default == .urlSession {
        // FoundationNetworking may open another connection on its own while other suites' fetches
        // share its work queue (see RequestFramingTests); kept alive, it reuses one.
        withKnownIssue("FoundationNetworking sometimes opens a second connection", isIntermittent: true) {
          #expect(Set(connections).count == 1, "\(connections)")
        }
      } else {
        #expect(Set(connections).count == 1, "\(connections)")
      }

    case .serverConnectionCloseIsHonoured:
      let server = try TestServer()
      defer { server.stop() }
      server.route("/closing") { _ in TestResponse.bytes(count: 10).adding(header: "Connection", "close") }
      let service = Self.service()
      for _ in 0..<2 {
        let result = await service.fetcher(url: server.url("/closing")).fetchResult(timeout: 60)
        #expect(result.error == nil && result.data == TestServer.patternBytes(count: 10))
      }
      let connections = server.requests.map(\.connectionID)
      #expect(connections.count == 2 && Set(connections).count == 2, "\(connections)")

    case .requestConnectionCloseIsHonoured:
      let server = try TestServer()
      defer { server.stop() }
      let service = Self.service()
      for index in 0..<2 {
        // The server would keep the connection: only the client's own handling of its header ends it.
        let fetcher = service.fetcher(url: server.url("/bytes/10?ignoreConnectionClose&n=\(index)"))
        if index == 0 { fetcher.request?.setValue("close", forHTTPHeaderField: "Connection") }
        #expect(await fetcher.fetchResult(timeout: 60).error == nil)
      }
      let connections = server.requests.map(\.connectionID)
      #expect(connections.count == 2 && Set(connections).count == 2, "\(connections)")

    case .serverClosingAfterEachAnswerIsRecovered:
      let answer = Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
      let server = try HostileServer { _ in .bytes(answer) }
      defer { server.stop() }
      let service = Self.service()
      for _ in 0..<3 {
        let result = await service.fetcher(url: server.url("/again")).fetchResult(timeout: 60)
        #expect(result.error == nil && result.data == Data("ok".utf8), "\(String(describing: result.error))")
      }

    case .cancellationBeforeStartSendsNothing:
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = Self.fetcher(server.url("/bytes/1"))
      let error = await Self.errorOfTask {
        withUnsafeCurrentTask { $0?.cancel() }
        _ = try await fetcher.beginFetch()
      }
      #expect((error as? SessionFetcherError) == .cancelled, "\(String(describing: error))")
      #expect(server.requests.isEmpty)

    case .cancellationDuringTheBodyEndsTheFetch:
      let server = try TestServer()
      defer { server.stop() }
      let total = 50_000_000
      let fetcher = Self.fetcher(server.url("/stream?bytes=\(total)&chunkSize=16384&interval=20"))
      let received = Recorder<Int64>()
      fetcher.receivedProgressBlock = { _, soFar in received.append(soFar) }
      let task = Task { _ = try await fetcher.beginFetch() }
      #expect(await eventually(timeout: 60) { received.count > 0 })
      task.cancel()
      let error = await Self.errorOfTask { try await task.value }
      #expect((error as? SessionFetcherError) == .cancelled, "\(String(describing: error))")
      #expect(server.bytesWritten(path: "/stream") < total)

    case .cancellationAfterARedirectEndsTheFetch:
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = Self.fetcher(server.url("/redirect?to=/hang"))
      let task = Task { _ = try await fetcher.beginFetch() }
      #expect(await eventually(timeout: 60) { server.requestCount(path: "/hang") == 1 })
      task.cancel()
      let error = await Self.errorOfTask { try await task.value }
      #expect((error as? SessionFetcherError) == .cancelled, "\(String(describing: error))")

    case .stopWhileWaitingCompletesAsCancelled:
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = Self.fetcher(server.url("/hang"))
      fetcher.stopFetchingTriggersCompletionHandler = true
      async let result = fetcher.fetchResult(timeout: 60)
      #expect(await eventually(timeout: 60) { server.requestCount(path: "/hang") == 1 })
      fetcher.stopFetching()
      #expect(await result.fetcherError == .cancelled)

    case .concurrentRequestsAllComplete:
      let server = try TestServer()
      defer { server.stop() }
      let results = await withTaskGroup(of: (Int, FetchResult).self) { group in
        for index in 0..<16 {
          let fetcher = Self.fetcher(server.url("/bytes/\(1000 + index)"))
          group.addTask { (index, await fetcher.fetchResult(timeout: 60)) }
        }
        return await group.reduce(into: []) { $0.append($1) }
      }
      #expect(results.count == 16)
      for (index, result) in results {
        #expect(result.error == nil && result.data == TestServer.patternBytes(count: 1000 + index))
      }
    }
  }

  /// A service of the test's own (its own session and connections), on the process's engine.
  static func service() -> FetcherService {
    let service = FetcherService()
    service.allowLocalhostRequest = true
    service.callbackQueue = makeCallbackQueue()
    service.cookieStorage = SessionCookieStorage()
    return service
  }

  static func fetcher(_ url: URL) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.cookieStorage = SessionCookieStorage()
    return fetcher
  }

  /// The error `body` throws in a task of its own, or nil; a `FetchTimeout` when it has not ended
  /// within 60 s.
  static func errorOfTask(_ body: @escaping @Sendable () async throws -> Void) async -> (any Error)? {
    let outcome = Recorder<FetchResult>()
    return await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
      let finish: @Sendable (FetchResult) -> Void = { result in
        if outcome.appendIfEmpty(result) { continuation.resume(returning: result.error) }
      }
      Task {
        do {
          try await body()
          finish(FetchResult(data: nil, error: nil))
        } catch {
          finish(FetchResult(data: nil, error: error))
        }
      }
      DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
        finish(FetchResult(data: nil, error: FetchTimeout()))
      }
    }
  }
}
