import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The `async` forms on the scripted engine: what they throw, and how a cancelled task or a stop
/// ends them. A body fetched over a real connection is in `AsyncTests` and `AsyncResultsTests`.
@Suite("async/await (scripted)")
struct ScriptedAsyncTests {
  /// How a test awaits a fetch.
  enum Form: String, CaseIterable, Sendable {
    case beginFetch, fetchResponse

    func run(_ fetcher: SessionFetcher) async throws {
      switch self {
      case .beginFetch: _ = try await fetcher.beginFetch()
      case .fetchResponse: _ = try await fetcher.fetchResponse()
      }
    }
  }

  @Test(arguments: Form.allCases)
  func aStatusErrorIsThrownWithItsBody(_ form: Form) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/missing", with: .response(status: 404, body: Data("not here".utf8)))
    do {
      try await form.run(engine.fetcher("/missing"))
      Issue.record("expected an error")
    } catch {
      #expect(error as? SessionFetcherError == .status(code: 404, data: Data("not here".utf8)))
    }
  }

  @Test(arguments: Form.allCases)
  func cancellingTheTaskStopsTheFetch(_ form: Form) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/hang")
    let counter = NotificationRecorder([fetcher])
    let task = Task { try await form.run(fetcher) }
    #expect(await eventually { engine.requests.count == 1 })
    task.cancel()
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
    #expect(!fetcher.isFetching)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
    #expect(await eventually { counter.stopped == 1 })
    #expect(counter.started == 1)
  }

  @Test func cancellingBeforeTheExchangeExistsSendsNothing() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/hang")
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await fetcher.beginFetch()
    }
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
    #expect(!fetcher.isFetching)
    await engine.drainEvents()
    #expect(engine.requests.isEmpty)
  }

  @Test func stopFetchingEndsTheAwaitEvenWithoutTheFlag() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/hang")
    #expect(!fetcher.stopFetchingTriggersCompletionHandler)
    let task = Task { try await fetcher.beginFetch() }
    #expect(await eventually { engine.requests.count == 1 })
    fetcher.stopFetching()
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
  }

  @Test func progressUpdatesFinishWhenTheFetchIsStoppedOrHasEnded() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/hang", with: ScriptedExchange([.head(status: 200), .body(Data("part".utf8)), .stall]))
    let fetcher = engine.fetcher("/hang")
    let updates = fetcher.progressUpdates
    let task = Task { try await fetcher.beginFetch() }
    var seen: [TransferProgress] = []
    for await update in updates {
      seen.append(update)
      // The first part arrived: stop while the exchange stalls; the stream must finish.
      if update.completedBytes == 4 { fetcher.stopFetching() }
    }
    #expect(seen.last?.completedBytes == 4)
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
    // Taken after the end: finished at once.
    var after = 0
    for await _ in fetcher.progressUpdates { after += 1 }
    #expect(after == 0)
  }
}
