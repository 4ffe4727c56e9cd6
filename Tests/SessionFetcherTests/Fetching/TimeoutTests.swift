import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// A timeout ends its fetch on time even when the engine is slow to report: FoundationNetworking
/// cancels a task, and reports it, through a serial work queue shared by the whole process and
/// then the session's delegate queue, which fall seconds behind with many transfers in flight on
/// a busy machine. The sessions here are on the engine the tests run on (`SESSIONFETCHER_ENGINE`).
@Suite("Timeouts with a busy engine", .ownThreads)
struct TimeoutTests {
  /// Holds the engine's event thread (URLSession's delegate queue, the libcurl loop thread) in the
  /// first data event of the fetch it watches, until the test releases it: the engine can report
  /// nothing of any of the session's tasks meanwhile.
  final class EngineHold: FetcherEventMonitor, @unchecked Sendable {
    private let holding = Recorder<Bool>()
    private let release = Gate()

    var isHolding: Bool { holding.count > 0 }

    func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
      guard holding.appendIfEmpty(true) else { return }
      // A bound for a test that fails before it releases the hold, longer than its own waits.
      release.wait(timeout: 45)
    }

    func releaseEngine() {
      release.open()
    }
  }

  /// Records the `X-Attempt` header of every response head the fetcher is told of.
  final class AttemptWatch: FetcherEventMonitor, @unchecked Sendable {
    let attempts = Recorder<String>()
    let retries = Recorder<Bool>()

    func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
      attempts.append((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Attempt") ?? "none")
    }

    func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {
      retries.append(true)
    }
  }

  /// A session whose engine thread is held by a fetch of 10 bytes, and that fetch's result.
  static func heldSession(_ server: TestServer) async
    -> (SharedSession, EngineHold, Task<FetchResult, Never>)
  {
    let session = SharedSession(configuration: nil, engine: .default)
    let hold = EngineHold()
    let blocker = server.fetcher("/bytes/10")
    blocker.sessionProvider = { session }
    blocker.eventMonitors = [hold]
    let result = Task { await blocker.fetchResult(timeout: 60) }
    #expect(await eventually { hold.isHolding })
    return (session, hold, result)
  }

  /// A fetcher of `path` on `session` with the idle timeout `timeout`.
  static func fetcher(
    _ server: TestServer, _ path: String, session: SharedSession, timeout: TimeInterval
  ) -> SessionFetcher {
    var request = URLRequest(url: server.url(path))
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.sessionProvider = { session }
    return fetcher
  }

  /// A request that never gets an answer times out after its 1 s while the engine can report
  /// nothing: the fetch ends by the fetcher's own timer, not when the engine gets round to it.
  @Test func aTimeoutEndsTheFetchWhileTheEngineIsBusy() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (session, hold, blocked) = await Self.heldSession(server)
    defer { session.invalidateAndCancel() }

    // The hold lasts until the result is in: without the fetcher's own end, none would come.
    let result = await Self.fetcher(server, "/hang", session: session, timeout: 1).fetchResult(timeout: 60)
    hold.releaseEngine()
    #expect(result.urlError?.code == .timedOut)
    #expect(result.urlError?.failingURL == server.url("/hang"))
    // The held fetch goes on as if nothing happened.
    #expect(await blocked.value.data == TestServer.patternBytes(count: 10))
  }

  /// A request that never gets an answer times out while the engine cannot even take a
  /// cancellation: on the URLSession engine, a stream body's read holds FoundationNetworking's work
  /// queue, which `cancel()` waits for (the libcurl engine reads such a body on a thread of its
  /// own). That hold stops every URLSession of the process, so it is made in a child process,
  /// `timeout-probe` (built beside the tests), on the engine the tests run on. The fetcher's side
  /// (it ends the attempt without waiting for the engine) is
  /// `ScriptedTimeoutTests.aTimeoutEndsTheFetchWhileTheEngineCannotCancel`.
  ///
  /// The timeout must outlast making the hold (an upload begun and its body's first read, tens of
  /// milliseconds on an idle machine), hence 2 s; a run where a loaded machine let it run out
  /// first ("while held: false") is made again with a longer one.
  @Test(.linuxOnly("needs Linux: runs timeout-probe as a child process"))
  func aTimeoutEndsTheFetchWhileTheEngineCannotCancel() async throws {
    #if os(Linux)
      for timeout in [2, 5, 15] {
        let (exit, lines) = try await ChildProcess.runProbe(named: "timeout-probe", arguments: ["\(timeout)"])
        #expect(exit.exitCode == 0, "\(exit): \(lines)")
        if lines.last == "error \(URLError.Code.timedOut.rawValue) while held: false" { continue }
        #expect(lines.last == "error \(URLError.Code.timedOut.rawValue) while held: true", "\(lines)")
        return
      }
      Issue.record("the timeout ran out before the hold was made, even with 15 s")
    #endif
  }

  /// The answer to a redirect never reaches a task cancelled while it waited for it: that kills the
  /// process in FoundationNetworking (`CancelledRedirectGuard`). `timeout-probe redirect-cancel` holds
  /// the session's delegate queue while a redirected fetch times out and its task is cancelled, then
  /// lets the answer through; in a child process, on the URLSession engine whatever the tests run on.
  @Test(.linuxOnly("needs Linux: runs timeout-probe as a child process"))
  func aRedirectAnswerNeverReachesACancelledTask() async throws {
    #if os(Linux)
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "timeout-probe", arguments: ["redirect-cancel"])
      #expect(exit.exitCode == 0, "\(exit): \(lines.suffix(20))")
      #expect(
        lines.last == "redirect error \(URLError.Code.timedOut.rawValue), survived", "\(lines.suffix(20))")
    #endif
  }

  /// An attempt that timed out while the engine was busy is let go of: what its task reports later
  /// (its response head, half a body, its cancellation) never reaches the retry, which gets the
  /// whole body of its own. URLSession engine only: a held libcurl loop thread sends no retry.
  @Test(.enabled(if: FetcherEngine.default == .urlSession))
  func aTimedOutAttemptsLateEventsDoNotReachTheRetry() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (session, hold, blocked) = await Self.heldSession(server)
    defer { session.invalidateAndCancel() }

    let fetcher = Self.fetcher(
      server, "/fail-first?n=1&key=late&fault=stall&bytes=4096", session: session, timeout: 2)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.02
    let watch = AttemptWatch()
    fetcher.eventMonitors = [watch]
    let pending = Task { await fetcher.fetchResult(timeout: 40) }
    // The first attempt's answer (a head and half the body) waits behind the hold; the attempt
    // times out, and the retry is on the wire before the engine reports anything.
    #expect(await eventually(timeout: 60) { watch.retries.count > 0 && server.requests.count >= 3 })
    hold.releaseEngine()
    let result = await pending.value
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 4096))
    // Only later attempts' heads (a loaded machine may time out the second as well, and the third
    // answers the same), never the first's.
    #expect(
      !watch.attempts.values.isEmpty && !watch.attempts.values.contains("1"), "\(watch.attempts.values)")
    #expect(await blocked.value.data == TestServer.patternBytes(count: 10))
  }

  /// The timeout runs from the moment the hop is handed on, not from when the engine's task exists:
  /// a body stream provider that blocks (as making a task on FoundationNetworking's shared work
  /// queue does when it is seconds behind) does not put the timeout off. The provider is held until
  /// the result is in; without the timeout covering that time, no result would come while it holds.
  @Test func theTimeoutCoversTheTimeBeforeTheEnginesTaskExists() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let session = SharedSession(configuration: nil, engine: .default)
    defer { session.invalidateAndCancel() }
    let fetcher = Self.fetcher(server, "/echo", session: session, timeout: 1)
    fetcher.request?.httpMethod = "POST"
    let hold = Gate()
    let providerReturned = Recorder<Bool>()
    fetcher.bodyStreamProvider = {
      hold.wait(timeout: 30)
      providerReturned.append(true)
      return InputStream(data: Data("late".utf8))
    }
    let done = Recorder<FetchResult>()
    // On a thread of its own: the provider may be asked on the thread that begins the fetch.
    Thread.detachNewThread {
      fetcher.beginFetch { data, error in done.append(FetchResult(data: data, error: error)) }
    }
    #expect(await eventually(timeout: 60) { done.count > 0 })
    let heldUntilTheEnd = providerReturned.count == 0
    hold.open()
    #expect(heldUntilTheEnd, "the result came only after the provider returned")
    #expect(done.values.first?.urlError?.code == .timedOut, "\(String(describing: done.values.first?.error))")
  }
}
