import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// A decorator that appends its name to `X-Decorated` (comma-separated), optionally after a
/// suspension (it goes on from another thread), and records what it saw in a shared log.
private final class NamingDecorator: FetcherDecorator {
  let name: String
  let suspends: Bool
  let log: Recorder<String>

  init(_ name: String, suspends: Bool = false, log: Recorder<String>) {
    self.name = name
    self.suspends = suspends
    self.log = log
  }

  /// Suspends the caller and resumes it from another thread, as a decorator that awaits real work
  /// does.
  private func suspend() async {
    await withCheckedContinuation { continuation in DispatchQueue.global().async { continuation.resume() } }
  }

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    if suspends { await suspend() }
    log.append("willStart \(name)")
    var request = request
    let previous = request.value(forHTTPHeaderField: "X-Decorated")
    request.setValue(previous.map { "\($0),\(name)" } ?? name, forHTTPHeaderField: "X-Decorated")
    return request
  }

  func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async {
    if suspends { await suspend() }
    log.append(
      "didFinish \(name) \(data.map { String(decoding: $0, as: UTF8.self) } ?? "nil") \(error == nil)")
  }
}

/// Only the defaults: the request goes unchanged.
private final class InertDecorator: FetcherDecorator {}

private struct DecoratorRefusal: Error, Equatable {
  let code: Int
}

/// Throws ``DecoratorRefusal`` from `fetcherWillStart`.
private final class RefusingDecorator: FetcherDecorator {
  let log: Recorder<String>
  init(log: Recorder<String>) { self.log = log }

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    throw DecoratorRefusal(code: 42)
  }

  func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async {
    log.append("didFinish \((error as? DecoratorRefusal)?.code ?? -1)")
  }
}

/// Blocks its fetch's `fetcherWillStart` (without honouring cancellation) until `gate` opens, for
/// requests whose URL contains `blockedPart`.
private final class BlockingDecorator: FetcherDecorator {
  let gate = Gate()
  let blockedPart: String
  let entered = Recorder<String>()
  let returned = Recorder<String>()
  let finished = Recorder<String>()

  init(blocking blockedPart: String) {
    self.blockedPart = blockedPart
  }

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    let url = request.url?.absoluteString ?? ""
    entered.append(url)
    if url.contains(blockedPart) {
      let gate = self.gate
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
          gate.wait()
          continuation.resume()
        }
      }
    }
    returned.append(url)
    return request
  }

  func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async {
    finished.append(error.map { "\($0)" } ?? "ok")
  }
}

/// Waits for nothing but its task's cancellation, and records that it was cancelled.
private final class UntilCancelledDecorator: FetcherDecorator {
  let entered = Recorder<Bool>()
  let cancelled = Recorder<Bool>()

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    entered.append(true)
    // A stream nobody yields to: iterating it ends only when the task is cancelled.
    let (never, continuation) = AsyncStream<Never>.makeStream()
    for await _ in never {}
    withExtendedLifetime(continuation) {}
    if Task.isCancelled { cancelled.append(true) }
    try Task.checkCancellation()
    return request
  }
}

/// Replaces the request with what `rewrite` makes of it.
private final class RewritingDecorator: FetcherDecorator {
  let rewrite: @Sendable (URLRequest) -> URLRequest
  init(_ rewrite: @escaping @Sendable (URLRequest) -> URLRequest) { self.rewrite = rewrite }

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    rewrite(request)
  }
}

/// Records whether the decorator's header was on the request it authorizes (the decorators run
/// first), and hands out a wrong token first and the right one after a refresh.
private final class OrderCheckingAuthorizer: FetcherAuthorizer, @unchecked Sendable {
  // `@unchecked Sendable`: `refreshed` is only touched under `lock`.
  let sawDecoration = Recorder<String>()
  private let lock = NSLock()
  private var refreshed = false

  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    sawDecoration.append(request.value(forHTTPHeaderField: "X-Decorated") ?? "none")
    var request = request
    let token = lock.withLock { refreshed } ? "good" : "stale"
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    return request
  }

  func primeForRefresh() async -> Bool {
    lock.withLock { refreshed = true }
    return true
  }
}

/// Runs `willStart` for each attempt and records each `fetcherDidFinish` as "status data-or-nil
/// error", where status is the HTTP status in a `.status` error (0 otherwise).
private final class ClosureDecorator: FetcherDecorator {
  let willStart: @Sendable (SessionFetcher, URLRequest) throws -> URLRequest
  let calls = Recorder<String>()
  let finished = Recorder<String>()
  let finishedData = Recorder<Data?>()
  let finishedErrors = Recorder<String>()

  init(_ willStart: @escaping @Sendable (SessionFetcher, URLRequest) throws -> URLRequest) {
    self.willStart = willStart
  }

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    calls.append(request.url?.absoluteString ?? "")
    return try willStart(fetcher, request)
  }

  func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async {
    finishedData.append(data)
    finishedErrors.append(error.map { "\($0)" } ?? "nil")
  }
}

/// Request decorators on the scripted engine: what they change on the request sent, when they run
/// (before each attempt, before the authorizer), and what a throw or a stop inside one does.
@Suite("Request decorators on the scripted engine", .ownThreads)
struct ScriptedDecoratorTests {
  /// An engine where `/text?value=V` answers `V`, `/headers` and `/bearer/good` answer, and
  /// `/status/404` is not found.
  static func engine() -> ScriptedEngine {
    let engine = ScriptedEngine()
    engine.respond(to: "/text", with: .response(body: Data("unscripted value".utf8)))
    for value in ["hello", "1", "2", "3", "0", "never", "slow", "fast", "moved", "original"] {
      engine.respond(to: "/text?value=\(value)", with: .response(body: Data(value.utf8)))
    }
    engine.respond(to: "/headers", with: .response(body: Data("{}".utf8)))
    engine.respond(to: "/status/404", with: .response(status: 404, body: Data("not found".utf8)))
    return engine
  }

  /// The values of `header` on the requests to `path`, in order.
  static func sent(_ engine: ScriptedEngine, _ path: String, _ header: String) -> [String?] {
    engine.requests(matching: path).map { $0.header(header) }
  }

  /// The `value` query of each request to `/text`, in order.
  static func values(_ engine: ScriptedEngine) -> [String?] {
    engine.requests(matching: "/text").map {
      URLComponents(url: $0.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "value" }?
        .value
    }
  }

  /// The original's testSingleDecorator and testSingleDecoratorWithDelay: the request is changed on
  /// the wire, and `fetcherDidFinish` sees the body before the completion runs.
  @Test(arguments: [false, true])
  func singleDecoratorChangesTheRequestAndSeesTheEnd(suspends: Bool) async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let log = Recorder<String>()
    service.addDecorator(NamingDecorator("one", suspends: suspends, log: log))
    let fetcher = service.fetcher(url: engine.url("/text?value=hello"))
    let recorder = NotificationRecorder([fetcher])
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<FetchResult, Never>) in
      fetcher.beginFetch { data, error in
        log.append("completion")
        continuation.resume(returning: FetchResult(data: data, error: error))
      }
    }
    #expect(result.error == nil)
    #expect(result.data == Data("hello".utf8))
    #expect(Self.sent(engine, "/text", "X-Decorated") == ["one"])
    #expect(log.values == ["willStart one", "didFinish one hello true", "completion"])
    await drain(service.callbackQueue)
    #expect(recorder.started == 1 && recorder.stopped == 1)
  }

  /// The original's testMultipleDecorators and testMultipleDecoratorsWithDelay: they run in the
  /// order added, each given the previous one's request, for every fetcher of the service.
  @Test(arguments: [false, true])
  func multipleDecoratorsRunInTheOrderAdded(suspends: Bool) async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let log = Recorder<String>()
    for name in ["a", "b", "c"] { service.addDecorator(NamingDecorator(name, suspends: suspends, log: log)) }
    #expect(service.decorators.count == 3)
    let fetchers = [
      service.fetcher(url: engine.url("/text?value=1")),
      service.fetcher(request: URLRequest(url: engine.url("/text?value=2"))),
      service.fetcher(urlString: engine.url("/text?value=3").absoluteString),
    ]
    for fetcher in fetchers {
      log.append("---")
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
    }
    #expect(Self.sent(engine, "/text", "X-Decorated") == ["a,b,c", "a,b,c", "a,b,c"])
    let perFetch = ["willStart a", "willStart b", "willStart c", "didFinish a", "didFinish b", "didFinish c"]
    let expected = ["1", "2", "3"].flatMap { value in
      ["---"] + perFetch.map { $0.hasPrefix("didFinish") ? "\($0) \(value) true" : $0 }
    }
    #expect(log.values == expected)
  }

  /// Removal is by identity; a fetch begun after it is not decorated; the defaults change nothing.
  @Test func removeDecoratorByIdentity() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let log = Recorder<String>()
    let first = NamingDecorator("x", log: log)
    let twin = NamingDecorator("x", log: log)
    let inert = InertDecorator()
    service.addDecorator(first)
    service.addDecorator(inert)
    service.addDecorator(twin)
    service.removeDecorator(first)
    service.removeDecorator(NamingDecorator("x", log: log))  // an equal-looking stranger: no effect
    #expect(
      service.decorators.map { ObjectIdentifier($0) } == [ObjectIdentifier(inert), ObjectIdentifier(twin)])
    #expect(await service.fetcher(url: engine.url("/text?value=1")).fetchResult().error == nil)
    service.removeDecorator(twin)
    #expect(await service.fetcher(url: engine.url("/text?value=2")).fetchResult().error == nil)
    #expect(Self.sent(engine, "/text", "X-Decorated") == ["x", nil])
    #expect(log.values.filter { $0.hasPrefix("willStart") }.count == 1)
  }

  /// The original's testSingleDecoratorWithRetries: the decorator runs before every attempt, and its
  /// `fetcherDidFinish` once per fetch.
  @Test func decoratorRunsBeforeEveryRetry() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    let log = Recorder<String>()
    service.addDecorator(NamingDecorator("r", log: log))
    engine.respond(
      to: "/fail-first", with: .response(status: 503), .response(status: 503),
      .response(body: Data("abcd".utf8)))
    let fetcher = service.fetcher(url: engine.url("/fail-first"))
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("abcd".utf8))
    let sent = engine.requests(matching: "/fail-first")
    #expect(sent.count == 3)
    #expect(sent.allSatisfy { $0.header("X-Decorated") == "r" })
    #expect(log.values.filter { $0.hasPrefix("willStart") }.count == 3)
    #expect(log.values.filter { $0.hasPrefix("didFinish") }.count == 1)
    await drain(service.callbackQueue)
    #expect(recorder.started == 3 && recorder.stopped == 3)
    #expect(recorder.retryDelayStarted == 2 && recorder.retryDelayStopped == 2)
  }

  /// Before the authorizer, and again before the resend after an authorization refresh.
  @Test func decoratorRunsBeforeTheAuthorizerAndBeforeTheResendAfterRefresh() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let authorizer = OrderCheckingAuthorizer()
    service.authorizer = authorizer
    let log = Recorder<String>()
    service.addDecorator(NamingDecorator("d", log: log))
    // The stale token is refused; the refreshed one is accepted.
    engine.respond(to: "/bearer/good", with: .response(status: 401), .response(body: Data("ok".utf8)))
    let result = await service.fetcher(url: engine.url("/bearer/good")).fetchResult()
    #expect(result.data == Data("ok".utf8))
    #expect(authorizer.sawDecoration.values == ["d", "d"])
    #expect(
      Self.sent(engine, "/bearer/good", "Authorization") == [
        "Bearer stale", "Bearer good",
      ])
    #expect(log.values.filter { $0.hasPrefix("willStart") }.count == 2)
  }

  /// The original's testSingleDecoratorFailure / testMultipleDecoratorsFailure: the error ends the
  /// fetch unchanged, nothing is sent, no retry, later decorators do not run, every decorator's
  /// `fetcherDidFinish` still runs, and no Started/Stopped is posted.
  @Test func throwingDecoratorFailsTheFetchWithItsErrorAndSendsNothing() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    let log = Recorder<String>()
    service.addDecorator(NamingDecorator("before", log: log))
    service.addDecorator(RefusingDecorator(log: log))
    service.addDecorator(NamingDecorator("after", log: log))
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error as? DecoratorRefusal == DecoratorRefusal(code: 42))
    #expect(engine.requests.isEmpty)
    #expect(
      log.values == [
        "willStart before", "didFinish before nil false", "didFinish 42", "didFinish after nil false",
      ])
    await drain(service.callbackQueue)
    #expect(recorder.started == 0 && recorder.stopped == 0 && recorder.retryDelayStarted == 0)
    #expect(recorder.completionInvoked == 1)
    #expect(service.numberOfFetchers == 0)
  }

  /// A decorator that never returns (and ignores cancellation): `stopFetching()` still ends the fetch
  /// at once, and nothing is sent when the decorator finally returns.
  @Test func stopWhileADecoratorHangsEndsTheFetchAndSendsNothing() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.stopFetchingTriggersCompletionHandler = true
    let decorator = BlockingDecorator(blocking: "/text")
    defer { decorator.gate.open() }
    service.addDecorator(decorator)
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let recorder = NotificationRecorder([fetcher])
    let results = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { decorator.entered.count == 1 })
    #expect(fetcher.isFetching)
    fetcher.stopFetching()
    #expect(!fetcher.isFetching)
    // The completion comes while the decorator still hangs.
    #expect(await eventually { results.count == 1 })
    #expect(results.values.first?.fetcherError == .cancelled)
    #expect(decorator.returned.count == 0)
    #expect(service.numberOfFetchers == 0)

    decorator.gate.open()
    #expect(await eventually { decorator.returned.count == 1 })
    // The decorator's task goes on after it returns, with nothing the test can wait for.
    await pause(0.2)
    await drain(service.callbackQueue)
    #expect(engine.requests.isEmpty)
    #expect(results.count == 1)
    #expect(recorder.started == 0 && recorder.stopped == 0)
    #expect(decorator.finished.values == ["\(SessionFetcherError.cancelled)"])
  }

  /// A stop cancels the task a decorator runs in: one that honours cancellation ends at once.
  @Test func stopCancelsTheDecoratorsTask() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let decorator = UntilCancelledDecorator()
    service.addDecorator(decorator)
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let results = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { decorator.entered.count == 1 })
    fetcher.stopFetching()
    #expect(await eventually { decorator.cancelled.count == 1 })
    // The decorator's task goes on after it returns, with nothing the test can wait for.
    await pause(0.2)
    await drain(service.callbackQueue)
    #expect(results.count == 0)
    #expect(engine.requests.isEmpty)
  }

  /// The original's decorator-with-delay tests across fetchers: a decorator blocked for one fetch
  /// does not hold up another fetch of the same service.
  @Test func slowDecoratorDelaysOnlyItsOwnFetch() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let decorator = BlockingDecorator(blocking: "slow")
    defer { decorator.gate.open() }
    service.addDecorator(decorator)
    let slow = service.fetcher(url: engine.url("/text?value=slow"))
    let slowResults = Recorder<FetchResult>()
    slow.beginFetch { data, error in slowResults.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { decorator.entered.count == 1 })

    let fast = await service.fetcher(url: engine.url("/text?value=fast")).fetchResult()
    #expect(fast.data == Data("fast".utf8))
    #expect(slowResults.count == 0)
    #expect(Self.values(engine) == ["fast"])

    decorator.gate.open()
    #expect(await eventually { slowResults.count == 1 })
    #expect(slowResults.values.first?.data == Data("slow".utf8))
  }

  /// What a decorator returns passes the rules the caller's request did: another scheme that is not
  /// allowed, a header with a control character, or a URL without a host fails the fetch with
  /// nothing sent.
  @Test(arguments: ["scheme", "header", "url"])
  func requestReturnedByADecoratorIsChecked(change: String) async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.addDecorator(
      RewritingDecorator { request in
        var request = request
        switch change {
        case "scheme": request.url = URL(string: "http://example.com/text")
        case "header":
          // Through the dictionary: `setValue` may drop such a value without a word.
          var fields = request.allHTTPHeaderFields ?? [:]
          fields["X-Bad"] = "a\r\nInjected: yes"
          request.allHTTPHeaderFields = fields
        default: request.url = URL(string: "https:///no-host")
        }
        return request
      })
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    switch change {
    case "scheme":
      #expect(result.fetcherError == .insecureRequest(URL(string: "http://example.com/text")!))
    case "header":
      guard case .invalidConfiguration(let problem) = result.fetcherError else {
        Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
        return
      }
      #expect(problem.contains("X-Bad"))
    default:
      #expect(result.fetcherError == .invalidURL("https:///no-host"))
    }
    #expect(engine.requests.isEmpty)
    await drain(service.callbackQueue)
    #expect(recorder.started == 0 && recorder.stopped == 0)
  }

  /// A decorator may move the request to another allowed URL: that one is fetched.
  @Test func decoratorMayRedirectTheRequestToAnAllowedURL() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let target = engine.url("/text?value=moved")
    service.addDecorator(
      RewritingDecorator { request in
        var request = request
        request.url = target
        return request
      })
    let result = await service.fetcher(url: engine.url("/text?value=original")).fetchResult()
    #expect(result.data == Data("moved".utf8))
    #expect(Self.values(engine) == ["moved"])
  }

  /// The original's stop-before-begin variants: a fetch stopped before `beginFetch` runs no
  /// decorator at all (it never began: no `fetcherDidFinish` either) and sends nothing.
  @Test(arguments: [false, true])
  func stopBeforeBeginRunsNoDecorator(withCallback: Bool) async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.stopFetchingTriggersCompletionHandler = withCallback
    let decorator = ClosureDecorator { _, request in request }
    service.addDecorator(decorator)
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let recorder = NotificationRecorder([fetcher])
    let results = Recorder<FetchResult>()
    fetcher.stopFetching()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    // The end has run: every decorator's fetcherDidFinish, then the completion (or none).
    #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    await drain(service.callbackQueue)
    #expect(results.count == (withCallback ? 1 : 0))
    if withCallback { #expect(results.values.first?.fetcherError == .cancelled) }
    #expect(decorator.calls.count == 0)
    #expect(decorator.finishedErrors.count == 0)
    #expect(engine.requests.isEmpty)
    #expect(recorder.started == 0 && recorder.stopped == 0)
    #expect(service.numberOfFetchers == 0)
  }

  /// `stopFetching()` from inside the first decorator: the decorator's request is not sent, the
  /// next decorator does not run, every decorator's `fetcherDidFinish` sees the cancellation, and
  /// Started/Stopped stay balanced (none posted).
  @Test(arguments: [false, true])
  func stopInsideTheFirstDecoratorSendsNothing(withCallback: Bool) async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.stopFetchingTriggersCompletionHandler = withCallback
    let first = ClosureDecorator { fetcher, request in
      fetcher.stopFetching()
      return request
    }
    let second = ClosureDecorator { _, request in request }
    service.addDecorator(first)
    service.addDecorator(second)
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let recorder = NotificationRecorder([fetcher])
    let results = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { first.finishedErrors.count == 1 && second.finishedErrors.count == 1 })
    // The end has run: every decorator's fetcherDidFinish, then the completion (or none).
    #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    await drain(service.callbackQueue)
    #expect(results.count == (withCallback ? 1 : 0))
    if withCallback { #expect(results.values.first?.fetcherError == .cancelled) }
    #expect(first.calls.count == 1 && second.calls.count == 0)
    #expect(first.finishedErrors.values == ["\(SessionFetcherError.cancelled)"])
    #expect(second.finishedErrors.values == ["\(SessionFetcherError.cancelled)"])
    #expect(engine.requests.isEmpty)
    #expect(recorder.started == 0 && recorder.stopped == 0)
    #expect(service.numberOfFetchers == 0)
  }

  /// A decorator that stops the fetch and then throws: the stop wins (one completion, cancelled),
  /// the error goes nowhere, nothing is sent.
  @Test func stopThenThrowInADecoratorCompletesOnceAsCancelled() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.stopFetchingTriggersCompletionHandler = true
    let decorator = ClosureDecorator { fetcher, _ in
      fetcher.stopFetching()
      throw DecoratorRefusal(code: 7)
    }
    service.addDecorator(decorator)
    let fetcher = service.fetcher(url: engine.url("/text?value=never"))
    let recorder = NotificationRecorder([fetcher])
    let results = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { results.count == 1 })
    // The end has run: every decorator's fetcherDidFinish, then the completion (or none).
    #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    await drain(service.callbackQueue)
    #expect(results.count == 1)
    #expect(results.values.first?.fetcherError == .cancelled)
    #expect(decorator.finishedErrors.values == ["\(SessionFetcherError.cancelled)"])
    #expect(engine.requests.isEmpty)
    #expect(recorder.started == 0 && recorder.stopped == 0 && recorder.completionInvoked == 1)
  }

  /// A `User-Agent` set by a decorator is the one sent: the decorators run after the user-agent
  /// provider and after the service's string were applied, so theirs is the last word.
  @Test func userAgentSetByADecoratorWinsOverProvidersAndTheServiceString() async throws {
    struct FixedProvider: UserAgentProvider {
      func userAgent() async -> String { "Provider/1.0" }
    }
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.userAgent = "String/1.0"
    service.addDecorator(
      ClosureDecorator { _, request in
        var request = request
        request.setValue("Decorated/1.0", forHTTPHeaderField: "User-Agent")
        return request
      })
    // The service's string alone, then a service provider, then a fetcher's provider.
    #expect(await service.fetcher(url: engine.url("/headers")).fetchResult().error == nil)
    service.userAgentProvider = FixedProvider()
    #expect(await service.fetcher(url: engine.url("/headers")).fetchResult().error == nil)
    let own = service.fetcher(url: engine.url("/headers"))
    own.userAgentProvider = FixedProvider()
    #expect(await own.fetchResult().error == nil)
    #expect(
      Self.sent(engine, "/headers", "User-Agent") == [
        "Decorated/1.0", "Decorated/1.0", "Decorated/1.0",
      ])
  }

  /// `fetcherDidFinish` of a fetch that ends with a 404 sees the error body as `data` and the
  /// status error, as the completion does.
  @Test func fetcherDidFinishSeesA404sDataAndError() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    let decorator = ClosureDecorator { _, request in request }
    service.addDecorator(decorator)
    let result = await service.fetcher(url: engine.url("/status/404")).fetchResult()
    #expect(result.fetcherError?.statusCode == 404)
    let body = try #require(result.data)
    #expect(!body.isEmpty)
    #expect(decorator.finishedData.values == [body])
    #expect(decorator.finishedErrors.values == ["\(SessionFetcherError.status(code: 404, data: body))"])
  }

  /// Headers a decorator sets per request (from the request itself, replacing one the caller set)
  /// are on each request sent, fetched at once.
  @Test func perRequestHeadersSetByADecoratorAreSent() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.addDecorator(
      ClosureDecorator { _, request in
        var request = request
        let items = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)?.queryItems
        let value = items?.first { $0.name == "value" }?.value ?? "?"
        request.setValue("for-\(value)", forHTTPHeaderField: "X-Per-Request")
        request.setValue("replaced", forHTTPHeaderField: "X-Caller")
        return request
      })
    let results = await withTaskGroup(of: FetchResult.self) { group in
      for index in 0..<4 {
        var request = URLRequest(url: engine.url("/text?value=\(index)"))
        request.setValue("original", forHTTPHeaderField: "X-Caller")
        let fetcher = service.fetcher(request: request)
        group.addTask { await fetcher.fetchResult() }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(results.allSatisfy { $0.error == nil })
    let sent = engine.requests(matching: "/text")
    #expect(sent.count == 4)
    #expect(zip(sent, Self.values(engine)).allSatisfy { $0.header("X-Per-Request") == "for-\($1 ?? "")" })
    #expect(sent.allSatisfy { $0.header("X-Caller") == "replaced" })
  }
}
