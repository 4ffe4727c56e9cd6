import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Answers `value`, counting the calls and noting whether one ran on the callback queue (marked
/// with `callbackQueueKey`).
private final class CountingProvider: UserAgentProvider, @unchecked Sendable {
  // `@unchecked Sendable`: immutable; the recorders lock.
  let value: String
  let calls = Recorder<Bool>()

  init(_ value: String) { self.value = value }

  func userAgent() async -> String {
    calls.append(DispatchQueue.getSpecific(key: callbackQueueKey) != nil)
    return value
  }
}

/// Blocks (without honouring cancellation) until `gate` opens, then answers `value`.
private final class BlockedProvider: UserAgentProvider, @unchecked Sendable {
  // `@unchecked Sendable`: immutable; the gate and recorders lock.
  let gate = Gate()
  let entered = Recorder<Bool>()
  let returned = Recorder<Bool>()

  func userAgent() async -> String {
    entered.append(true)
    let gate = self.gate
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        gate.wait()
        continuation.resume()
      }
    }
    returned.append(true)
    return "Blocked/1.0"
  }
}

/// Marks the callback queue of the tests here.
private let callbackQueueKey = DispatchSpecificKey<Bool>()

/// A service for the test server whose callback queue is marked with `callbackQueueKey`.
private func markedService() -> FetcherService {
  let service = makeService()
  service.callbackQueue.setSpecific(key: callbackQueueKey, value: true)
  return service
}

/// Where the original's testStopFetch*_UAProvider* stop a fetch whose provider is slow.
enum ProviderStopPoint: String, CaseIterable, Sendable {
  /// Before `beginFetch`.
  case beforeBegin
  /// While the provider runs.
  case whileProviderRuns
  /// After the provider answered, while the request waits for the server.
  case whileServerAnswers
}

@Suite("User-agent providers", .ownThreads)
struct UserAgentProviderTests {
  /// The fetcher's provider wins over the service's, which wins over the service's string; a
  /// request's own `User-Agent` wins over all of them. Whatever the factory method.
  @Test func precedence() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = markedService()
    service.userAgent = "String/1.0"
    let url = server.url("/headers")

    // The service's string alone.
    #expect(await service.fetcher(url: url).fetchResult().error == nil)
    // The fetcher's provider replaces the string `fetcher(url:)` put on the request.
    let own = CountingProvider("Fetcher/1.0")
    let withOwn = service.fetcher(url: url)
    withOwn.userAgentProvider = own
    #expect(await withOwn.fetchResult().error == nil)

    let shared = CountingProvider("Service/1.0")
    service.userAgentProvider = shared
    #expect(service.userAgentProvider != nil)
    for fetcher in [
      service.fetcher(url: url), service.fetcher(request: URLRequest(url: url)),
      service.fetcher(urlString: url.absoluteString),
    ] {
      #expect(await fetcher.fetchResult().error == nil)
    }
    let both = service.fetcher(url: url)
    both.userAgentProvider = own
    #expect(await both.fetchResult().error == nil)
    var mine = URLRequest(url: url)
    mine.setValue("Mine/1.0", forHTTPHeaderField: "User-Agent")
    #expect(await service.fetcher(request: mine).fetchResult().error == nil)

    #expect(
      server.requests(path: "/headers").map { $0.header("User-Agent") } == [
        "String/1.0", "Fetcher/1.0", "Service/1.0", "Service/1.0", "Service/1.0", "Fetcher/1.0", "Mine/1.0",
      ])
    #expect(own.calls.count == 2)
    #expect(shared.calls.count == 3)
    // Never on the callback queue.
    #expect((own.calls.values + shared.calls.values).allSatisfy { !$0 })
  }

  /// A standalone fetcher uses its own provider.
  @Test func standaloneFetcherUsesItsProvider() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/headers"))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "test.ua.standalone")
    fetcher.callbackQueue.setSpecific(key: callbackQueueKey, value: true)
    let provider = CountingProvider("Alone/2.0")
    fetcher.userAgentProvider = provider
    #expect(fetcher.service == nil)
    #expect(await fetcher.fetchResult().error == nil)
    #expect(server.requests(path: "/headers").first?.header("User-Agent") == "Alone/2.0")
    #expect(provider.calls.values == [false])
  }

  /// Asked once per fetch: every retry sends the first answer.
  @Test func askedOncePerFetchAcrossRetries() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = markedService()
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    let provider = CountingProvider("Once/1.0")
    service.userAgentProvider = provider
    let fetcher = service.fetcher(url: server.url("/fail-first?n=2&key=\(UUID().uuidString)&bytes=4"))
    #expect(await fetcher.fetchResult().error == nil)
    #expect(
      server.requests(path: "/fail-first").map { $0.header("User-Agent") }
        == Array(repeating: "Once/1.0", count: 3))
    #expect(provider.calls.count == 1)
  }

  /// The original's reset of the shared session while a provider blocks: the blocked fetch still
  /// completes, with the provider's answer, once the provider returns.
  @Test func resetSessionWhileTheProviderBlocks() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = markedService()
    let provider = BlockedProvider()
    defer { provider.gate.open() }
    service.userAgentProvider = provider
    let fetcher = service.fetcher(url: server.url("/headers"))
    let results = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { provider.entered.count == 1 })
    service.resetSession()
    provider.gate.open()
    #expect(await eventually { results.count == 1 })
    #expect(results.values.first?.error == nil)
    #expect(server.requests(path: "/headers").map { $0.header("User-Agent") } == ["Blocked/1.0"])
  }

  /// A provider's answer with a control character fails the fetch, naming the header, nothing sent.
  @Test func controlCharacterInTheAnswerFailsTheFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = markedService()
    service.userAgentProvider = CountingProvider("Bad/1.0\r\nInjected: yes")
    let result = await service.fetcher(url: server.url("/headers")).fetchResult()
    guard case .invalidConfiguration(let problem) = result.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
      return
    }
    #expect(problem.contains("User-Agent"))
    #expect(server.requestCount(path: "/headers") == 0)
  }

  /// The original's testStopFetch*_UAProvider* (with and without a service, with and without a
  /// completion on stop): a stop at each point ends the fetch at once, with one `.cancelled`
  /// completion or none, Started/Stopped balanced, and nothing sent once the provider answers late.
  @Test(arguments: ProviderStopPoint.allCases, [false, true])
  func stopAtEveryPoint(point: ProviderStopPoint, withService: Bool) async throws {
    for completesOnStop in [false, true] {
      let server = try TestServer()
      defer { server.stop() }
      let provider = BlockedProvider()
      defer { provider.gate.open() }
      let service = markedService()
      let fetcher: SessionFetcher
      let queue: DispatchQueue
      if withService {
        service.userAgentProvider = provider
        service.stopFetchingTriggersCompletionHandler = completesOnStop
        fetcher = service.fetcher(url: server.url("/hang"))
        queue = service.callbackQueue
      } else {
        fetcher = SessionFetcher.fetcher(url: server.url("/hang"))
        fetcher.allowLocalhostRequest = true
        fetcher.callbackQueue = DispatchQueue(label: "test.ua.stop")
        fetcher.stopFetchingTriggersCompletionHandler = completesOnStop
        fetcher.userAgentProvider = provider
        queue = fetcher.callbackQueue
      }
      let recorder = NotificationRecorder([fetcher])
      let results = Recorder<FetchResult>()
      if point == .beforeBegin { fetcher.stopFetching() }
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
      switch point {
      case .beforeBegin:
        break
      case .whileProviderRuns:
        #expect(await eventually { provider.entered.count == 1 })
        fetcher.stopFetching()
      case .whileServerAnswers:
        provider.gate.open()
        #expect(await eventually { server.requestCount(path: "/hang") == 1 })
        fetcher.stopFetching()
      }
      #expect(!fetcher.isFetching)
      if completesOnStop {
        #expect(await eventually { results.count == 1 })
        #expect(results.values.first?.fetcherError == .cancelled)
      }
      provider.gate.open()
      await pause(0.2)
      await drain(queue)
      #expect(results.count == (completesOnStop ? 1 : 0))
      let sent = point == .whileServerAnswers ? 1 : 0
      #expect(server.requestCount(path: "/hang") == sent)
      #expect(recorder.started == sent && recorder.stopped == sent)
      #expect(provider.entered.count == (point == .beforeBegin ? 0 : 1))
      if withService { #expect(service.numberOfFetchers == 0) }
    }
  }
}
