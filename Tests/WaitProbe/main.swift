import FetcherTesting
import Foundation
import SessionFetcher

// `waitForCompletion(timeout:)` where a command-line tool calls it, with the main queue as the
// callback queue (the default). Run by `WaitForCompletionTests` in a child process, because each
// mode needs the main thread of a process of its own. Top-level code, as in a user's main.swift; the
// `await` below makes it async top-level code, whose code before its first `await` runs on the main
// thread and after it on the main queue, off the main thread.
//
//     wait-probe main-thread         before any await: waits while the main run loop runs
//     wait-probe after-await         after an await: on the main queue, which must run the completion
//     wait-probe main-queue-block    in a main-queue block run by the main run loop
//
// Prints `returned R, completion ran C` (and, after a refused wait, `later: completion ran C` once
// the main queue is free), then exits 0; exits 1 when something took longer than a minute.

/// Writes `line` to standard output at once (unbuffered: the probe ends with `exit`).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// What the completion handler saw, and a wait for it.
final class Flag: @unchecked Sendable {
  // Guarded by `condition`.
  private var value = false
  private let condition = NSCondition()
  var isSet: Bool { condition.withLock { value } }
  func set() {
    condition.withLock {
      value = true
      condition.broadcast()
    }
  }
  /// Blocks until the flag is set, at most `timeout` seconds.
  func wait(timeout: TimeInterval) {
    let deadline = Date().addingTimeInterval(timeout)
    condition.withLock {
      while !value && condition.wait(until: deadline) {}
    }
  }
}

/// A fetch of a short delayed body from `server`, calling back on the main queue.
func beginFetch(_ server: TestServer) -> (SessionFetcher, Flag) {
  let fetcher = SessionFetcher.fetcher(url: server.url("/delay/0.2"))
  fetcher.allowLocalhostRequest = true
  let ran = Flag()
  fetcher.beginFetch { _, _ in ran.set() }
  return (fetcher, ran)
}

/// The wait, then the report; returns what the completion handler sets.
func waitAndReport(_ server: TestServer, timeout: TimeInterval) -> Flag {
  let (fetcher, ran) = beginFetch(server)
  let returned = fetcher.waitForCompletion(timeout: timeout)
  say("returned \(returned), completion ran \(ran.isSet)")
  return ran
}

/// After a refused wait: the completion once the main queue is free (waited for off the main queue),
/// then the exit.
func reportLater(_ ran: Flag) {
  ran.wait(timeout: 60)
  say("later: completion ran \(ran.isSet)")
  exit(0)
}

/// Runs the main run loop (a synchronous function: `RunLoop.run()` is unavailable from async code).
func runMainRunLoop() -> Never {
  RunLoop.main.run()
  exit(1)
}

DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
  say("timed out")
  exit(1)
}
let server = try TestServer()
switch CommandLine.arguments.dropFirst().first {
case "main-thread":
  let (fetcher, ran) = beginFetch(server)
  let returned = fetcher.waitForCompletion(timeout: 30)
  say("returned \(returned), completion ran \(ran.isSet)")
  exit(0)
case "after-await":
  // A real suspension (a hop through another queue): what follows runs on the main queue.
  await drain(DispatchQueue.global())
  let ran = waitAndReport(server, timeout: 30)
  // Suspended while another thread waits for the completion, the main queue is free to run it.
  await offThePool { reportLater(ran) }
case "main-queue-block":
  // The wait cannot tell this case before its timeout: a short one.
  DispatchQueue.main.async {
    let ran = waitAndReport(server, timeout: 2)
    DispatchQueue.global().async { reportLater(ran) }
  }
  runMainRunLoop()
default:
  say("usage: wait-probe main-thread|after-await|main-queue-block")
  exit(2)
}
