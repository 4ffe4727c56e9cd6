import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Adds a bearer token, running `work` (with the fetcher being authorized) first and recording
/// each call; throws ``Refusal`` when `fails`.
private final class ScriptedAuthorizer: FetcherAuthorizer, Sendable {
  struct Refusal: Error {}
  private let fetcher = WeakReference<SessionFetcher>()
  let calls = Recorder<Bool>()
  /// The requests a stopped fetch asked to stop authorizing.
  let stops = Recorder<URLRequest>()
  let fails: Bool
  let work: @Sendable (SessionFetcher?) -> Void

  init(fails: Bool = false, work: @escaping @Sendable (SessionFetcher?) -> Void = { _ in }) {
    self.fails = fails
    self.work = work
  }

  func attach(to fetcher: SessionFetcher) {
    self.fetcher.object = fetcher
    fetcher.authorizer = self
  }

  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    calls.append(true)
    work(fetcher.object)
    if fails { throw Refusal() }
    var request = request
    request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
    return request
  }

  func stopAuthorization(for request: URLRequest) {
    stops.append(request)
  }
}

/// The original's `testStopFetch*_AuthNotCalled_PreBeginStop` and `testStopFetch*_SyncAuth_Stop*`:
/// a fetch with an authorizer stopped at each point, with and without the completion flag, made
/// by a service and standalone; and `testFailToBeginFetchCleansUpSession`.
@Suite("Authorizer: stops at each point, failure")
struct AuthorizerStopTests {
  enum StopPoint: String, CaseIterable, Sendable {
    /// `stopFetching()` before `beginFetch`: the authorizer is never called.
    case beforeBegin
    /// From inside the authorizer, which then returns its request: nothing is sent.
    case insideAuthorizer
    /// Right after `beginFetch` returns: the authorizer may or may not have run; nothing completes
    /// but the cancellation.
    case afterBegin
    /// Once the request reached the server (`/hang` never answers).
    case afterStarted
  }

  static let cases: [(StopPoint, Bool, Bool)] = StopPoint.allCases.flatMap { point in
    [(point, false, false), (point, true, false), (point, false, true), (point, true, true)]
  }

  /// A fetcher of `service`, or a standalone one for the test server (localhost allowed, callbacks
  /// on a queue of its own) when `service` is nil.
  static func fetcher(for url: URL, from service: FetcherService?) -> SessionFetcher {
    if let service { return service.fetcher(url: url) }
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "test.authorizer.callbacks")
    return fetcher
  }

  @Test(arguments: cases)
  func stopAt(point: StopPoint, withCallback: Bool, withService: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let fetcher = Self.fetcher(for: server.url("/hang"), from: withService ? service : nil)
    fetcher.stopFetchingTriggersCompletionHandler = withCallback
    let authorizer = ScriptedAuthorizer { fetcher in
      if point == .insideAuthorizer { fetcher?.stopFetching() }
    }
    authorizer.attach(to: fetcher)
    let recorder = NotificationRecorder([fetcher])
    let results = Recorder<FetchResult>()
    if point == .beforeBegin { fetcher.stopFetching() }
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    switch point {
    case .afterBegin:
      fetcher.stopFetching()
    case .afterStarted:
      #expect(await eventually { server.requestCount(path: "/hang") == 1 })
      fetcher.stopFetching()
    case .beforeBegin, .insideAuthorizer:
      break
    }
    if withCallback { #expect(await eventually { results.count == 1 }) }
    // Inside the authorizer, the stop comes just after the call is recorded.
    #expect(await eventually { !fetcher.isFetching })
    await pause(0.3)
    await drain(fetcher.callbackQueue)

    #expect(results.count == (withCallback ? 1 : 0))
    if withCallback { #expect(results.values.first?.fetcherError == .cancelled) }
    #expect(recorder.started == recorder.stopped)
    switch point {
    case .beforeBegin:
      #expect(authorizer.calls.count == 0)
      #expect(server.requestCount(path: "/hang") == 0)
      #expect(recorder.started == 0)
      #expect(authorizer.stops.count == 0)
    case .insideAuthorizer:
      #expect(authorizer.calls.count == 1)
      #expect(server.requestCount(path: "/hang") == 0)
      #expect(recorder.started == 0)
      // Stopped while authorizing: told once, with the request it was given, service or not.
      #expect(authorizer.stops.values.map(\.url) == [server.url("/hang")])
    case .afterBegin:
      #expect(authorizer.calls.count <= 1)
      #expect(server.requestCount(path: "/hang") <= 1)
      #expect(authorizer.stops.count <= 1)
    case .afterStarted:
      #expect(authorizer.stops.count == 0)
      #expect(authorizer.calls.count == 1)
      #expect(server.requests(path: "/hang").map { $0.header("Authorization") } == ["Bearer token"])
      #expect(recorder.started == 1)
    }
    #expect(service.numberOfFetchers == 0)
  }

  /// The original's testFailToBeginFetchCleansUpSession: an authorizer that fails ends the fetch
  /// with its own error before anything is sent, no Started/Stopped, and lets go of the
  /// session: one the fetcher made for itself (a configuration of its own) is invalidated; a
  /// service's fetcher leaves the service.
  @Test(arguments: [false, true])
  func authorizerFailureReleasesTheSession(withService: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let fetcher = Self.fetcher(for: server.url("/bytes/10"), from: withService ? service : nil)
    if !withService { fetcher.configurationBlock = { $0.httpMaximumConnectionsPerHost = 2 } }
    let authorizer = ScriptedAuthorizer(fails: true)
    authorizer.attach(to: fetcher)
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error is ScriptedAuthorizer.Refusal, "\(String(describing: result.error))")
    #expect(result.data == nil)
    #expect(authorizer.calls.count == 1)
    #expect(server.requestCount(path: "/bytes/10") == 0)
    await drain(fetcher.callbackQueue)
    #expect(recorder.started == 0 && recorder.stopped == 0 && recorder.completionInvoked == 1)
    let session = try #require(fetcher.fetchSession)
    if withService {
      #expect(!session.owned)
      #expect(service.numberOfFetchers == 0)
      #expect(service.issuedFetchers.isEmpty)
    } else {
      #expect(session.owned)
      #expect(session.session.isInvalidated)
    }
  }
}
