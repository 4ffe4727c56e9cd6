import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The wait before each retry, on the scripted engine's virtual clock: the delay the fetcher
/// chooses is armed on the clock, and the next attempt begins when the clock reaches it, not a
/// moment before. Which delay is chosen for each answer is in `ScriptedRetryTests`.
@Suite("Retry delays (scripted, virtual time)")
struct ScriptedRetryDelayTests {
  static let body = Data("the body".utf8)

  /// One row: the answers in order, the backoff, and the waits the fetcher makes.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    /// The answers to the fetcher's attempts, in order (the last answers every later attempt).
    var answers: [ScriptedExchange]
    var minRetryInterval: TimeInterval
    var maxRetryInterval: TimeInterval = 600
    /// The length of each wait, in order.
    var waits: [TimeInterval]
    /// Whether the fetch ends with ``ScriptedRetryDelayTests/body`` (else with the last answer's
    /// status).
    var succeeds = true

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "the backoff doubles: 10 s, then 20 s",
      answers: [.response(status: 503), .response(status: 503), .response(body: body)],
      minRetryInterval: 10, waits: [10, 20]),
    Row(
      name: "a Retry-After longer than the backoff is waited",
      answers: [.response(status: 503, headers: ["Retry-After": "120"]), .response(body: body)],
      minRetryInterval: 1, waits: [120]),
    Row(
      name: "the waits stop at the cap",
      answers: [.response(status: 503)], minRetryInterval: 10, maxRetryInterval: 50, waits: [10, 20, 40],
      succeeds: false),
  ]

  @Test(arguments: rows)
  func eachRetryWaitsItsDelayOnTheClock(_ row: Row) async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    for answer in row.answers { engine.respond(to: "/resource", with: answer) }
    let fetcher = engine.fetcher("/resource")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = row.minRetryInterval
    fetcher.maxRetryInterval = row.maxRetryInterval
    let pending = Task { await fetcher.fetchResult() }
    var start: TimeInterval = 0
    for (index, wait) in row.waits.enumerated() {
      #expect(await clock.waitUntilArmed(.retryWait), "wait \(index + 1)")
      let timers = clock.armedTimers.filter { $0.kind == .retryWait }
      try #require(timers.count == 1, "\(timers)")
      #expect(abs(timers[0].deadline - (start + wait)) < 1e-6, "wait \(index + 1): \(timers)")
      // Just short of the delay, no new attempt; at it, the next one goes.
      await clock.advance(by: wait - 0.01)
      await engine.drainEvents()
      #expect(engine.requests.count == index + 1, "wait \(index + 1)")
      await clock.advance(by: 0.01)
      start += wait
    }
    let result = await pending.value
    if row.succeeds {
      #expect(result.data == Self.body, "\(String(describing: result.error))")
    } else {
      #expect(result.fetcherError?.statusCode == 503)
    }
    #expect(engine.requests.count == row.waits.count + 1)
    #expect(fetcher.retryCount == row.waits.count)
    #expect(clock.armedTimers.filter { $0.kind == .retryWait }.isEmpty)
  }

  /// A stop during the wait cancels it: nothing is left armed on the clock, and advancing past the
  /// delay sends nothing more.
  @Test func aStopDuringTheWaitDisarmsIt() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    engine.respond(to: "/resource", with: .response(status: 503), .response(body: Self.body))
    let fetcher = engine.fetcher("/resource")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 10
    fetcher.beginFetch { _, _ in }
    #expect(await clock.waitUntilArmed(.retryWait))
    fetcher.stopFetching()
    #expect(clock.armedTimers.isEmpty, "\(clock.armedTimers)")
    await clock.advance(by: 60)
    await engine.drainEvents()
    #expect(engine.requests.count == 1)
    #expect(fetcher.retryCount == 0)
  }
}
