import Foundation
import Testing

@testable import FetcherService

@Suite("HostThrottle")
struct HostThrottleTests {
  /// One step of a throttle scenario and what it must produce.
  enum Step {
    /// Admit element on host with priority; `runs` is the expected answer.
    case admit(String, host: String, priority: Int, runs: Bool)
    /// Remove element; `starts` are the waiting elements that must start, in order.
    case remove(String, starts: [String])
    /// Change the limit; `starts` as above.
    case limit(Int, starts: [String])
  }

  struct Scenario: CustomTestStringConvertible, Sendable {
    var name: String
    var max: Int
    var steps: [Step]
    var testDescription: String { name }
  }

  static let scenarios: [Scenario] = [
    Scenario(
      name: "limit 2: the third waits and starts when a slot frees", max: 2,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("b", host: "h", priority: 0, runs: true),
        .admit("c", host: "h", priority: 0, runs: false),
        .remove("a", starts: ["c"]),
        .remove("c", starts: []),
      ]),
    Scenario(
      name: "hosts are independent", max: 1,
      steps: [
        .admit("a", host: "h1", priority: 0, runs: true),
        .admit("b", host: "h2", priority: 0, runs: true),
        .admit("c", host: "h1", priority: 0, runs: false),
        .remove("b", starts: []),
        .remove("a", starts: ["c"]),
      ]),
    Scenario(
      name: "lowest priority first, first come first served within a priority", max: 1,
      steps: [
        .admit("run", host: "h", priority: 0, runs: true),
        .admit("p5a", host: "h", priority: 5, runs: false),
        .admit("p1a", host: "h", priority: 1, runs: false),
        .admit("p5b", host: "h", priority: 5, runs: false),
        .admit("p1b", host: "h", priority: 1, runs: false),
        .admit("m3", host: "h", priority: -3, runs: false),
        .remove("run", starts: ["m3"]),
        .remove("m3", starts: ["p1a"]),
        .remove("p1a", starts: ["p1b"]),
        .remove("p1b", starts: ["p5a"]),
        .remove("p5a", starts: ["p5b"]),
        .remove("p5b", starts: []),
      ]),
    Scenario(
      name: "0 means unlimited", max: 0,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("b", host: "h", priority: 0, runs: true),
        .admit("c", host: "h", priority: 0, runs: true),
      ]),
    Scenario(
      name: "Int.min never waits", max: 1,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("urgent", host: "h", priority: Int.min, runs: true),
        .admit("c", host: "h", priority: 0, runs: false),
        .remove("urgent", starts: []),
        .remove("a", starts: ["c"]),
      ]),
    Scenario(
      name: "removing a waiting element starts nothing and frees its place", max: 1,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("b", host: "h", priority: 0, runs: false),
        .admit("c", host: "h", priority: 0, runs: false),
        .remove("b", starts: []),
        .remove("a", starts: ["c"]),
      ]),
    Scenario(
      name: "removing twice or removing an unknown element does nothing", max: 1,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("b", host: "h", priority: 0, runs: false),
        .remove("a", starts: ["b"]),
        .remove("a", starts: []),
        .remove("zzz", starts: []),
      ]),
    Scenario(
      name: "raising the limit starts waiting elements in order", max: 1,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("b", host: "h", priority: 2, runs: false),
        .admit("c", host: "h", priority: 1, runs: false),
        .admit("d", host: "h", priority: 3, runs: false),
        .limit(3, starts: ["c", "b"]),
        .limit(0, starts: ["d"]),
      ]),
    Scenario(
      name: "admitting a tracked element again changes nothing", max: 1,
      steps: [
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("a", host: "h", priority: 0, runs: true),
        .admit("b", host: "h", priority: 0, runs: false),
        .admit("b", host: "h", priority: 0, runs: false),
        .remove("a", starts: ["b"]),
      ]),
  ]

  @Test(arguments: scenarios)
  func scenario(_ scenario: Scenario) {
    var throttle = HostThrottle<String>(maxRunningPerHost: scenario.max)
    for (index, step) in scenario.steps.enumerated() {
      switch step {
      case .admit(let element, let host, let priority, let runs):
        let answer = throttle.admit(element, host: host, priority: priority)
        #expect(answer == runs, "step \(index)")
      case .remove(let element, let starts):
        let started = throttle.remove(element)
        #expect(started == starts, "step \(index)")
      case .limit(let limit, let starts):
        let started = throttle.setMaxRunningPerHost(limit)
        #expect(started == starts, "step \(index)")
      }
      // The counts always agree with the maps, and no host exceeds the limit.
      #expect(throttle.runningCount == throttle.running.values.map(\.count).reduce(0, +))
      #expect(throttle.count == throttle.runningCount + throttle.waitingCount)
      #expect(!throttle.running.values.contains { $0.isEmpty })
      #expect(!throttle.waiting.values.contains { $0.isEmpty })
    }
  }

  @Test func snapshotsAndRemoveAll() {
    var throttle = HostThrottle<String>(maxRunningPerHost: 1)
    _ = throttle.admit("a", host: "h1", priority: 0)
    _ = throttle.admit("b", host: "h1", priority: 9)
    _ = throttle.admit("c", host: "h1", priority: 1)
    _ = throttle.admit("d", host: "h2", priority: 0)
    #expect(throttle.running == ["h1": ["a"], "h2": ["d"]])
    #expect(throttle.waitingByHost == ["h1": ["c", "b"]])
    #expect(throttle.isWaiting("b"))
    #expect(!throttle.isWaiting("a"))
    #expect(!throttle.isWaiting("unknown"))
    #expect(throttle.host(of: "d") == "h2")
    let removed = throttle.removeAll()
    #expect(removed.waiting == ["c", "b"])
    #expect(Set(removed.running) == ["a", "d"])
    #expect(throttle.count == 0 && throttle.running.isEmpty && throttle.waiting.isEmpty)
    let runs = throttle.admit("e", host: "h1", priority: 0)
    #expect(runs)
  }

  @Test func negativeLimitMeansUnlimited() {
    var throttle = HostThrottle<Int>(maxRunningPerHost: -4)
    #expect(throttle.maxRunningPerHost == 0)
    #expect((0..<50).allSatisfy { throttle.admit($0, host: "h", priority: 0) })
  }

  @Test(
    "the host key of a URL: its host, lowercase; none without a host or for data URLs",
    arguments: [
      ("https://example.com/a", "example.com"), ("https://Example.COM:8443/a", "example.com"),
      ("http://127.0.0.1:8080/", "127.0.0.1"), ("http://[::1]:80/", "::1"), ("data:text/plain,hi", nil),
      ("DATA://example.com/x", nil), ("file:///tmp/x", nil),
      ("https://xn--bcher-kva.example/", "xn--bcher-kva.example"), ("http://AZ.example/", "az.example"),
      ("http://az.example/", "az.example"), ("http://host-Z9.example/", "host-z9.example"),
      ("Data://example.com/x", nil), ("http://a.example./", "a.example."),
    ] as [(String, String?)])
  func hostKey(url: String, expected: String?) {
    #expect(FetcherService.hostKey(for: URL(string: url)) == expected)
  }

  @Test func noURLHasNoHostKey() {
    #expect(FetcherService.hostKey(for: nil) == nil)
  }
}
