import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A fetch's basic decisions on the scripted engine: where callbacks run, what a status outside
/// 2xx gives, what an accumulating fetch keeps, what begins only once. A fetch over a real
/// connection, its headers and timing, is in `BasicFetchTests`.
@Suite("Fetching (scripted)")
struct ScriptedBasicFetchTests {
  static let body = Data((0..<3000).map { UInt8($0 % 251) })
  static let chunks = stride(from: 0, to: body.count, by: 1000).map { body[$0..<$0 + 1000] }

  @Test func callbacksAndTheCompletionRunOnTheCallbackQueue() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(chunks: Self.chunks))
    let queue = DispatchQueue(label: "custom.callbacks")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 42)
    let fetcher = engine.fetcher("/items")
    fetcher.callbackQueue = queue
    let onQueue = Recorder<Int?>()
    fetcher.receivedProgressBlock = { _, _ in onQueue.append(DispatchQueue.getSpecific(key: key)) }
    let result: FetchResult = await withCheckedContinuation { continuation in
      fetcher.beginFetch { data, error in
        onQueue.append(DispatchQueue.getSpecific(key: key))
        continuation.resume(returning: FetchResult(data: data, error: error))
      }
    }
    #expect(result.data == Self.body)
    // Three progress callbacks and the completion.
    #expect(onQueue.values == [42, 42, 42, 42])
  }

  @Test func anAccumulatingFetchDeliversChunksAndKeepsNoData() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(chunks: Self.chunks))
    let fetcher = engine.fetcher("/items")
    let chunks = Recorder<Data?>()
    fetcher.accumulateDataBlock = { chunks.append($0) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == nil)
    #expect(fetcher.downloadedData == nil)
    #expect(chunks.values == Self.chunks.map { Optional($0) })
    #expect(fetcher.downloadedLength == 3000)
  }

  @Test func aStatusErrorCarriesTheBodyBothWays() async {
    let engine = ScriptedEngine()
    let body = Data(#"{"error":"bad"}"#.utf8)
    engine.respond(to: "/items", with: .response(status: 400, body: body))
    let fetcher = engine.fetcher("/items")
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .status(code: 400, data: body))
    #expect(result.data == body)
    #expect(fetcher.statusCode == 400)
    #expect(fetcher.downloadedData == body)
  }

  @Test(arguments: [300, 301, 304, 400, 404, 500, 503])
  func aFinalStatusOutside2xxIsAnError(_ status: Int) async {
    let engine = ScriptedEngine()
    // A 301 without a Location is final.
    engine.respond(to: "/items", with: .response(status: status))
    let fetcher = engine.fetcher("/items")
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == status)
    #expect(engine.requests.count == 1)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test(arguments: [200, 201, 204, 299])
  func aStatusIn2xxIsASuccess(_ status: Int) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(status: status, body: Data("ok".utf8)))
    let result = await engine.fetcher("/items").fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
  }

  @Test func anInsecureRequestFailsBeforeAnyRequest() async {
    let engine = ScriptedEngine()
    let url = "http://scripted.test/items"
    engine.respond(to: url, with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher(url)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .insecureRequest(URL(string: url)!))
    #expect(counter.started == 0)
    #expect(engine.requests.isEmpty)
    // Allowing the scheme lets it through.
    let allowed = engine.fetcher(url)
    allowed.allowedInsecureSchemes = ["http"]
    #expect(await allowed.fetchResult().data == Data("ok".utf8))
  }

  @Test func aFetcherBeginsOnlyOnce() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher("/items")
    _ = await fetcher.fetchResult()
    let second = await fetcher.fetchResult()
    guard case .invalidConfiguration? = second.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: second.error))")
      return
    }
    #expect(engine.requests.count == 1)
  }

  @Test func waitForCompletionWaitsForTheEndOrGivesUp() async {
    let engine = ScriptedEngine()
    let release = ScriptedGate()
    engine.respond(
      to: "/slow", with: ScriptedExchange([.wait(release), .head(status: 200), .body(Data("ok".utf8))]))
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/slow")
    let done = Recorder<Bool>()
    fetcher.beginFetch { _, error in done.append(error == nil) }
    #expect(await eventually { engine.requests.count == 1 })
    release.open()
    #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    // The completion has run when the wait returns.
    #expect(done.values == [true])
    let hanging = engine.fetcher("/hang")
    hanging.beginFetch { _, _ in }
    #expect(await offThePool { !hanging.waitForCompletion(timeout: 0.2) })
    hanging.stopFetching()
  }

  @Test func aRunningFetcherKeepsItselfAlive() async {
    let engine = ScriptedEngine()
    let release = ScriptedGate()
    engine.respond(
      to: "/slow", with: ScriptedExchange([.wait(release), .head(status: 200), .body(Data("ok".utf8))]))
    let result: FetchResult = await withCheckedContinuation { continuation in
      // No reference to the fetcher survives this statement.
      engine.fetcher("/slow").beginFetch { data, error in
        continuation.resume(returning: FetchResult(data: data, error: error))
      }
      release.open()
    }
    #expect(result.data == Data("ok".utf8))
  }
}
