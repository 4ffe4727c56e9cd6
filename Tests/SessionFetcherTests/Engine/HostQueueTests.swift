import SessionFetcher
import Testing

@Suite("Curl engine: host queue")
struct HostQueueTests {
  typealias Origin = HostQueue<Int>.Origin
  static let a = Origin(scheme: "http", host: "a", port: 80)
  static let b = Origin(scheme: "http", host: "b", port: 80)
  static let aByProxy = Origin(scheme: "http", host: "a", port: 80, route: "proxy http://p:3128")
  static let s = Origin(scheme: "https", host: "s", port: 443)

  /// One step of a script: what is done, and what the queue must answer.
  enum Step {
    /// Element `id` starts to `origin`; whether it runs at once.
    case start(Int, Origin, runs: Bool)
    /// An element to `origin` ends; the one that takes its slot.
    case finish(Origin, next: Int?)
    /// A response from `origin` in `version`; the elements that start.
    case learn(String, Origin, ready: [Int])
    /// Every waiting element is taken off.
    case removeAll([Int])
    /// Waiting element `id` to `origin` is taken off (given up on); whether it was waiting.
    case remove(Int, Origin, found: Bool)
  }

  static let scripts: [(name: String, limit: Int, steps: [Step], running: [(Origin, Int)])] = [
    (
      "up to the limit at once, then in order", 2,
      [
        .start(1, a, runs: true), .start(2, a, runs: true), .start(3, a, runs: false),
        .start(4, a, runs: false), .finish(a, next: 3), .finish(a, next: 4), .finish(a, next: nil),
      ], [(a, 1)]
    ),
    (
      "a new element waits behind those queued even with a slot free", 1,
      [
        .start(1, a, runs: true), .start(2, a, runs: false), .finish(a, next: 2),
        .start(3, a, runs: false), .finish(a, next: 3), .finish(a, next: nil), .start(4, a, runs: true),
      ], [(a, 1)]
    ),
    (
      "origins and routes count apart", 1,
      [
        .start(1, a, runs: true), .start(2, b, runs: true), .start(3, aByProxy, runs: true),
        .start(4, b, runs: false), .finish(a, next: nil), .finish(b, next: 4),
      ], [(a, 0), (b, 1), (aByProxy, 1)]
    ),
    (
      "HTTP/2 lets every waiting element go, and none waits after", 1,
      [
        .start(1, a, runs: true), .start(2, a, runs: false), .start(3, a, runs: false),
        .learn("HTTP/2", a, ready: [2, 3]), .start(4, a, runs: true), .finish(a, next: nil),
      ], [(a, 3)]
    ),
    (
      "HTTP/1.1 keeps the limit; HTTP/3 lifts it", 1,
      [
        .start(1, a, runs: true), .start(2, a, runs: false), .learn("HTTP/1.1", a, ready: []),
        .learn("HTTP/1.0", a, ready: []), .learn("HTTP/3", a, ready: [2]),
      ], [(a, 2)]
    ),
    (
      "an origin that goes back to HTTP/1.1 is limited again", 1,
      [
        .start(1, a, runs: true), .learn("HTTP/2", a, ready: []), .start(2, a, runs: true),
        .learn("HTTP/1.1", a, ready: []), .start(3, a, runs: false), .finish(a, next: nil),
        .finish(a, next: 3),
      ], [(a, 1)]
    ),
    (
      "no limit: nothing waits", 0,
      [.start(1, a, runs: true), .start(2, a, runs: true), .start(3, a, runs: true), .finish(a, next: nil)],
      [(a, 2)]
    ),
    (
      "removing the waiting keeps the running", 1,
      [
        .start(1, a, runs: true), .start(2, a, runs: false), .start(3, b, runs: true),
        .start(4, b, runs: false), .removeAll([2, 4]), .finish(a, next: nil), .start(5, b, runs: false),
      ], [(a, 0), (b, 1)]
    ),
    (
      "a learned version is kept while the origin has nothing running", 1,
      [
        .learn("HTTP/2", a, ready: []), .start(1, a, runs: true), .finish(a, next: nil),
        .start(2, a, runs: true), .start(3, a, runs: true),
      ], [(a, 2)]
    ),
    (
      "an https origin not known yet is not held; HTTP/1.1 from it holds the next", 1,
      [
        .start(1, s, runs: true), .start(2, s, runs: true), .learn("HTTP/1.1", s, ready: []),
        .start(3, s, runs: false), .finish(s, next: nil), .finish(s, next: 3), .finish(s, next: nil),
        .start(4, s, runs: true), .start(5, s, runs: false),
      ], [(s, 1)]
    ),
    (
      "an element given up on leaves the queue; the rest keep their order", 1,
      [
        .start(1, a, runs: true), .start(2, a, runs: false), .start(3, a, runs: false),
        .start(4, a, runs: false), .remove(3, a, found: true), .remove(3, a, found: false),
        .remove(1, a, found: false), .remove(2, b, found: false), .finish(a, next: 2), .finish(a, next: 4),
        .finish(a, next: nil),
      ], [(a, 0)]
    ),
  ]

  @Test(arguments: scripts.indices)
  func script(_ index: Int) {
    let script = Self.scripts[index]
    var queue = HostQueue<Int>(limit: script.limit)
    for (number, step) in script.steps.enumerated() {
      let context = Comment(rawValue: "\(script.name), step \(number + 1)")
      switch step {
      case .start(let id, let origin, let runs):
        let ran = queue.start(id, to: origin)
        #expect(ran == runs, context)
      case .finish(let origin, let next):
        let started = queue.finished(origin)
        #expect(started == next, context)
      case .learn(let version, let origin, let ready):
        let released = queue.learned(httpVersion: version, of: origin)
        #expect(released == ready, context)
      case .remove(let id, let origin, let found):
        let removed = queue.removeWaiting(to: origin) { $0 == id }
        #expect(removed == found, context)
      case .removeAll(let expected):
        let removed = queue.removeAllWaiting().sorted()
        #expect(removed == expected, context)
        #expect(queue.waitingCount == 0, context)
      }
    }
    for (origin, count) in script.running {
      #expect(queue.runningCount(origin) == count, "\(script.name): running to \(origin.host)")
    }
  }

  /// Thousands through one slot keep their order while the queue's storage is compacted.
  @Test func longQueueKeepsOrder() {
    var queue = HostQueue<Int>(limit: 1)
    let first = queue.start(0, to: Self.a)
    #expect(first)
    var expected = 1
    var next = 1
    for round in 0..<50 {
      for _ in 0..<(round % 7) * 40 {
        let ran = queue.start(next, to: Self.a)
        #expect(!ran)
        next += 1
      }
      for _ in 0..<(round % 5) * 30 {
        guard let started = queue.finished(Self.a) else { break }
        #expect(started == expected)
        expected += 1
      }
    }
    while let started = queue.finished(Self.a) {
      #expect(started == expected)
      expected += 1
    }
    #expect(expected == next)
    #expect(queue.waitingCount == 0)
    #expect(queue.runningCount(Self.a) == 0)
  }
}
