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

  @Test func globalTestBlockStubsEveryFetcherWithoutItsOwn() async throws {
    // The global block is read when a fetch begins. Tests run in parallel in one process, so it is
    // set only around the `beginFetch` calls of this test, never while awaiting.
    let fetcher = SessionFetcher.fetcher(url: Self.url)
    fetcher.callbackQueue = makeCallbackQueue()
    let own = SessionFetcher.fetcher(url: Self.url)
    own.callbackQueue = makeCallbackQueue()
    own.testBlock = { _, respond in respond(Self.response(201), Data("own".utf8), nil) }
    let results = Recorder<(String, Data?)>()
    SessionFetcher.globalTestBlock = { fetcher, respond in
      respond(Self.response(200), Data((fetcher.request?.url?.path ?? "").utf8), nil)
    }
    fetcher.beginFetch { data, _ in results.append(("global", data)) }
    own.beginFetch { data, _ in results.append(("own", data)) }
    SessionFetcher.globalTestBlock = nil
    #expect(await eventually { results.count == 2 })
    let byName = Dictionary(uniqueKeysWithValues: results.values)
    #expect(byName["global"] == Data("/resource".utf8))
    #expect(byName["own"] == Data("own".utf8))
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
