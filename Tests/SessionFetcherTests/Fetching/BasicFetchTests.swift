import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

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

  @Test func completionRunsOnTheCallbackQueue() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = DispatchQueue(label: "custom.callbacks")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 42)
    let fetcher = server.fetcher("/bytes/10", queue: queue)
    let onQueue = Recorder<Int?>()
    fetcher.receivedProgressBlock = { _, _ in onQueue.append(DispatchQueue.getSpecific(key: key)) }
    let result: FetchResult = await withCheckedContinuation { continuation in
      fetcher.beginFetch { data, error in
        onQueue.append(DispatchQueue.getSpecific(key: key))
        continuation.resume(returning: FetchResult(data: data, error: error))
      }
    }
    #expect(result.error == nil)
    #expect(!onQueue.values.isEmpty)
    #expect(onQueue.values.allSatisfy { $0 == 42 })
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

  @Test func accumulatingFetchDeliversChunksAndNoData() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/chunked?chunks=20&size=10000")
    let chunks = Recorder<Data?>()
    fetcher.accumulateDataBlock = { chunks.append($0) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == nil)
    #expect(fetcher.downloadedData == nil)
    let joined = chunks.values.compactMap { $0 }.reduce(Data(), +)
    #expect(joined == TestServer.patternBytes(count: 200_000))
    #expect(chunks.values.allSatisfy { $0 != nil })
    #expect(fetcher.downloadedLength == 200_000)
  }

  @Test func statusErrorCarriesTheBodyBothWays() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/status/400")
    let result = await fetcher.fetchResult()
    let body = Data(#"{"error":{"message":"Server Status 400","code":400}}"#.utf8)
    #expect(result.fetcherError == .status(code: 400, data: body))
    #expect(result.fetcherError?.statusCode == 400)
    #expect(result.data == body)
    #expect(fetcher.statusCode == 400)
  }

  @Test(arguments: [301, 304, 404, 500, 503])
  func finalStatusesOutside2xxAreErrors(_ status: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let result = await server.fetcher("/status/\(status)").fetchResult()
    #expect(result.fetcherError?.statusCode == status)
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

  @Test func insecureRequestFailsBeforeAnyTraffic() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/bytes/1"))
    fetcher.callbackQueue = makeCallbackQueue()
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .insecureRequest(server.url("/bytes/1")))
    #expect(counter.started == 0)
    #expect(server.requests.isEmpty)
    // Allowing the scheme lets it through.
    let allowed = SessionFetcher.fetcher(url: server.url("/bytes/1"))
    allowed.allowedInsecureSchemes = ["http"]
    allowed.callbackQueue = makeCallbackQueue()
    #expect(await allowed.fetchResult().data?.count == 1)
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

  @Test func waitForCompletionBlocksUntilDone() throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/delay/0.1")
    let done = Recorder<Bool>()
    fetcher.beginFetch { _, error in done.append(error == nil) }
    #expect(fetcher.waitForCompletion(timeout: 30))
    #expect(done.values == [true])
    let hanging = server.fetcher("/hang")
    hanging.beginFetch { _, _ in }
    #expect(!hanging.waitForCompletion(timeout: 0.2))
    hanging.stopFetching()
  }

  @Test func aFetcherBeginsOnlyOnce() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/bytes/1")
    _ = await fetcher.fetchResult()
    let second = await fetcher.fetchResult()
    guard case .invalidConfiguration? = second.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: second.error))")
      return
    }
    #expect(server.requestCount(path: "/bytes/1") == 1)
  }

  @Test func fetcherKeepsItselfAliveWhileRunning() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let result: FetchResult = await withCheckedContinuation { continuation in
      // No reference to the fetcher survives this statement.
      server.fetcher("/delay/0.1").beginFetch { data, error in
        continuation.resume(returning: FetchResult(data: data, error: error))
      }
    }
    #expect(result.data == Data("delayed".utf8))
  }
}
