import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Counts the callbacks running at once, and records them in the order they ran.
private final class CallbackLog: @unchecked Sendable {
  // `@unchecked Sendable`: every field is touched under `lock`.
  private let lock = NSLock()
  private var running = 0
  private(set) var mostAtOnce = 0
  private(set) var events: [String] = []
  private(set) var chunks = Data()

  /// Runs one callback named `event`, taking `seconds`.
  func run(_ event: String, chunk: Data? = nil, seconds: TimeInterval) {
    lock.withLock {
      running += 1
      mostAtOnce = max(mostAtOnce, running)
      events.append(event)
      if let chunk { chunks.append(chunk) }
    }
    Thread.sleep(forTimeInterval: seconds)
    lock.withLock { running -= 1 }
  }

  var snapshot: (mostAtOnce: Int, events: [String], chunks: Data) {
    lock.withLock { (mostAtOnce, events, chunks) }
  }
}

/// The original's `testConcurrentCallbackQueue`: a fetcher's callbacks on a concurrent queue.
@Suite("Callbacks on a concurrent queue", .ownThreads)
struct CallbackOrderTests {
  @Test("Slow chunk and progress callbacks on a concurrent queue run one at a time, the completion last")
  func concurrentQueueOverTheWire() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = DispatchQueue(label: "concurrent callbacks", attributes: .concurrent)
    // Six pieces 5 ms apart, each callback taking 30 ms: callbacks pile up on the queue.
    let fetcher = server.fetcher("/drip?bytes=600&chunks=6&interval=5", queue: queue)
    let log = CallbackLog()
    fetcher.accumulateDataBlock = { chunk in log.run("chunk", chunk: chunk, seconds: 0.03) }
    fetcher.receivedProgressBlock = { _, total in log.run("progress \(total)", seconds: 0.03) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    log.run("completion", seconds: 0)
    let (mostAtOnce, events, chunks) = log.snapshot
    #expect(mostAtOnce == 1)
    #expect(events.last == "completion")
    #expect(chunks == TestServer.patternBytes(count: 600))
    let totals = events.compactMap { $0.hasPrefix("progress ") ? Int64($0.dropFirst(9)) : nil }
    #expect(totals == totals.sorted())
    #expect(totals.last == 600)
  }

  @Test("A stubbed body in eight chunks on a concurrent queue: in order, one at a time, then the completion")
  func concurrentQueueWithATestBlock() async throws {
    let url = URL(string: "https://stub.example/concurrent")!
    let body = Data((0..<64).map { UInt8($0) })
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.callbackQueue = DispatchQueue(label: "concurrent stub callbacks", attributes: .concurrent)
    fetcher.testBlock = { _, respond in
      respond(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil), body, nil)
    }
    fetcher.testBlockAccumulateDataChunkCount = 8
    let log = CallbackLog()
    fetcher.accumulateDataBlock = { chunk in
      log.run("chunk \(chunk?.count ?? -1)", chunk: chunk, seconds: 0.02)
    }
    let completed = Recorder<Bool>()
    fetcher.beginFetch { _, error in
      log.run("completion", seconds: 0)
      completed.append(error == nil)
    }
    #expect(await eventually { completed.values.count == 1 })
    let (mostAtOnce, events, chunks) = log.snapshot
    #expect(completed.values == [true])
    #expect(mostAtOnce == 1)
    #expect(events == Array(repeating: "chunk 8", count: 8) + ["completion"])
    #expect(chunks == body)
  }
}

/// The original's `testFetcherTestBlockSimulateStreamingDataChunks_*` and
/// `testFetcherTestBlockSimulateStreamingWithAccumulateDataBlock_sendsOneChunkForOneByteArray`.
@Suite("Test block chunk count", .ownThreads)
struct TestBlockChunkCountTests {
  @Test(
    "Split into the asked number of pieces, as even as can be",
    arguments: [
      (10, 1, [10]), (10, 3, [4, 3, 3]), (12, 4, [3, 3, 3, 3]), (10, 0, [10]), (10, -2, [10]),
      (3, 5, [1, 1, 1]), (1, 1, [1]), (0, 4, []),
    ])
  func split(length: Int, count: Int, pieces: [Int]) {
    let data = Data((0..<length).map { UInt8($0 & 0xFF) })
    let split = TestBlockChunks.split(data, into: count)
    #expect(split.map(\.count) == pieces)
    #expect(split.reduce(Data(), +) == data)
  }

  private static func stubbedFetch(body: Data, chunkCount: Int?) async -> (
    chunks: [Data], progress: [Int64], error: (any Error)?
  ) {
    let url = URL(string: "https://stub.example/chunks")!
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.callbackQueue = DispatchQueue(label: "chunk count callbacks")
    if let chunkCount { fetcher.testBlockAccumulateDataChunkCount = chunkCount }
    fetcher.testBlock = { _, respond in
      respond(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil), body, nil)
    }
    let chunks = Recorder<Data>()
    let progress = Recorder<Int64>()
    fetcher.accumulateDataBlock = { chunks.append($0 ?? Data()) }
    fetcher.receivedProgressBlock = { _, total in progress.append(total) }
    let result = await fetcher.fetchResult()
    return (chunks.values, progress.values, result.error)
  }

  @Test("Default: one chunk")
  func defaultIsOneChunk() async {
    let fetcher = SessionFetcher.fetcher(urlString: "https://stub.example/")
    #expect(fetcher.testBlockAccumulateDataChunkCount == 1)
    let body = Data("0123456789".utf8)
    let (chunks, progress, error) = await Self.stubbedFetch(body: body, chunkCount: nil)
    #expect(error == nil)
    #expect(chunks == [body])
    #expect(progress == [10])
  }

  @Test("Several chunks reach the accumulate and progress blocks in order")
  func multipleChunks() async {
    let body = Data("0123456789".utf8)
    let (chunks, progress, error) = await Self.stubbedFetch(body: body, chunkCount: 3)
    #expect(error == nil)
    #expect(chunks == [Data("0123".utf8), Data("456".utf8), Data("789".utf8)])
    #expect(progress == [4, 7, 10])
  }

  @Test("A length divisible by the count: equal chunks")
  func evenlyDivisible() async {
    let body = Data("abcdefgh".utf8)
    let (chunks, progress, _) = await Self.stubbedFetch(body: body, chunkCount: 4)
    #expect(chunks == [Data("ab".utf8), Data("cd".utf8), Data("ef".utf8), Data("gh".utf8)])
    #expect(progress == [2, 4, 6, 8])
  }

  @Test("A count of zero counts as one")
  func zeroIsOne() async {
    let body = Data("abc".utf8)
    let (chunks, _, _) = await Self.stubbedFetch(body: body, chunkCount: 0)
    #expect(chunks == [body])
  }

  @Test("A one-byte body with many chunks asked: one chunk")
  func oneByte() async {
    let (chunks, progress, _) = await Self.stubbedFetch(body: Data([7]), chunkCount: 5)
    #expect(chunks == [Data([7])])
    #expect(progress == [1])
  }
}
