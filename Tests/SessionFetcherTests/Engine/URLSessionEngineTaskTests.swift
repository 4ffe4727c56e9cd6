import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Records what a task of an engine reports, with the task each event names.
///
/// `@unchecked Sendable`: `record` is behind its `Locked` wrapper.
final class EngineEventRecorder: SessionTaskHandler, @unchecked Sendable {
  struct Record {
    var events: [String] = []
    var tasks: [ObjectIdentifier] = []
    var body = Data()
    var completions: [(any Error)?] = []
  }

  let record = Locked(Record())
  private let done = DispatchSemaphore(value: 0)

  private func note(_ event: String, _ task: any EngineTask) {
    record.withLock {
      $0.events.append(event)
      $0.tasks.append(ObjectIdentifier(task))
    }
  }

  func task(_ task: any EngineTask, didReceiveHead head: ResponseHead) {
    note("response \((head.response as? HTTPURLResponse)?.statusCode ?? 0)", task)
  }

  func task(_ task: any EngineTask, didReceive data: Data) {
    note("data", task)
    record.withLock { $0.body.append(data) }
  }

  func task(
    _ task: any EngineTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64
  ) {
    note("sent", task)
  }

  func task(_ task: any EngineTask, willRedirect response: HTTPURLResponse, to request: URLRequest)
    -> URLRequest?
  {
    note("redirect", task)
    return request
  }

  func task(_ task: any EngineTask, didReceive challenge: URLAuthenticationChallenge)
    -> (URLSession.AuthChallengeDisposition, URLCredential?)
  {
    note("challenge", task)
    return (.cancelAuthenticationChallenge, nil)
  }

  func taskNeedsNewBodyStream(_ task: any EngineTask) -> InputStream? {
    note("new body stream", task)
    return nil
  }

  func task(_ task: any EngineTask, didCompleteWithError error: (any Error)?) {
    note("complete", task)
    record.withLock { $0.completions.append(error) }
    done.signal()
  }

  /// Waits (up to `timeout`) for the completion; false when it did not come.
  func waitForCompletion(timeout: TimeInterval = 30) -> Bool {
    done.wait(timeout: .now() + timeout) == .success
  }

  var current: Record { record.current }
}

/// The URLSession engine's tasks: made, resumed and cancelled in order on the engine's task queue,
/// never while the caller waits; every event names the engine's task; a task let go of before its
/// turn is never made, and none is ever made on an invalidated URLSession.
@Suite("URLSession engine tasks", .ownThreads)
struct URLSessionEngineTaskTests {
  /// Holds `engine`'s task queue until `release` is signalled or 10 s pass.
  static func holdTaskQueue(of engine: URLSessionEngineSession) throws -> DispatchSemaphore {
    let release = DispatchSemaphore(value: 0)
    let held = DispatchSemaphore(value: 0)
    engine.taskQueue.async {
      held.signal()
      _ = release.wait(timeout: .now() + 10)
    }
    try #require(held.wait(timeout: .now() + 30) == .success)
    return release
  }

  static func makeTask(
    _ engine: URLSessionEngineSession, _ url: URL, handler: EngineEventRecorder
  ) throws -> URLSessionEngineTask {
    try #require(
      engine.makeTask(
        request: URLRequest(url: url), body: .none, tls: TLSSettings(), route: TransportRoute(),
        handler: handler) as? URLSessionEngineTask)
  }

  /// Every event, from the head to the completion, names the task `makeTask` returned; its
  /// response and summary are the URLSession task's.
  @Test func everyEventNamesTheEngineTask() throws {
    let server = try TestServer()
    defer { server.stop() }
    let engine = URLSessionEngineSession(configuration: .ephemeral)
    defer { engine.invalidateAndCancel() }
    let handler = EngineEventRecorder()
    let task = try Self.makeTask(engine, server.url("/redirect?to=/bytes/100"), handler: handler)
    task.resume()
    try #require(handler.waitForCompletion(), "\(task.diagnosticSummary)")
    let record = handler.current
    #expect(record.events.first == "redirect")
    #expect(record.events.contains("response 200"))
    #expect(record.events.last == "complete")
    #expect(record.tasks.allSatisfy { $0 == ObjectIdentifier(task) }, "\(record.events)")
    #expect(record.body == TestServer.patternBytes(count: 100))
    #expect(record.completions.count == 1 && record.completions[0] == nil)
    #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
    #expect(task.diagnosticSummary.contains("response 200"), "\(task.diagnosticSummary)")
  }

  /// With the queue held, `makeTask` returns a task not made yet; one let go of before its turn is
  /// never made (nothing reaches the server) and its handler hears it was cancelled.
  @Test func aTaskLetGoOfBeforeItsTurnIsNeverMade() throws {
    let server = try TestServer()
    defer { server.stop() }
    let engine = URLSessionEngineSession(configuration: .ephemeral)
    defer { engine.invalidateAndCancel() }
    let handler = EngineEventRecorder()
    let release = try Self.holdTaskQueue(of: engine)
    defer { release.signal() }
    let task = try Self.makeTask(engine, server.url("/bytes/10"), handler: handler)
    #expect(task.urlSessionTask == nil)
    #expect(task.diagnosticSummary == "not made yet")
    #expect(task.response == nil)
    task.resume()
    task.letGo()
    release.signal()
    try #require(handler.waitForCompletion())
    engine.taskQueue.sync {}
    #expect(task.urlSessionTask == nil)
    #expect(task.diagnosticSummary == "cancelled before it was made")
    let record = handler.current
    #expect(record.events == ["complete"])
    #expect(record.tasks == [ObjectIdentifier(task)])
    #expect((record.completions.first as? URLError)?.code == .cancelled)
    #expect(server.requestCount(path: "/bytes/10") == 0)
  }

  /// A task taken before `finishTasksAndInvalidate()` is made (before the URLSession is invalidated,
  /// on the same queue) and runs to its end; no task is taken afterwards.
  @Test func aTaskTakenBeforeFinishTasksAndInvalidateRunsToItsEnd() throws {
    let server = try TestServer()
    defer { server.stop() }
    let engine = URLSessionEngineSession(configuration: .ephemeral)
    let handler = EngineEventRecorder()
    let release = try Self.holdTaskQueue(of: engine)
    defer { release.signal() }
    let task = try Self.makeTask(engine, server.url("/bytes/10"), handler: handler)
    task.resume()
    engine.finishTasksAndInvalidate()
    #expect(engine.isInvalidated)
    #expect(
      engine.makeTask(
        request: URLRequest(url: server.url("/bytes/10")), body: .none, tls: TLSSettings(),
        route: TransportRoute(), handler: EngineEventRecorder()) == nil)
    release.signal()
    try #require(handler.waitForCompletion(), "\(task.diagnosticSummary)")
    #expect(handler.current.body == TestServer.patternBytes(count: 10))
    #expect(handler.current.completions.count == 1 && handler.current.completions[0] == nil)
  }

  /// A task taken before `invalidateAndCancelWithoutWaiting()` is made, then cancelled with its
  /// URLSession (its resume comes after): no crash, the handler hears it was cancelled.
  @Test func aTaskTakenBeforeInvalidateAndCancelIsCancelled() throws {
    let server = try TestServer()
    defer { server.stop() }
    let engine = URLSessionEngineSession(configuration: .ephemeral)
    let handler = EngineEventRecorder()
    let release = try Self.holdTaskQueue(of: engine)
    defer { release.signal() }
    let task = try Self.makeTask(engine, server.url("/hang"), handler: handler)
    engine.invalidateAndCancelWithoutWaiting()
    task.resume()
    release.signal()
    try #require(handler.waitForCompletion(), "\(task.diagnosticSummary)")
    #expect((handler.current.completions.first as? URLError)?.code == .cancelled)
    #expect(handler.current.tasks.allSatisfy { $0 == ObjectIdentifier(task) })
  }

  /// A task whose URLSession ended before its turn came (the delegate heard the session become
  /// invalid) is never made on it, which would kill the process: its handler hears it was
  /// cancelled.
  @Test func aTaskWhoseURLSessionEndedBeforeItsTurnIsNeverMade() throws {
    let server = try TestServer()
    defer { server.stop() }
    let engine = URLSessionEngineSession(configuration: .ephemeral)
    // The URLSession exists, and is invalidated below without the engine knowing first.
    let first = EngineEventRecorder()
    try Self.makeTask(engine, server.url("/bytes/1"), handler: first).resume()
    try #require(first.waitForCompletion())
    let handler = EngineEventRecorder()
    let release = try Self.holdTaskQueue(of: engine)
    defer { release.signal() }
    let task = try Self.makeTask(engine, server.url("/bytes/10"), handler: handler)
    task.resume()
    engine.dispatcher.urlSession(URLSession(configuration: .ephemeral), didBecomeInvalidWithError: nil)
    release.signal()
    try #require(handler.waitForCompletion())
    engine.taskQueue.sync {}
    #expect(task.urlSessionTask == nil)
    #expect((handler.current.completions.first as? URLError)?.code == .cancelled)
    #expect(server.requestCount(path: "/bytes/10") == 0)
    engine.invalidateAndCancel()
  }
}
