import Foundation
import SessionFetcher
import Testing

/// Which redirect answers a `RedirectAnswerGate` lets through: none to a task the library marked
/// as cancelled, or to any task of a session it cancelled whole; a completed task's mark is
/// dropped, and marks that outlive their tasks are swept. Plain objects stand for the tasks and
/// sessions (the crash the gate prevents is shown in a child process by `TimeoutTests`).
@Suite("Redirect answers and cancellations")
struct RedirectAnswerGateTests {
  final class Task {}
  final class Session {}

  /// Whether `task`'s answer is let through.
  static func answered(_ gate: RedirectAnswerGate<Task>, _ task: Task, _ session: Session) -> Bool {
    var given = false
    gate.answer(task, session: session) { given = true }
    return given
  }

  @Test func aMarkedTaskGetsNoAnswerUntilItCompletes() {
    let gate = RedirectAnswerGate<Task>()
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
    let gate = RedirectAnswerGate<Task>()
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
    let gate = RedirectAnswerGate<Task>(sweepAt: 8)
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
    let gate = RedirectAnswerGate<Task>()
    let session = Session()
    for _ in 0..<100 { gate.mark(Task()) }
    // New objects often reuse the addresses of the ones just released.
    for _ in 0..<100 { #expect(Self.answered(gate, Task(), session)) }
  }
}
