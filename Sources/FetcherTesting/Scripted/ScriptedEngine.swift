import FetcherService
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An engine for ``SessionFetcher`` and `FetcherService` that moves no byte over a socket: each
/// exchange answers what the test scripted, and the engine records what the fetcher sent.
///
/// A test scripts exchanges by URL (``respond(to:with:)``) or in order (``enqueue(_:)``), runs a
/// fetcher or a service on the engine (``fetcher(_:)``, `SessionFetcher.run(on:)`,
/// `FetcherService.run(on:)`), and checks the result and ``requests``. Everything the fetcher
/// decides — retries and their delays, redirects, challenges and authorizers, timeouts, stops,
/// pauses of a stream — runs exactly as on the real engines; only the timing is the script's.
///
/// ```swift
/// let engine = ScriptedEngine()
/// engine.respond(to: "/items", with: .response(status: 503), .response(body: Data("ok".utf8)))
/// let fetcher = engine.fetcher("/items")
/// fetcher.isRetryEnabled = true
/// fetcher.minRetryInterval = 0.01
/// let result = await fetcher.fetchResult()
/// #expect(result.data == Data("ok".utf8))
/// #expect(engine.requests.count == 2)
/// ```
///
/// The engine calls the fetcher from one serial queue of its own, one event at a time, as the real
/// engines do. It has no timer: the fetcher's own timeout ends a stalled exchange. It pauses a
/// stream by suspending the exchange (no step is performed until the fetcher resumes it). It never
/// follows a redirect itself: it offers the 3xx to the fetcher, then hands it over.
///
/// Thread safety: every member may be called from any thread.
public final class ScriptedEngine: Sendable {
  /// The scripts and the records, shared with the engine's sessions (which never hold the engine:
  /// its shared session holds them).
  let book: ScriptBook
  private let shared = Locked<SharedSession?>(nil)

  /// The virtual clock of the fetches' own timers on this engine, if it has one (see
  /// ``init(clock:)``).
  public var clock: ScriptedClock? { book.clock }

  /// The origin of ``url(_:)``.
  public static let origin = "https://scripted.test"

  /// An engine with nothing scripted, whose fetches' own timers (timeouts, retry waits) run on
  /// `clock` when given, advanced by the test (see ``ScriptedClock``), else in real time.
  public init(clock: ScriptedClock? = nil) {
    book = ScriptBook(clock: clock)
  }

  // MARK: Scripting

  /// Scripts the answers to the requests whose URL matches `pattern`, in order: the first such
  /// request gets the first exchange, and so on; the last exchange answers every request after it.
  ///
  /// `pattern` is a whole URL when it has a scheme (`https://other.test/x`), else a path (`/x`),
  /// with its query when it has one (`/x?a=1`; a path without a query matches any query and any
  /// origin). Where several patterns match, the most specific answers (a whole URL, then a path
  /// with its query, then a path). Later
  /// calls for the same pattern add exchanges after the ones it has. Requests that match no pattern
  /// take the exchanges of ``enqueue(_:)``.
  public func respond(to pattern: String, with exchanges: ScriptedExchange...) {
    book.state.withLock { state in
      if let index = state.routes.firstIndex(where: { $0.pattern == pattern }) {
        state.routes[index].exchanges += exchanges
      } else {
        state.routes.append(ScriptBook.Route(pattern: pattern, exchanges: exchanges))
      }
    }
  }

  /// Scripts the answers to the next requests that match no pattern of ``respond(to:with:)``, in
  /// order, each answered once. A request with nothing left to answer it fails with
  /// ``ScriptedEngineError/noScript(method:url:)``.
  public func enqueue(_ exchanges: ScriptedExchange...) {
    book.state.withLock { $0.queue += exchanges }
  }

  // MARK: Records

  /// Every request the fetchers sent on this engine, in the order they were made.
  public var requests: [ScriptedRequest] { book.state.withLock { $0.requests } }

  /// The requests whose URL matches `pattern` (as in ``respond(to:with:)``).
  public func requests(matching pattern: String) -> [ScriptedRequest] {
    requests.filter { ScriptBook.matches(pattern, $0.url) }
  }

  /// How many engine sessions the fetchers and services made on this engine (a service's shared
  /// session, a fetch's own, a stream's).
  public var sessionCount: Int { book.state.withLock { $0.sessionsMade } }

  /// Returns once every event the engine queued before the call has been performed, each handed
  /// to its fetcher: once ``requests`` shows an exchange `completed`, the fetcher has been told
  /// after this returns. A test checks what must not follow an event (a second completion, a late
  /// callback) without waiting a while for it:
  ///
  /// ```swift
  /// #expect(await eventually { engine.requests.first?.events.last?.kind == .completed(failed: true) })
  /// await engine.drainEvents()
  /// await drain(fetcher.callbackQueue)
  /// #expect(completions.count == 1)
  /// ```
  public func drainEvents() async {
    await drain(book.events)
  }

  // MARK: Running fetchers

  /// The URL of `path` on ``origin``.
  public func url(_ path: String) -> URL {
    URL(string: Self.origin + path) ?? URL(fileURLWithPath: "/")
  }

  /// A fetcher of `pathOrURL` (a path on ``origin``, or a whole URL) that runs on this engine, with
  /// a serial callback queue of its own (not the main queue, which a test may not run).
  public func fetcher(_ pathOrURL: String) -> SessionFetcher {
    let url = pathOrURL.contains("://") ? URL(string: pathOrURL) : url(pathOrURL)
    let fetcher = SessionFetcher(request: URLRequest(url: url ?? self.url("/")))
    fetcher.callbackQueue = DispatchQueue(label: "FetcherTesting.ScriptedEngine.callbacks")
    fetcher.run(on: self)
    return fetcher
  }

  /// The session that fetchers run on this engine share when they have no configuration of their
  /// own.
  var sharedSession: SharedSession {
    shared.withLock { shared in
      if let session = shared { return session }
      let session = SharedSession(configuration: nil, engineSessions: book.makeSession)
      shared = session
      return session
    }
  }
}

/// The scripts and records of a ``ScriptedEngine``, and the queue its exchanges' events run on.
final class ScriptBook: Sendable {
  struct Route {
    var pattern: String
    var exchanges: [ScriptedExchange]
    var next = 0
  }

  struct State {
    var routes: [Route] = []
    var queue: [ScriptedExchange] = []
    var requests: [ScriptedRequest] = []
    var sequence = 0
    var sessionsMade = 0
  }

  let state = Locked(State())
  /// Where every exchange's events are performed, one at a time.
  let events = DispatchQueue(label: "FetcherTesting.ScriptedEngine")
  /// The clock of the fetches' timers, nil for real time.
  let clock: ScriptedClock?

  init(clock: ScriptedClock?) {
    self.clock = clock
  }

  /// Makes a new engine session on this book.
  var makeSession: SharedSession.EngineSessionMaker {
    { [self] configuration in
      state.withLock { $0.sessionsMade += 1 }
      return ScriptedEngineSession(book: self, configuration: configuration)
    }
  }

  /// The exchange for `request` and its record's index, or nil for none scripted.
  func take(_ request: URLRequest, headers: [String: String]) -> (ScriptedExchange?, Int) {
    let url = request.url ?? URL(fileURLWithPath: "/")
    return state.withLock { state in
      var exchange: ScriptedExchange?
      // The most specific pattern wins (a whole URL, then a path with its query, then a path).
      let matching = state.routes.indices.filter { Self.matches(state.routes[$0].pattern, url) }
      if let index = matching.min(by: {
        Self.specificity(state.routes[$0].pattern) > Self.specificity(state.routes[$1].pattern)
      }) {
        let route = state.routes[index]
        exchange = route.exchanges[min(route.next, route.exchanges.count - 1)]
        state.routes[index].next += 1
      } else if !state.queue.isEmpty {
        exchange = state.queue.removeFirst()
      }
      let record = ScriptedRequest(
        index: state.requests.count, method: (request.httpMethod ?? "GET").uppercased(), url: url,
        headers: headers, body: Data(), wasUnscripted: exchange == nil, events: [])
      state.requests.append(record)
      return (exchange, record.index)
    }
  }

  /// Records an event of exchange `index`.
  func record(_ kind: ScriptedTaskEvent.Kind, of index: Int, steps: Int, bytes: Int) {
    state.withLock { state in
      state.requests[index].events.append(
        ScriptedTaskEvent(
          kind: kind, sequence: state.sequence, performedSteps: steps, deliveredBodyBytes: bytes))
      state.sequence += 1
    }
  }

  /// Records the body bytes exchange `index` sent.
  func record(body: Data, of index: Int) {
    state.withLock { $0.requests[index].body = body }
  }

  private static func specificity(_ pattern: String) -> Int {
    pattern.contains("://") ? 2 : (pattern.contains("?") ? 1 : 0)
  }

  static func matches(_ pattern: String, _ url: URL) -> Bool {
    if pattern.contains("://") {
      var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
      components?.fragment = nil
      return components?.string == pattern
    }
    let path = url.path.isEmpty ? "/" : url.path
    if pattern.contains("?") {
      return pattern == path + "?" + (url.query ?? "")
    }
    return pattern == path
  }
}

extension SessionFetcher {
  /// Makes this fetcher run on `engine`: every exchange of its fetches, those of a configuration of
  /// its own and of streams included, is answered by the engine's script.
  ///
  /// Call it before the fetch begins. A fetcher made by a service that runs on the engine
  /// (`FetcherService.run(on:)`) needs no call.
  public func run(on engine: ScriptedEngine) {
    sessionProvider = { engine.sharedSession }
    engineSessions = engine.book.makeSession
  }
}

extension FetcherService {
  /// Makes this service run on `engine`: the sessions it makes from now on (its shared session, a
  /// fetcher's own configuration) move their exchanges on the engine, and the current shared
  /// session is let go of (as with `resetSession()`), so that every fetcher begun from now on runs
  /// on the engine.
  public func run(on engine: ScriptedEngine) {
    engineSessions = engine.book.makeSession
    resetSession()
  }
}
