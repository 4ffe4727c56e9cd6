import Foundation
import SessionFetcher
import Testing

@testable import FetcherService

/// The shared session's bookkeeping: who uses it, and when an unused one is dropped. One idle check
/// is queued at a time, however many fetches end.
@Suite("SessionBook")
struct SessionBookTests {
  /// One step of a scenario (times in seconds) and the answer it must give.
  enum Step: Sendable {
    /// `fetcher` takes the current session.
    case assign(String)
    /// `fetcher` ends at `time`.
    case release(String, at: TimeInterval, gives: String)
    /// The queued idle check runs at `time`.
    case check(at: TimeInterval, gives: String)
    /// The current session is replaced; `gives` says whether it is to be invalidated now.
    case detach(gives: String)
  }

  struct Scenario: CustomTestStringConvertible, Sendable {
    var name: String
    var steps: [Step]
    var testDescription: String { name }
  }

  static let timeout: TimeInterval = 60

  static let scenarios: [Scenario] = [
    Scenario(
      name: "one fetch: the check after the timeout drops the session",
      steps: [
        .assign("a"), .release("a", at: 10, gives: "check after 60"), .check(at: 70, gives: "invalidate"),
      ]),
    Scenario(
      name: "many fetches queue one check, which waits out the last one's timeout",
      steps: [
        .assign("a"), .release("a", at: 10, gives: "check after 60"),
        .assign("b"), .release("b", at: 20, gives: "nothing"),
        .assign("c"), .release("c", at: 30, gives: "nothing"),
        .check(at: 70, gives: "check after 20"), .check(at: 90, gives: "invalidate"),
      ]),
    Scenario(
      name: "in use when the check runs: kept, and the next release queues a check",
      steps: [
        .assign("a"), .release("a", at: 10, gives: "check after 60"), .assign("b"),
        .check(at: 70, gives: "nothing"), .release("b", at: 100, gives: "check after 60"),
        .check(at: 160, gives: "invalidate"),
      ]),
    Scenario(
      name: "two users: only the last one's end makes the session idle",
      steps: [
        .assign("a"), .assign("b"), .release("a", at: 10, gives: "nothing"),
        .release("b", at: 20, gives: "check after 60"), .check(at: 80, gives: "invalidate"),
      ]),
    Scenario(
      name: "a replaced session in use is invalidated when its last fetcher ends",
      steps: [.assign("a"), .detach(gives: "keep"), .release("a", at: 10, gives: "invalidate")]),
    Scenario(
      name: "a replaced unused session is invalidated at once; its queued check does nothing",
      steps: [
        .assign("a"), .release("a", at: 10, gives: "check after 60"), .detach(gives: "invalidate"),
        .check(at: 70, gives: "nothing"),
      ]),
    Scenario(
      name: "an ended fetcher that took no session changes nothing",
      steps: [.release("z", at: 5, gives: "nothing"), .check(at: 70, gives: "nothing")]),
  ]

  @Test(arguments: scenarios)
  func scenario(_ scenario: Scenario) {
    var book = SessionBook()
    book.current = SharedSession(configuration: nil)
    let ids = ["a", "b", "c", "z"].map { _ in NSObject() }
    func id(_ name: String) -> ObjectIdentifier {
      ObjectIdentifier(ids[["a", "b", "c", "z"].firstIndex(of: name)!])
    }
    for (index, step) in scenario.steps.enumerated() {
      switch step {
      case .assign(let name):
        book.current.map { book.assign($0, to: id(name)) }
      case .release(let name, let time, let expected):
        let answer: String
        switch book.release(id(name), now: time, timeout: Self.timeout) {
        case .nothing: answer = "nothing"
        case .checkIdle(let delay): answer = "check after \(Int(delay))"
        case .invalidate: answer = "invalidate"
        }
        #expect(answer == expected, "step \(index)")
      case .check(let time, let expected):
        let answer: String
        switch book.checkIdle(now: time, timeout: Self.timeout) {
        case .nothing: answer = "nothing"
        case .checkAgain(let delay): answer = "check after \(Int(delay))"
        case .invalidate: answer = "invalidate"
        }
        #expect(answer == expected, "step \(index)")
      case .detach(let expected):
        #expect((book.detachCurrent() == nil ? "keep" : "invalidate") == expected, "step \(index)")
      }
    }
  }

  @Test func fetchersThatEndedLeaveNoTableSizedForThem() {
    var book = SessionBook()
    let session = SharedSession(configuration: nil)
    book.current = session
    let fetchers = (0..<5_000).map { _ in NSObject() }
    for fetcher in fetchers { book.assign(session, to: ObjectIdentifier(fetcher)) }
    #expect(book.sessionOfFetcher.capacity >= 5_000)
    for fetcher in fetchers.dropLast() {
      _ = book.release(ObjectIdentifier(fetcher), now: 1, timeout: Self.timeout)
    }
    #expect(book.sessionOfFetcher.capacity <= Dictionary<ObjectIdentifier, SharedSession>.sparseStorageFloor)
    // The one still running keeps its session.
    #expect(book.sessionOfFetcher[ObjectIdentifier(fetchers[4_999])] === session)
    #expect(book.userCount[ObjectIdentifier(session)] == 1)
  }
}
