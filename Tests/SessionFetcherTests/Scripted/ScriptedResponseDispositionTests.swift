import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `didReceiveResponseBlock` on the scripted engine: which heads it is asked about, what waits for
/// its answer, and what each answer does. A body that keeps coming over a real connection while the
/// block decides is in `ResponseDispositionTests`, on each engine.
@Suite("didReceiveResponseBlock (scripted)")
struct ScriptedResponseDispositionTests {
  static let body = Data((0..<3000).map { UInt8($0 % 251) })
  static let chunks = stride(from: 0, to: body.count, by: 1000).map { body[$0..<$0 + 1000] }

  /// A block that records each head's status and path, and answers `disposition`.
  static func recordingBlock(
    _ heads: Recorder<String>, _ disposition: ResponseDisposition = .allow
  ) -> SessionFetcher.DidReceiveResponseBlock {
    { response in
      heads.append("\((response as? HTTPURLResponse)?.statusCode ?? 0) \(response.url?.path ?? "")")
      return disposition
    }
  }

  @Test func theBodyWaitsInOrderForTheDecision() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(chunks: Self.chunks))
    let fetcher = engine.fetcher("/items")
    let events = Recorder<String>()
    let decide = AsyncLatch()
    fetcher.didReceiveResponseBlock = { response in
      events.append("head \((response as? HTTPURLResponse)?.statusCode ?? 0)")
      await decide.wait()
      events.append("allowed")
      return .allow
    }
    fetcher.receivedProgressBlock = { _, total in events.append("bytes \(total)") }
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    // The block is deciding (it runs in a task of its own), and the whole exchange, its end
    // included, reaches the fetcher meanwhile.
    #expect(await eventually { events.count == 1 })
    #expect(await eventually { engine.requests.first?.hasCompleted == true })
    await engine.drainEvents()
    await drain(fetcher.callbackQueue)
    #expect(events.values == ["head 200"])
    #expect(result.count == 0)
    decide.signal()
    #expect(await eventually { result.count == 1 })
    #expect(result.values.first?.data == Self.body)
    #expect(events.values == ["head 200", "allowed", "bytes 1000", "bytes 2000", "bytes 3000"])
  }

  @Test(arguments: [false, true])
  func cancelReadsNoMoreAndCompletesCancelled(stalls: Bool) async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/items",
      with: stalls
        ? ScriptedExchange([.head(status: 200), .body(Self.chunks[0]), .stall])
        : .response(chunks: Self.chunks))
    let fetcher = engine.fetcher("/items")
    let chunks = Recorder<Int>()
    fetcher.accumulateDataBlock = { data in if let data { chunks.append(data.count) } }
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = Self.recordingBlock(heads, .cancel)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .cancelled, "\(String(describing: result.error))")
    #expect(heads.values == ["200 /items"])
    #expect(chunks.count == 0)
    #expect(fetcher.retryCount == 0)
    // A stalled exchange ends only because the fetcher cancels it.
    // (The completion may run before the cancel reaches the engine.)
    if stalls { #expect(await eventually { engine.requests.first?.wasCancelled == true }) }
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func askedOnlyAboutTheFinalHeadOfRedirects() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/first", with: .redirect(to: "/second"))
    engine.respond(to: "/second", with: .redirect(to: "/final", status: 301))
    engine.respond(to: "/final", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/first")
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = Self.recordingBlock(heads)
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(heads.values == ["200 /final"])
  }

  @Test(arguments: [true, false])
  func notAskedAboutAnAnswered401(digest: Bool) async {
    let engine = ScriptedEngine()
    let challenge: ScriptedExchange =
      digest ? .challenge(#"Digest realm="r", nonce="n", qop="auth", algorithm=MD5"#) : .challenge()
    engine.respond(to: "/private", with: challenge, .response(body: Self.body))
    let fetcher = engine.fetcher("/private")
    fetcher.credential = URLCredential(user: "user", password: "pa55", persistence: .none)
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = Self.recordingBlock(heads)
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(heads.values == ["200 /private"])
    #expect(engine.requests.count == 2)
  }

  @Test(arguments: [ResponseDisposition.allow, .cancel])
  func askedAboutAFinal401(_ disposition: ResponseDisposition) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: .challenge())
    let fetcher = engine.fetcher("/private")
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = Self.recordingBlock(heads, disposition)
    let result = await fetcher.fetchResult()
    if disposition == .cancel {
      #expect(result.urlError?.code == .cancelled, "\(String(describing: result.error))")
    } else {
      #expect(result.fetcherError?.statusCode == 401, "\(String(describing: result.error))")
    }
    #expect(heads.values == ["401 /private"])
  }

  /// How a 3xx comes to be the fetch's final response.
  enum Final3xx: String, CaseIterable, Sendable {
    case redirectsDisabled, redirectDeclined, notModified, multipleChoices

    var status: Int {
      switch self {
      case .notModified: 304
      case .multipleChoices: 300
      case .redirectsDisabled, .redirectDeclined: 302
      }
    }
  }

  /// A 3xx that is not followed is the final response: `.allow` completes with its status,
  /// `.cancel` with `URLError(.cancelled)`; its target is never asked for.
  @Test(arguments: Final3xx.allCases, [ResponseDisposition.allow, .cancel])
  func askedAboutAFinal3xx(_ kind: Final3xx, _ disposition: ResponseDisposition) async {
    let engine = ScriptedEngine()
    switch kind {
    case .redirectsDisabled, .redirectDeclined: engine.respond(to: "/start", with: .redirect(to: "/target"))
    case .notModified, .multipleChoices:
      // A Location that is not followed, either.
      engine.respond(to: "/start", with: .response(status: kind.status, headers: ["Location": "/target"]))
    }
    engine.respond(to: "/target", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/start")
    if kind == .redirectsDisabled { fetcher.maximumRedirects = 0 }
    if kind == .redirectDeclined { fetcher.willRedirectBlock = { _, _, respond in respond(nil) } }
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = Self.recordingBlock(heads, disposition)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    if disposition == .cancel {
      #expect(result.urlError?.code == .cancelled, "\(String(describing: result.error))")
    } else {
      #expect(result.fetcherError?.statusCode == kind.status, "\(String(describing: result.error))")
    }
    #expect(heads.values == ["\(kind.status) /start"])
    #expect(engine.requests(matching: "/target").isEmpty)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  /// A fetch that ends with too many redirects has no final response: the block is not asked.
  @Test func notAskedWhenTooManyRedirectsEndTheFetch() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/first", with: .redirect(to: "/second"))
    engine.respond(to: "/second", with: .redirect(to: "/third"))
    engine.respond(to: "/third", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/first")
    fetcher.maximumRedirects = 1
    let heads = Recorder<String>()
    fetcher.didReceiveResponseBlock = Self.recordingBlock(heads)
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects, "\(String(describing: result.error))")
    #expect(heads.count == 0)
    #expect(engine.requests(matching: "/third").isEmpty)
  }

  @Test func aStreamStartsOnceAllowedAndDeliversEverything() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(chunks: Self.chunks))
    let fetcher = engine.fetcher("/items")
    let heads = Recorder<String>()
    let decide = AsyncLatch()
    let allowed = Recorder<Bool>()
    fetcher.didReceiveResponseBlock = { response in
      heads.append("\((response as? HTTPURLResponse)?.statusCode ?? 0)")
      await decide.wait()
      allowed.append(true)
      return .allow
    }
    // The stream is handed over once the head is allowed.
    let streaming = Task { try await fetcher.beginStreaming(highWaterMark: 64 * 1024) }
    #expect(await eventually { heads.count == 1 })
    decide.signal()
    let stream = try await streaming.value
    var received = Data()
    for try await chunk in stream {
      // Nothing reaches the stream before the block allowed it.
      #expect(allowed.count == 1)
      received.append(chunk)
    }
    #expect(received == Self.body)
    #expect(heads.values == ["200"])
  }

  @Test(arguments: [ResponseDisposition.allow, .cancel])
  func aDownloadIsWholeWhenAllowedAndLeavesNoFileWhenCancelled(_ disposition: ResponseDisposition)
    async throws
  {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: .response(chunks: Self.chunks))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("body.bin")
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = destination
    let decide = AsyncLatch()
    fetcher.didReceiveResponseBlock = { _ in
      await decide.wait()
      return disposition
    }
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    // The whole body has reached the fetcher while the block decides.
    #expect(await eventually { engine.requests.first?.hasCompleted == true })
    await engine.drainEvents()
    decide.signal()
    #expect(await eventually { result.count == 1 })
    if disposition == .allow {
      #expect(result.values.first?.error == nil)
      #expect(try Data(contentsOf: destination) == Self.body)
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["body.bin"])
    } else {
      #expect(result.values.first?.urlError?.code == .cancelled)
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }
  }
}
