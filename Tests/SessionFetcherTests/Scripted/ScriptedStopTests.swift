import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Stopping on the scripted engine: a stop cancels the exchange, and a stop that races with the
/// exchange's completion still ends each fetch exactly once.
@Suite("Stopping (scripted)")
struct ScriptedStopTests {
  @Test func stopWithoutCallbackRunsNoCompletionAndCancelsTheExchange() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/hang")
    let counter = NotificationRecorder([fetcher])
    let completions = Recorder<Int>()
    fetcher.beginFetch { _, _ in completions.append(1) }
    #expect(await eventually { engine.requests.first?.events.first?.kind == .resumed })
    fetcher.stopFetching()
    #expect(!fetcher.isFetching)
    #expect(await eventually { counter.stopped == 1 })
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
    await drain(fetcher.callbackQueue)
    #expect(completions.count == 0)
    #expect(counter.started == 1)
    #expect(counter.completionInvoked == 0)
  }

  @Test func stopWithCallbackCompletesOnceAsCancelled() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/hang")
    fetcher.stopFetchingTriggersCompletionHandler = true
    let errors = Recorder<SessionFetcherError?>()
    fetcher.beginFetch { _, error in errors.append(error as? SessionFetcherError) }
    #expect(await eventually { engine.requests.count == 1 })
    fetcher.stopFetching()
    fetcher.stopFetching()
    #expect(await eventually { errors.count == 1 })
    // The cancelled exchange's own completion comes after the stop's: it adds nothing.
    #expect(await Self.settle(engine, fetcher.callbackQueue))
    #expect(engine.requests.first?.events.last?.kind == .completed(failed: true))
    #expect(errors.values == [.cancelled])
  }

  /// Waits until every exchange asked of `engine` has completed and its fetcher has been told, then
  /// until `queue` has run what that queued: whatever a late event would cause has happened.
  static func settle(_ engine: ScriptedEngine, _ queue: DispatchQueue) async -> Bool {
    let completed = await eventually { engine.requests.allSatisfy(\.hasCompleted) }
    await engine.drainEvents()
    await drain(queue)
    return completed
  }

  /// Begins and stops race from many threads: every fetcher completes exactly once, fetched or
  /// cancelled, and nothing follows when the exchanges' own completions come in after the stops.
  @Test func beginAndStopRaceFromManyThreads() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/small", with: .response(body: Data("ten bytes!".utf8)))
    let queue = DispatchQueue(label: "test.scripted.begin-stop")
    let counter = NotificationRecorder()
    let completions = Recorder<SessionFetcherError?>()
    let fetchers = (0..<200).map { _ in engine.fetcher("/small") }
    for fetcher in fetchers {
      fetcher.callbackQueue = queue
      fetcher.stopFetchingTriggersCompletionHandler = true
      counter.watch(fetcher)
    }
    raceBeginAgainstStop(fetchers, completions: completions)
    #expect(await eventually(timeout: 60) { completions.count == fetchers.count })
    #expect(await Self.settle(engine, queue))
    #expect(completions.count == fetchers.count)
    #expect(completions.values.allSatisfy { $0 == nil || $0 == .cancelled })
    #expect(counter.started == counter.stopped)
    #expect(fetchers.allSatisfy { !$0.isFetching })
  }

  /// Each exchange holds its last chunk at a gate; the test stops every fetcher while opening
  /// the gate from other threads, so the stop and the completion race for each. Every fetcher
  /// completes exactly once, fetched or cancelled, and its notifications balance.
  @Test func stopRacingWithCompletionEndsEachFetchOnce() async {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    let body = Data("whole".utf8)
    engine.respond(
      to: "/race",
      with: ScriptedExchange([
        .head(status: 200), .body(body.prefix(2)), .wait(gate), .body(body.dropFirst(2)),
      ]))
    let queue = DispatchQueue(label: "test.scripted.race")
    let counter = NotificationRecorder()
    let outcomes = Recorder<Data?>()
    let fetchers = (0..<200).map { _ in engine.fetcher("/race") }
    for fetcher in fetchers {
      fetcher.callbackQueue = queue
      fetcher.stopFetchingTriggersCompletionHandler = true
      counter.watch(fetcher)
      fetcher.beginFetch { data, error in
        #expect(data == body || (error as? SessionFetcherError) == .cancelled)
        outcomes.append(data)
      }
    }
    #expect(await eventually { engine.requests.count == fetchers.count })
    DispatchQueue.concurrentPerform(iterations: fetchers.count + 1) { index in
      if index == fetchers.count / 2 { gate.open() }
      if index < fetchers.count { fetchers[index].stopFetching() }
    }
    #expect(await eventually(timeout: 60) { outcomes.count == fetchers.count })
    await drain(queue)
    #expect(outcomes.count == fetchers.count)
    #expect(counter.started == counter.stopped)
    #expect(fetchers.allSatisfy { !$0.isFetching })
  }

  /// The whole body has arrived and the exchange is about to complete when the stop comes: the
  /// fetch ends cancelled, once, and the exchange's own completion (after the stop) changes nothing.
  @Test func aStopJustBeforeTheExchangeCompletesWins() async throws {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    engine.respond(
      to: "/done", with: ScriptedExchange([.head(status: 200), .body(Data("all".utf8)), .wait(gate)]))
    let fetcher = engine.fetcher("/done")
    fetcher.stopFetchingTriggersCompletionHandler = true
    let received = Recorder<Int64>()
    fetcher.receivedProgressBlock = { _, total in received.append(total) }
    let outcomes = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in outcomes.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { received.values == [3] })
    fetcher.stopFetching()
    gate.open()
    #expect(await eventually { engine.requests.first?.events.last?.kind == .completed(failed: true) })
    #expect(await eventually { outcomes.count == 1 })
    await drain(fetcher.callbackQueue)
    #expect(outcomes.count == 1)
    #expect(outcomes.values.first?.fetcherError == .cancelled)
    #expect(outcomes.values.first?.data == nil)
    let kinds = try #require(engine.requests.first?.events.map(\.kind))
    #expect(kinds == [.resumed, .cancelled, .completed(failed: true)])
  }

  /// A stop from inside the fetcher's data callback (on the engine's event queue) ends the fetch
  /// there: the rest of the body is not delivered.
  @Test func stopFromADataCallbackEndsTheFetchAtOnce() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/chunks",
      with: .response(chunks: [Data("one".utf8), Data("two".utf8), Data("three".utf8)]))
    let fetcher = engine.fetcher("/chunks")
    fetcher.stopFetchingTriggersCompletionHandler = true
    let chunks = Recorder<Data>()
    fetcher.eventMonitors = [StopOnFirstChunk(chunks)]
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .cancelled)
    #expect(chunks.values == [Data("one".utf8)])
    #expect(engine.requests.first?.wasCancelled == true)
    #expect(engine.requests.first?.events.first { $0.kind == .cancelled }?.deliveredBodyBytes == 3)
  }

  @Test func quickBeginStopPairsStayBalanced() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/small", with: .response(body: Data("ten bytes!".utf8)))
    let queue = DispatchQueue(label: "test.scripted.pairs")
    let counter = NotificationRecorder()
    let completions = Recorder<Int>()
    var fetchers: [SessionFetcher] = []
    queue.suspend()
    for _ in 0..<1000 {
      let fetcher = engine.fetcher("/small")
      fetcher.callbackQueue = queue
      counter.watch(fetcher)
      fetcher.beginFetch { _, _ in completions.append(1) }
      fetcher.stopFetching()
      fetchers.append(fetcher)
    }
    #expect(fetchers.allSatisfy { !$0.isFetching })
    queue.resume()
    // An exchange that completes after its stop must still not call back.
    #expect(await Self.settle(engine, queue))
    #expect(completions.count == 0)
    #expect(counter.started == counter.stopped)
    #expect(counter.completionInvoked == 0)
  }
}

/// Stops its fetcher in the first data event.
final class StopOnFirstChunk: FetcherEventMonitor, Sendable {
  let chunks: Recorder<Data>
  init(_ chunks: Recorder<Data>) { self.chunks = chunks }
  func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
    chunks.append(data)
    fetcher.stopFetching()
  }
}
