import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
  import TestTraits
#endif

/// Which redirect answers a `CancelledRedirectGuard` lets through: none to a task the library marked
/// as cancelled, or to any task of a session it cancelled whole; a completed task's mark is
/// dropped, and marks that outlive their tasks are swept. Plain objects stand for the tasks and
/// sessions (the crash the gate prevents is shown in a child process by `TimeoutTests`).
@Suite("Redirect answers and cancellations", .ownThreads)
struct RedirectAnswerGateTests {
  final class Task {}
  final class Session {}

  /// Whether `task`'s answer is let through.
  static func answered(_ gate: CancelledRedirectGuard<Task>, _ task: Task, _ session: Session) -> Bool {
    var given = false
    gate.answer(task, session: session) { given = true }
    return given
  }

  @Test func aMarkedTaskGetsNoAnswerUntilItCompletes() {
    let gate = CancelledRedirectGuard<Task>()
    let session = Session()
    let marked = Task()
    let other = Task()
    #expect(Self.answered(gate, marked, session))
    gate.mark(marked)
    #expect(!Self.answered(gate, marked, session))
    #expect(Self.answered(gate, other, session))
    gate.completed(marked)
    #expect(Self.answered(gate, marked, session))
    #expect(gate.markedCount == 0)
  }

  @Test func aSessionCancelledWholeAnswersNoTaskUntilItIsReleased() {
    let gate = CancelledRedirectGuard<Task>()
    let session = Session()
    let other = Session()
    let task = Task()
    gate.markSession(session)
    #expect(!Self.answered(gate, task, session))
    #expect(Self.answered(gate, task, other))
    gate.released(ObjectIdentifier(session))
    #expect(Self.answered(gate, task, session))
  }

  /// A mark that outlives its task (marked after its completion was reported) is swept once the
  /// gate holds `sweepAt` marks; a mark of a task still alive stays.
  @Test func marksOfReleasedTasksAreSwept() {
    let gate = CancelledRedirectGuard<Task>(sweepAt: 8)
    let session = Session()
    let alive = Task()
    gate.mark(alive)
    var released = (0..<7).map { _ in Task() }
    for task in released { gate.mark(task) }
    #expect(gate.markedCount == 8)
    released.removeAll()
    let last = Task()
    gate.mark(last)
    #expect(gate.markedCount == 2)
    #expect(!Self.answered(gate, alive, session))
    #expect(!Self.answered(gate, last, session))
  }

  /// A task released while marked, and a new one at the same address, is not taken for it.
  @Test func aMarkIsNeverTakenForALaterTask() {
    let gate = CancelledRedirectGuard<Task>()
    let session = Session()
    for _ in 0..<100 { gate.mark(Task()) }
    // New objects often reuse the addresses of the ones just released.
    for _ in 0..<100 { #expect(Self.answered(gate, Task(), session)) }
  }

  /// A URLSession task the fetcher lets go of is marked in the process's gate at once, before its
  /// `cancel()` has its turn on the engine's task queue (held here): an answer may not slip in while
  /// the cancellation waits.
  @Test func aTaskLetGoOfIsMarkedBeforeItsCancellationRuns() throws {
    let engine = URLSessionEngineSession(configuration: .ephemeral)
    defer { engine.invalidateAndCancel() }
    let handler = EngineEventRecorder()
    let engineTask = try #require(
      engine.makeTask(
        request: URLRequest(url: URL(string: "http://127.0.0.1:9/")!), body: .none, tls: TLSSettings(),
        route: TransportRoute(), handler: handler) as? URLSessionEngineTask)
    // Made in its turn on the engine session's queue.
    engine.taskQueue.sync {}
    let task = try #require(engineTask.urlSessionTask)
    let release = DispatchSemaphore(value: 0)
    let held = DispatchSemaphore(value: 0)
    engine.taskQueue.async {
      held.signal()
      _ = release.wait(timeout: .now() + 10)
    }
    try #require(held.wait(timeout: .now() + 30) == .success)
    SessionFetcher.letGo(engineTask)
    var given = false
    URLSessionDelegateRouter.redirectGate.answer(task, session: engine.dispatcher) { given = true }
    release.signal()
    #expect(!given)
    URLSessionDelegateRouter.redirectGate.completed(task)
  }
}
