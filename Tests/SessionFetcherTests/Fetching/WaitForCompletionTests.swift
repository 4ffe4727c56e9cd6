import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// `waitForCompletion(timeout:)` where it cannot simply block: on the main thread, whose run loop
/// must deliver main-queue callbacks, and on the very queue that must run the completion.
@Suite(.ownThreads) struct WaitForCompletionTests {
  /// A command-line tool's top-level code before its first `await`: the wait runs the main run loop,
  /// so the completion (on the main queue, the default) runs and the wait returns true.
  @Test(.linuxOnly("needs Linux: runs wait-probe as a child process"))
  func onTheMainThreadTheMainQueueRuns() async throws {
    #if os(Linux)
      let (exit, lines) = try await ChildProcess.runProbe(named: "wait-probe", arguments: ["main-thread"])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.last == "returned true, completion ran true", "\(lines)")
    #endif
  }

  /// Top-level code after an `await`, and a main-queue block on the main thread, run on the main
  /// queue, which must run the completion: the wait says so on standard error and returns false (at
  /// once off the main thread, at its timeout on it), and the completion runs once the queue is free.
  @Test(
    .linuxOnly("needs Linux: runs wait-probe as a child process"),
    arguments: ["after-await", "main-queue-block"])
  func onTheMainQueueTheWaitSaysWhyItCannotComplete(_ mode: String) async throws {
    #if os(Linux)
      let (exit, lines) = try await ChildProcess.runProbe(named: "wait-probe", arguments: [mode])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.contains(SessionFetcher.blockedWaitWarning(onMainQueue: true)), "\(lines)")
      #expect(lines.contains("returned false, completion ran false"), "\(lines)")
      #expect(lines.last == "later: completion ran true", "\(lines)")
    #endif
  }

  /// Called in a block of the fetcher's own serial callback queue, the wait returns false without
  /// waiting its timeout; the completion runs when the block ends.
  @Test func onTheCallbackQueueTheWaitReturnsAtOnce() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = makeCallbackQueue()
    let fetcher = server.fetcher("/delay/0.1", queue: queue)
    let completions = Recorder<Bool>()
    fetcher.beginFetch { _, error in completions.append(error == nil) }
    let outcome: (returned: Bool, seconds: TimeInterval) = queue.sync {
      let start = Date()
      let returned = fetcher.waitForCompletion(timeout: 60)
      return (returned, Date().timeIntervalSince(start))
    }
    #expect(!outcome.returned)
    // Well below the 60 s it would otherwise wait in vain (the bound allows a loaded machine).
    #expect(outcome.seconds < 30)
    #expect(await eventually(timeout: 30) { completions.values == [true] })
    // Once the completion ran, a wait on the callback queue answers true.
    #expect(queue.sync { fetcher.waitForCompletion(timeout: 1) })
  }

}
