import FetcherTesting
import Foundation
import SessionFetcher

/// `timeout-probe redirect-cancel`: a task that is waiting for its delegate's answer to a redirect
/// is cancelled (its fetch timed out), and the answer comes afterwards. FoundationNetworking kills
/// the process when an answer reaches a cancelled task (see `CancelledRedirectGuard`), so this runs in
/// a child process; URLSession engine (the only one with that answer).
///
/// A first fetch holds the session's delegate queue in its first body event. A second fetch on the
/// same session gets a 302: its task asks the delegate about the redirect, and the question waits
/// behind the hold. Its 1 s timeout ends the fetch, and its task is cancelled. Then the hold is
/// released, the delegate queue answers (or, with the gate, does not), and two more fetches on the
/// session go through the work queue after it. Prints `redirect error <code>, survived` and exits 0,
/// or exits 1 with what it waited for in vain; the process is killed by a signal if the answer
/// reached the cancelled task.
enum RedirectCancel {
  static func run() {
    guard let server = try? TestServer() else { TimeoutProbe.fail("no test server") }
    let session = SharedSession(configuration: nil, engine: .urlSession)
    let hold = ReadHold()
    let blocker = fetcher(server.url("/bytes/10"), session: session, timeout: 30)
    blocker.eventMonitors = [HoldInFirstData(hold)]
    let blockerDone = DispatchSemaphore(value: 0)
    blocker.beginFetch { _, _ in blockerDone.signal() }
    guard hold.waitUntilReading(timeout: 20) else { TimeoutProbe.fail("the delegate queue was never held") }

    let redirected = fetcher(server.url("/redirect?to=/bytes/10"), session: session, timeout: 1)
    let outcome = Outcome()
    let redirectedDone = DispatchSemaphore(value: 0)
    redirected.beginFetch { _, error in
      outcome.set((error as? URLError).map { "\($0.code.rawValue)" } ?? String(describing: error))
      redirectedDone.signal()
    }
    guard redirectedDone.wait(timeout: .now() + 20) == .success else {
      TimeoutProbe.fail("the redirected fetch did not time out")
    }
    guard server.requestCount(path: "/redirect") == 1 else {
      TimeoutProbe.fail("the 302 was never asked for")
    }
    // The timed-out task's cancel() has returned: its cancellation is on the work queue before the
    // answer to the redirect can be.
    (session.engineSession as? URLSessionEngineSession)?.taskQueue.sync {}
    hold.release()
    guard blockerDone.wait(timeout: .now() + 20) == .success else {
      TimeoutProbe.fail("the first fetch never ended")
    }
    for index in 0..<2 {
      let after = fetcher(server.url("/bytes/10"), session: session, timeout: 30)
      let done = DispatchSemaphore(value: 0)
      after.beginFetch { _, _ in done.signal() }
      guard done.wait(timeout: .now() + 20) == .success else {
        TimeoutProbe.fail("fetch \(index) after the hold never ended")
      }
    }
    session.invalidateAndCancel()
    server.stop()
    print("redirect error \(outcome.get()), survived")
    TimeoutProbe.finish(0)
  }

  static func fetcher(_ url: URL, session: SharedSession, timeout: TimeInterval) -> SessionFetcher {
    var request = URLRequest(url: url)
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "redirect-cancel")
    fetcher.sessionProvider = { session }
    return fetcher
  }
}

/// Holds the thread of the fetch's first body event (the session's delegate queue) until released.
final class HoldInFirstData: FetcherEventMonitor, @unchecked Sendable {
  // `@unchecked Sendable`: `held` is only touched under `lock`; `hold` is Sendable.
  private let hold: ReadHold
  private let lock = NSLock()
  private var held = false

  init(_ hold: ReadHold) { self.hold = hold }

  func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
    let first = lock.withLock {
      defer { held = true }
      return !held
    }
    if first { hold.holdRead() }
  }
}
