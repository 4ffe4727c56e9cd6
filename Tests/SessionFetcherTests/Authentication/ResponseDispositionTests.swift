import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("didReceiveResponseBlock: a response's disposition by its head", .ownThreads)
struct ResponseDispositionTests {
  @Test func allowedBodyArrivesWholeAfterTheHead() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/bytes/200000")
    let events = Recorder<String>()
    fetcher.didReceiveResponseBlock = { response in
      events.append("head \((response as? HTTPURLResponse)?.statusCode ?? 0)")
      // The body keeps coming meanwhile: it waits, in order, for the decision.
      try? await Task.sleep(nanoseconds: 300_000_000)
      return .allow
    }
    fetcher.receivedProgressBlock = { _, _ in events.append("bytes") }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 200_000))
    #expect(events.values.first == "head 200")
    #expect(events.values.filter { $0.hasPrefix("head") }.count == 1)
  }

  @Test func cancelReadsNoMoreAndCompletesCancelled() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // Ten seconds of body, or a stall that never ends: neither completes unless the fetch stops reading.
    for path in ["/drip?bytes=100000&chunks=100&interval=100", "/stall?length=100000&send=100"] {
      let fetcher = server.fetcher(path)
      let chunks = Recorder<Int>()
      fetcher.accumulateDataBlock = { data in if let data { chunks.append(data.count) } }
      let heads = Recorder<Int>()
      fetcher.didReceiveResponseBlock = { response in
        heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
        return .cancel
      }
      let counter = NotificationRecorder([fetcher])
      let result = await fetcher.fetchResult(timeout: 60)
      #expect((result.error as? URLError)?.code == .cancelled, "\(path): \(String(describing: result.error))")
      #expect(heads.values == [200])
      #expect(chunks.count == 0)
      #expect(await eventually { counter.completionInvoked == 1 })
      #expect(counter.started == 1 && counter.stopped == 1)
    }
  }

  @Test func calledOnlyForTheFinalHeadOfRedirects() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect/2")
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = { response in
      heads.append("\((response as? HTTPURLResponse)?.statusCode ?? 0) \(response.url?.path ?? "")")
      return .allow
    }
    #expect(await fetcher.fetchResult().data == Data("redirect done".utf8))
    #expect(heads.values == ["200 /redirect/0"])
  }

  @Test func notCalledForAnAnswered401() async throws {
    let server = try TestServer()
    defer { server.stop() }
    for path in ["/basic-auth/user/pa55", "/digest-auth/auth/user/pa55/MD5"] {
      let fetcher = server.fetcher(path)
      fetcher.credential = URLCredential(user: "user", password: "pa55", persistence: .none)
      let heads = Recorder<Int>()
      fetcher.didReceiveResponseBlock = { response in
        heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
        return .allow
      }
      #expect(await fetcher.fetchResult().error == nil)
      #expect(heads.values == [200], "\(path)")
    }
  }

  @Test func calledForAFinal401() async throws {
    let server = try TestServer()
    defer { server.stop() }
    for (disposition, cancelled) in [(ResponseDisposition.allow, false), (.cancel, true)] {
      let fetcher = server.fetcher("/basic-auth/user/pa55")
      let heads = Recorder<Int>()
      fetcher.didReceiveResponseBlock = { response in
        heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
        return disposition
      }
      let result = await fetcher.fetchResult()
      if cancelled {
        #expect((result.error as? URLError)?.code == .cancelled)
      } else {
        #expect(result.fetcherError?.statusCode == 401)
      }
      #expect(heads.values == [401])
    }
  }

  /// A 3xx that is not followed is the fetch's final response, as with the original (its session
  /// then hands the 3xx to `didReceiveResponse`): redirects disabled, a `willRedirectBlock` that
  /// declines, a 304, a 300. `.allow` completes with the status, `.cancel` with `URLError(.cancelled)`.
  @Test(arguments: ["disabled", "declined", "notModified", "multipleChoices"])
  func calledForAFinal3xx(kind: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let target = server.url("/bytes/10").absoluteString
    let expected = ["notModified": 304, "multipleChoices": 300][kind] ?? 302
    for disposition in [ResponseDisposition.allow, .cancel] {
      let path =
        switch kind {
        case "notModified": "/status/304"
        case "multipleChoices": "/status/300"
        default: "/redirect?to=\(target)"
        }
      let fetcher = server.fetcher(path)
      if kind == "disabled" { fetcher.maximumRedirects = 0 }
      if kind == "declined" { fetcher.willRedirectBlock = { _, _, respond in respond(nil) } }
      let heads = Recorder<Int>()
      fetcher.didReceiveResponseBlock = { response in
        heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
        return disposition
      }
      let counter = NotificationRecorder([fetcher])
      let result = await fetcher.fetchResult()
      if disposition == .cancel {
        #expect(
          (result.error as? URLError)?.code == .cancelled, "\(kind): \(String(describing: result.error))")
      } else {
        #expect(result.fetcherError?.statusCode == expected, "\(kind): \(String(describing: result.error))")
      }
      #expect(heads.values == [expected], "\(kind) \(disposition)")
      #expect(server.requestCount(path: "/bytes/10") == 0)
      #expect(await eventually { counter.completionInvoked == 1 })
      #expect(counter.started == 1 && counter.stopped == 1)
    }
  }

  /// A fetch that fails with too many redirects has no final response (its error is
  /// `URLError(.httpTooManyRedirects)`, as the original's session gives it): the block is not asked.
  @Test func notCalledWhenTooManyRedirectsEndTheFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect/3")
    fetcher.maximumRedirects = 1
    let heads = Recorder<Int>()
    fetcher.didReceiveResponseBlock = { response in
      heads.append((response as? HTTPURLResponse)?.statusCode ?? 0)
      return .allow
    }
    let result = await fetcher.fetchResult()
    #expect((result.error as? URLError)?.code == .httpTooManyRedirects, "\(String(describing: result.error))")
    #expect(heads.count == 0)
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
      try? await Task.sleep(nanoseconds: 200_000_000)
      return .allow
    }
    var received = Data()
    for try await chunk in try await fetcher.beginStreaming(highWaterMark: 64 * 1024) {
      received.append(chunk)
    }
    #expect(received == TestServer.patternBytes(count: 300_000))
    #expect(heads.values == [200])
  }

  @Test func aCancelledDownloadLeavesNoFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("body.bin")
    let fetcher = server.fetcher("/bytes/100000")
    fetcher.destinationFileURL = destination
    fetcher.didReceiveResponseBlock = { _ in .cancel }
    let result = await fetcher.fetchResult()
    #expect((result.error as? URLError)?.code == .cancelled)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  @Test func anAllowedDownloadIsWhole() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("body.bin")
    let fetcher = server.fetcher("/bytes/100000")
    fetcher.destinationFileURL = destination
    fetcher.didReceiveResponseBlock = { _ in
      try? await Task.sleep(nanoseconds: 200_000_000)
      return .allow
    }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: 100_000))
  }
}
