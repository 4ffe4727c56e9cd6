import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Test blocks", .serialized)
struct TestBlockTests {
  static let url = URL(string: "https://stub.example/resource")!

  static func response(_ status: Int) -> HTTPURLResponse {
    HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["X-Stub": "1"])!
  }

  @Test func testBlockStubsASuccessWithNotifications() async throws {
    let fetcher = SessionFetcher.fetcher(url: Self.url)
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { _, respond in respond(Self.response(200), Data("stubbed".utf8), nil) }
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("stubbed".utf8))
    #expect(fetcher.statusCode == 200)
    #expect(fetcher.responseHeaders?["X-Stub"] == "1")
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func testBlockFailuresAreRetriedWithBackoff() async throws {
    let fetcher = SessionFetcher.fetcher(url: Self.url)
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.retryFactor = 10
    fetcher.maxRetryInterval = 5
    let intervals = Recorder<TimeInterval>()
    fetcher.retryBlock = { [fetcher] suggested, _, response in
      intervals.append(fetcher.nextRetryInterval)
      response(suggested)
    }
    fetcher.testBlock = { _, respond in respond(Self.response(504), Data("gateway".utf8), nil) }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .status(code: 504, data: Data("gateway".utf8)))
    #expect(fetcher.retryCount == 3)
    #expect(zip(intervals.values, [0.01, 0.1, 1]).allSatisfy { abs($0 - $1) < 1e-9 })
  }

  @Test func testBlockErrorPassesThrough() async throws {
    let fetcher = SessionFetcher.fetcher(url: Self.url)
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { _, respond in respond(nil, nil, URLError(.notConnectedToInternet)) }
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .notConnectedToInternet)
    #expect(fetcher.response == nil)
  }

  @Test func testBlockFeedsTheAccumulateBlock() async throws {
    let fetcher = SessionFetcher.fetcher(url: Self.url)
    fetcher.callbackQueue = makeCallbackQueue()
    let chunks = Recorder<Data?>()
    fetcher.accumulateDataBlock = { chunks.append($0) }
    fetcher.testBlock = { _, respond in respond(Self.response(200), Data([1]), nil) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil && result.data == nil)
    #expect(chunks.values == [Data([1])])
  }

  /// The global block stubs every fetcher of the process that begins while it is set: run in a
  /// process of its own, since tests run in parallel and another test's fetch beginning in that
  /// window would be stubbed too.
  @Test func globalTestBlockStubsEveryFetcherWithoutItsOwn() async throws {
    await #expect(processExitsWith: .success) {
      let fetcher = SessionFetcher.fetcher(url: TestBlockTests.url)
      fetcher.callbackQueue = DispatchQueue(label: "global-test-block")
      let own = SessionFetcher.fetcher(url: TestBlockTests.url)
      own.callbackQueue = DispatchQueue(label: "global-test-block.own")
      own.testBlock = { _, respond in respond(TestBlockTests.response(201), Data("own".utf8), nil) }
      SessionFetcher.globalTestBlock = { fetcher, respond in
        respond(TestBlockTests.response(200), Data((fetcher.request?.url?.path ?? "").utf8), nil)
      }
      let global = await fetcher.fetchResult()
      let ownResult = await own.fetchResult()
      // Read when a fetch begins: one begun after the block is removed goes to the network (and
      // fails: nothing listens on port 1).
      SessionFetcher.globalTestBlock = nil
      let later = SessionFetcher.fetcher(urlString: "https://127.0.0.1:1/resource")
      later.callbackQueue = DispatchQueue(label: "global-test-block.later")
      let after = await later.fetchResult(timeout: 30)
      let passed =
        global.data == Data("/resource".utf8) && ownResult.data == Data("own".utf8)
        && after.data == nil && after.error is URLError
      exit(passed ? EXIT_SUCCESS : EXIT_FAILURE)
    }
  }

  @Test func testBlockStillAppliesTheInsecureGate() async throws {
    let fetcher = SessionFetcher.fetcher(urlString: "http://stub.example/")
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { _, respond in respond(Self.response(200), Data(), nil) }
    guard case .insecureRequest? = await fetcher.fetchResult().fetcherError else {
      Issue.record("expected insecureRequest")
      return
    }
  }
}
