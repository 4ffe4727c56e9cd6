import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// `beginFetch()` never waits for the engine (on the URLSession engine, the task is made on the
/// engine's task queue afterwards), and the orders that opens stay safe: a stop or an invalidation
/// that comes before the task is made.
@Suite("Beginning without waiting for the engine", .ownThreads)
struct BeginWithoutWaitingTests {
  /// Holds the task queue of `session`'s engine session when the tests run on the URLSession
  /// engine, until the returned closure is called or 10 s pass; the closure also waits for the
  /// queue's work to that point.
  static func holdTheEnginesQueue(of session: SharedSession) throws -> @Sendable () -> Void {
    guard let queue = (session.engineSession as? URLSessionEngineSession)?.taskQueue else { return {} }
    let release = DispatchSemaphore(value: 0)
    let held = DispatchSemaphore(value: 0)
    queue.async {
      held.signal()
      _ = release.wait(timeout: .now() + 10)
    }
    try #require(held.wait(timeout: .now() + 30) == .success)
    return {
      release.signal()
      queue.sync {}
    }
  }

  /// `beginFetch()` returns while the engine is busy (an upload's body read holds
  /// FoundationNetworking's work queue on the URLSession engine), and both fetches end well once
  /// the read is released. The hold stops every URLSession of the process, so it is made in a
  /// child process, `timeout-probe begin-while-held`, on the engine the tests run on.
  @Test(.linuxOnly("needs Linux: runs timeout-probe as a child process"))
  func beginFetchReturnsWhileTheEngineIsBusy() async throws {
    #if os(Linux)
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "timeout-probe", arguments: ["begin-while-held"])
      #expect(exit.exitCode == 0, "\(exit): \(lines.suffix(20))")
      #expect(lines.last == "begin returned while held: true, upload a, get ok", "\(lines.suffix(20))")
    #endif
  }

  /// A fetch stopped right after it began (on the URLSession engine, before its task is made)
  /// sends nothing there, calls nothing back, and stops as a stopped fetch does; the next fetch on
  /// the same session goes through.
  @Test func aStopRightAfterBeginEndsTheFetchCleanly() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let session = SharedSession(configuration: nil, engine: .default)
    defer { session.invalidateAndCancel() }
    let release = try Self.holdTheEnginesQueue(of: session)
    let silent = server.fetcher("/bytes/10")
    silent.sessionProvider = { session }
    silent.beginFetch { _, _ in Issue.record("a stopped fetch called back") }
    silent.stopFetching()
    let notified = server.fetcher("/bytes/20")
    notified.sessionProvider = { session }
    notified.stopFetchingTriggersCompletionHandler = true
    let stopped = Recorder<SessionFetcherError?>()
    notified.beginFetch { _, error in stopped.append(error as? SessionFetcherError) }
    notified.stopFetching()
    await offThePool { release() }
    #expect(await eventually { stopped.count == 1 })
    #expect(stopped.values == [.cancelled])
    await drain(silent.callbackQueue)
    if FetcherEngine.default == .urlSession {
      #expect(server.requestCount(path: "/bytes/10") == 0)
      #expect(server.requestCount(path: "/bytes/20") == 0)
    }
    #expect(!silent.isFetching)
    let after = server.fetcher("/bytes/10")
    after.sessionProvider = { session }
    #expect(await after.fetchResult().data == TestServer.patternBytes(count: 10))
  }

  /// The idle timeout counts from when the engine really started the request: a fetch whose task
  /// waited 3 s in the engine's queue (on the URLSession engine the queue where its task is made,
  /// which waits for FoundationNetworking's shared work queue; held here), with a 4 s timeout and
  /// an answer 2 s after the request, succeeds. Counted from `beginFetch`, it timed out at 4 s,
  /// before the answer came at 5 s.
  ///
  /// Its 2 s of margin hold only when nothing else in the process holds FoundationNetworking's shared
  /// work queue: beside the parallel suite (a compression bomb inflating, thousands of header lines)
  /// its request was once not sent for 16 s. So it runs in a CI step of its own:
  /// `SESSIONFETCHER_ENGINE_QUEUE_TESTS=1 swift test --skip-build --filter theIdleTimeoutCounts`.
  @Test(
    .enabled(
      if: FetcherEngine.default == .urlSession
        && ProcessInfo.processInfo.environment["SESSIONFETCHER_ENGINE_QUEUE_TESTS"] == "1"))
  func theIdleTimeoutCountsFromWhenTheRequestStarted() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let session = SharedSession(configuration: nil, engine: .default)
    defer { session.invalidateAndCancel() }
    let release = try Self.holdTheEnginesQueue(of: session)
    var request = URLRequest(url: server.url("/delay/2"))
    request.timeoutInterval = 4
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.sessionProvider = { session }
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    try await Task.sleep(nanoseconds: 3_000_000_000)
    let releasedAt = Date()
    await offThePool { release() }
    #expect(await eventually(timeout: 30) { result.count == 1 }, "\(fetcher.diagnosticSummary)")
    #expect(result.values.first?.error == nil, "\(String(describing: result.values.first?.error))")
    #expect(server.requestCount(path: "/delay/2") == 1)
    // The timing tells when the request really started: after the engine's queue let it go.
    let timing = fetcher.timing
    let requestStart = try #require(timing.requestStartDate)
    #expect(requestStart >= releasedAt, "\(requestStart) \(releasedAt)")
    #expect(requestStart.timeIntervalSince(try #require(timing.startDate)) >= 3)
  }

  /// A session invalidated with its tasks cancelled right after a fetch on it began (on the
  /// URLSession engine, before the fetch's task is made): no crash, and the fetch ends with an
  /// error, never hanging.
  @Test func aSessionCancelledRightAfterBeginEndsTheFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let session = SharedSession(configuration: nil, engine: .default)
    let release = try Self.holdTheEnginesQueue(of: session)
    let fetcher = server.fetcher("/hang")
    fetcher.sessionProvider = { session }
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    session.invalidateAndCancelWithoutWaiting()
    await offThePool { release() }
    #expect(await eventually { result.count == 1 }, "\(fetcher.diagnosticSummary)")
    let error = try #require(result.values.first?.error)
    #expect((error as? URLError)?.code == .cancelled, "\(error)")
  }

  /// A session that lets its tasks finish, invalidated right after a fetch on it began (on the
  /// URLSession engine, before the fetch's task is made): the fetch runs to its end.
  @Test func aSessionFinishingRightAfterBeginLetsTheFetchEnd() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let session = SharedSession(configuration: nil, engine: .default)
    let release = try Self.holdTheEnginesQueue(of: session)
    let fetcher = server.fetcher("/bytes/10")
    fetcher.sessionProvider = { session }
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    session.finishTasksAndInvalidate()
    await offThePool { release() }
    #expect(await eventually { result.count == 1 }, "\(fetcher.diagnosticSummary)")
    #expect(result.values.first?.data == TestServer.patternBytes(count: 10))
  }
}
