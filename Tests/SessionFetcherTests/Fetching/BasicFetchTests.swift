import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// A fetch over a real connection: its headers, timing, refused connections and broken replies.
/// Callback queues, statuses, accumulation and what begins only once are in
/// `ScriptedBasicFetchTests`.
@Suite("Fetching", .ownThreads)
struct BasicFetchTests {
  @Test func fetchReturnsTheBodyAndPostsOneStartedStoppedPair() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = makeCallbackQueue()
    let fetcher = server.fetcher("/bytes/5000", queue: queue)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 5000))
    #expect(fetcher.statusCode == 200)
    #expect(fetcher.responseHeaders?["Etag"] ?? fetcher.responseHeaders?["ETag"] == "\"bytes-5000\"")
    #expect(fetcher.downloadedData == result.data)
    #expect(fetcher.downloadedLength == 5000)
    #expect(!fetcher.isFetching)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1)
    #expect(counter.stopped == 1)
    #expect(counter.retryDelayStarted == 0)
    let timing = fetcher.timing
    #expect(timing.duration != nil)
    #expect(timing.firstResponseDate != nil)
    #expect(timing.bytesReceived == 5000)
    #expect(timing.retryCount == 0)
    // The request started after the fetch began and before its answer came.
    let (began, requestStart, answered) = try (
      #require(timing.startDate), #require(timing.requestStartDate), #require(timing.firstResponseDate)
    )
    #expect(began <= requestStart && requestStart <= answered, "\(began) \(requestStart) \(answered)")
  }

  @Test func defaultCallbackQueueIsMain() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/bytes/3"))
    fetcher.allowLocalhostRequest = true
    #expect(fetcher.callbackQueue.label == DispatchQueue.main.label)
    let result = await fetcher.fetchResult()
    #expect(result.data?.count == 3)
  }

  @Test func connectionRefusedIsAURLErrorWithStatusZero() async throws {
    let port = try closedPort()
    let fetcher = SessionFetcher.fetcher(urlString: "http://127.0.0.1:\(port)/nothing")
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .cannotConnectToHost)
    #expect(fetcher.statusCode == 0)
    #expect(fetcher.retryCount == 0)
  }

  @Test(arguments: ["not a url", "", "http://", "://missing-scheme", "http:// spaces .com/"])
  func invalidURLStringsFailWithoutNotifications(_ string: String) async throws {
    let fetcher = SessionFetcher.fetcher(urlString: string)
    fetcher.callbackQueue = makeCallbackQueue()
    #expect(fetcher.request == nil)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .invalidURL(string))
    #expect(counter.started == 0 && counter.stopped == 0)
  }

  @Test func customHeadersAndMethodReachTheServer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/headers")
    fetcher.setRequestValue("yes", forHTTPHeaderField: "X-Test")
    fetcher.comment = "headers check"
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    let recorded = try #require(server.requests.last)
    #expect(recorded.header("X-Test") == "yes")
    #expect(recorded.method == "GET")
    #expect(fetcher.description.contains("headers check"))
  }

  @Test func garbageAndEmptyRepliesFailOnce() async throws {
    let server = try TestServer()
    defer { server.stop() }
    for path in ["/garbage", "/empty"] {
      let fetcher = server.fetcher(path)
      let counter = NotificationRecorder([fetcher])
      let result = await fetcher.fetchResult()
      #expect(result.urlError != nil, "\(path): \(String(describing: result.error))")
      #expect(await eventually { counter.completionInvoked == 1 })
      #expect(counter.started == counter.stopped)
    }
  }

}
