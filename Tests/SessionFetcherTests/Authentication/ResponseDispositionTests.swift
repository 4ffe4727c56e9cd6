import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// `didReceiveResponseBlock` over a real connection, on the engine the run selects: the body that
/// keeps coming while the block decides, and a stream that comes in windows. Which heads the block
/// is asked about and what each answer does are checked without sockets in
/// `ScriptedResponseDispositionTests`.
@Suite("didReceiveResponseBlock: a response's disposition by its head", .ownThreads)
struct ResponseDispositionTests {
  @Test func allowedBodyArrivesWholeAfterTheHead() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/bytes/200000")
    let events = Recorder<String>()
    let sentWhileDeciding = Recorder<Bool>()
    fetcher.didReceiveResponseBlock = { response in
      events.append("head \((response as? HTTPURLResponse)?.statusCode ?? 0)")
      // The body keeps coming meanwhile (the server writes all of it before the decision): it
      // waits, in order, for the decision.
      sentWhileDeciding.append(
        await eventually(timeout: 30) { server.bytesWritten(path: "/bytes/200000") > 200_000 })
      return .allow
    }
    fetcher.receivedProgressBlock = { _, _ in events.append("bytes") }
    let result = await fetcher.fetchResult()
    #expect(sentWhileDeciding.values == [true], "the server could not send the body while the block decided")
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 200_000))
    #expect(events.values.first == "head 200")
    #expect(events.values.filter { $0.hasPrefix("head") }.count == 1)
  }

  @Test func aBlockThatNeverReturnsStillTimesOut() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var request = URLRequest(url: server.url("/bytes/10"))
    request.timeoutInterval = 2
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let release = AsyncLatch()
    fetcher.didReceiveResponseBlock = { _ in
      await release.wait()
      return .allow
    }
    let result = await fetcher.fetchResult(timeout: 60)
    release.signal()
    #expect((result.error as? URLError)?.code == .timedOut, "\(String(describing: result.error))")
  }

  @Test func stubbedResponsesReachTheBlock() async throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/x")
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { fetcher, respond in
      let response = HTTPURLResponse(
        url: fetcher.request!.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)
      respond(response, Data("stub".utf8), nil)
    }
    let heads = Recorder<Int>()
    fetcher.didReceiveResponseBlock = { response in
      heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
      return .cancel
    }
    let result = await fetcher.fetchResult()
    #expect((result.error as? URLError)?.code == .cancelled, "\(String(describing: result.error))")
    #expect(heads.values == [200])
  }

  /// The original's testFetcherTestBlockDoesNotCallDidReceiveResponse_WithNilResponse.
  @Test func aStubWithoutAResponseDoesNotReachTheBlock() async throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/x")
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { _, respond in respond(nil, Data("stub".utf8), nil) }
    let heads = Recorder<Int>()
    fetcher.didReceiveResponseBlock = { _ in
      heads.append(0)
      return .cancel
    }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("stub".utf8))
    #expect(heads.count == 0)
  }

  @Test func aStreamStartsOnceAllowedAndDeliversEverything() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // Small marks: on Linux the body comes in Range windows, each with its own head; the block
    // sees the first (the whole resource) only.
    let fetcher = server.fetcher("/bytes/300000")
    let heads = Recorder<Int>()
    fetcher.didReceiveResponseBlock = { response in
      heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
      return .allow
    }
    var received = Data()
    for try await chunk in try await fetcher.beginStreaming(highWaterMark: 64 * 1024) {
      received.append(chunk)
    }
    #expect(received == TestServer.patternBytes(count: 300_000))
    #expect(heads.values == [200])
  }
}
