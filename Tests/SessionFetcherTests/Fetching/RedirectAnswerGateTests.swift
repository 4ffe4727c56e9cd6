import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Which redirect answers `RedirectAnswerGate` lets through: none to a task the library marked as
/// cancelled, or to any task of a session it cancelled whole; a completed task's mark is dropped.
/// (The crash it prevents is shown in a child process by `TimeoutTests`.)
@Suite("Redirect answers and cancellations")
struct RedirectAnswerGateTests {
  /// Whether `task`'s answer is let through.
  static func answered(_ task: URLSessionTask, _ dispatcher: SessionDispatcher) -> Bool {
    var given = false
    RedirectAnswerGate.answer(task, dispatcher: dispatcher) { given = true }
    return given
  }

  @Test func aMarkedTaskGetsNoAnswerUntilItCompletes() {
    let dispatcher = SessionDispatcher(onInvalidate: {})
    let session = URLSession(configuration: .ephemeral, delegate: dispatcher, delegateQueue: nil)
    defer { session.invalidateAndCancel() }
    let url = URL(string: "http://127.0.0.1:9/")!
    let marked = session.dataTask(with: url)
    let other = session.dataTask(with: url)
    #expect(Self.answered(marked, dispatcher))
    RedirectAnswerGate.mark(marked)
    #expect(!Self.answered(marked, dispatcher))
    #expect(Self.answered(other, dispatcher))
    RedirectAnswerGate.completed(marked)
    #expect(Self.answered(marked, dispatcher))
  }

  @Test func aSessionCancelledWholeAnswersNoTask() {
    let dispatcher = SessionDispatcher(onInvalidate: {})
    let session = URLSession(configuration: .ephemeral, delegate: dispatcher, delegateQueue: nil)
    let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/")!)
    let otherDispatcher = SessionDispatcher(onInvalidate: {})
    let otherSession = URLSession(configuration: .ephemeral, delegate: otherDispatcher, delegateQueue: nil)
    defer { otherSession.invalidateAndCancel() }
    let otherTask = otherSession.dataTask(with: URL(string: "http://127.0.0.1:9/")!)
    RedirectAnswerGate.invalidateAndCancel(session, dispatcher: dispatcher)
    #expect(!Self.answered(task, dispatcher))
    #expect(Self.answered(otherTask, otherDispatcher))
  }

  /// A mark that outlives its task (marked after its completion was reported) is swept once 1,024
  /// marks are kept.
  @Test func marksOfReleasedTasksAreSwept() async {
    final class Watch: @unchecked Sendable {
      // `@unchecked Sendable`: written before the wait, only read while polling.
      var tasks: [Weak] = []
      struct Weak { weak var task: URLSessionTask? }
      var allReleased: Bool { tasks.allSatisfy { $0.task == nil } }
    }
    let watch = Watch()
    do {
      // No delegate: nothing reports the completions to the gate, so every mark outlives its task.
      let session = URLSession(configuration: .ephemeral)
      for _ in 0..<1100 {
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/")!)
        RedirectAnswerGate.mark(task)
        watch.tasks.append(Watch.Weak(task: task))
      }
      session.invalidateAndCancel()
    }
    #expect(await eventually(timeout: 30) { watch.allReleased })
    let dispatcher = SessionDispatcher(onInvalidate: {})
    let session = URLSession(configuration: .ephemeral, delegate: dispatcher, delegateQueue: nil)
    defer { session.invalidateAndCancel() }
    RedirectAnswerGate.mark(session.dataTask(with: URL(string: "http://127.0.0.1:9/")!))
    // Other suites' fetches may hold a few marks of their own meanwhile.
    #expect(RedirectAnswerGate.markedCount < 200)
  }
}
