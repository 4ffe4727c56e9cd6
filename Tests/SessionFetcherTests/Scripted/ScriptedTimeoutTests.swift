import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the fetcher's own timeout decides, on the scripted engine and its virtual clock: the engine
/// has no timer, so only the fetcher's check ends a stalled exchange, and it fires only when the
/// test advances the clock. How each real engine's timers behave on the wire is in `TimeoutTests`,
/// `StreamingTests` and `FoundationNetworkingWorkaroundTests`.
@Suite("Timeouts (scripted)")
struct ScriptedTimeoutTests {
  /// Records the body chunks the fetcher was given, and can hold the engine's event queue in a
  /// response head until the test opens `headHold`.
  final class Watch: FetcherEventMonitor, @unchecked Sendable {
    let chunks = Recorder<Data>()
    let headsEntered = Recorder<Bool>()
    let headHold: Gate?

    init(holdingHeads headHold: Gate? = nil) {
      self.headHold = headHold
    }

    func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
      chunks.append(data)
    }

    func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
      headsEntered.append(true)
      // A bound for a test that fails before it opens the gate.
      headHold?.wait(timeout: 30)
    }
  }

  static func fetcher(_ engine: ScriptedEngine, _ path: String, timeout: TimeInterval) -> SessionFetcher {
    let fetcher = engine.fetcher(path)
    var request = URLRequest(url: engine.url(path))
    request.timeoutInterval = timeout
    fetcher.request = request
    return fetcher
  }

  /// Returns once the first exchange is on the wire and has performed its steps up to its stall,
  /// `chunks` of them body chunks the fetcher was given.
  static func untilStalled(_ engine: ScriptedEngine, _ watch: Watch?, chunks: Int) async {
    #expect(await eventually { engine.requests.first?.events.first?.kind == .resumed })
    await engine.drainEvents()
    #expect(await eventually { (watch?.chunks.count ?? 0) == chunks })
  }

  @Test(arguments: [
    ScriptedExchange.stall,
    ScriptedExchange([
      .head(status: 200, headers: ["Content-Length": "100"]), .body(Data("part".utf8)), .stall,
    ]),
  ])
  func aStalledConnectionTimesOut(_ stall: ScriptedExchange) async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    engine.respond(to: "/silent", with: stall)
    let fetcher = Self.fetcher(engine, "/silent", timeout: 30)
    let watch = Watch()
    fetcher.eventMonitors = [watch]
    let counter = NotificationRecorder([fetcher])
    let pending = Task { await fetcher.fetchResult() }
    #expect(await clock.waitUntilArmed(.timeoutCheck))
    #expect(clock.armedTimers == [ScriptedClock.Timer(kind: .timeoutCheck, deadline: 30)])
    // The check is armed as the hop starts: the exchange gets to its stall at time 0 first.
    await Self.untilStalled(
      engine, watch, chunks: stall.steps.filter { if case .body = $0 { true } else { false } }.count)
    // Just short of the timeout nothing ends; at it, the attempt times out.
    await clock.advance(by: 29.9)
    #expect(engine.requests.first?.wasCancelled == false)
    await clock.advance(by: 0.1)
    let result = await pending.value
    #expect(result.urlError?.code == .timedOut)
    #expect(result.urlError?.failingURL == engine.url("/silent"))
    let request = try #require(engine.requests.first)
    #expect(engine.requests.count == 1)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
    #expect(request.events.first?.kind == .resumed)
    #expect(clock.armedTimers.isEmpty)
  }

  /// A stalled attempt that times out is retried when retries are on, and the retry's answer wins.
  @Test func aTimedOutAttemptIsRetried() async {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    engine.respond(to: "/slow", with: .stall, .response(body: Data("late".utf8)))
    let fetcher = Self.fetcher(engine, "/slow", timeout: 30)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 1
    let pending = Task { await fetcher.fetchResult() }
    #expect(await clock.waitUntilArmed(.timeoutCheck))
    await Self.untilStalled(engine, nil, chunks: 0)
    await clock.advance(by: 30)
    #expect(await clock.waitUntilArmed(.retryWait))
    await clock.advance(by: 1)
    let result = await pending.value
    #expect(result.data == Data("late".utf8))
    #expect(fetcher.retryCount == 1)
    #expect(engine.requests.first?.wasCancelled == true)
  }

  /// Progress resets the idle timeout: a body whose chunks come 8 s apart never times out with a
  /// 10 s idle timeout, though the whole takes 16 s. The check armed for 10 s finds the last chunk
  /// 2 s old and checks again when the idle timeout would run out, 10 s after that chunk.
  @Test func theIdleTimeoutIsResetByProgress() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    let (second, third) = (ScriptedGate(), ScriptedGate())
    engine.respond(
      to: "/drip",
      with: ScriptedExchange([
        .head(status: 200), .body(Data("a".utf8)), .wait(second), .body(Data("b".utf8)), .wait(third),
        .body(Data("c".utf8)),
      ]))
    let fetcher = Self.fetcher(engine, "/drip", timeout: 10)
    let watch = Watch()
    fetcher.eventMonitors = [watch]
    let pending = Task { await fetcher.fetchResult() }
    #expect(await clock.waitUntilArmed(.timeoutCheck))
    #expect(await eventually { watch.chunks.count == 1 })
    await clock.advance(by: 8)
    second.open()
    #expect(await eventually { watch.chunks.count == 2 })
    // The check at 10 s sees the chunk of 8 s: checks again at 18 s.
    await clock.advance(by: 8)
    let timers = clock.armedTimers
    #expect(timers.count == 1 && timers.first?.kind == .timeoutCheck)
    #expect(abs((timers.first?.deadline ?? 0) - 18) < 0.001, "\(timers)")
    third.open()
    let result = await pending.value
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Data("abc".utf8))
    #expect(engine.requests.count == 1)
  }

  /// Without progress the rearmed check ends the attempt: the idle timeout runs from the last
  /// chunk, not from the start.
  @Test func theIdleTimeoutRunsFromTheLastChunk() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    let second = ScriptedGate()
    engine.respond(
      to: "/drip",
      with: ScriptedExchange([.head(status: 200), .wait(second), .body(Data("a".utf8)), .stall]))
    let fetcher = Self.fetcher(engine, "/drip", timeout: 10)
    let watch = Watch()
    fetcher.eventMonitors = [watch]
    let pending = Task { await fetcher.fetchResult() }
    #expect(await clock.waitUntilArmed(.timeoutCheck))
    await clock.advance(by: 6)
    second.open()
    #expect(await eventually { watch.chunks.count == 1 })
    await clock.advance(by: 9.9)
    #expect(engine.requests.first?.wasCancelled == false)
    await clock.advance(by: 0.1)
    #expect(await pending.value.urlError?.code == .timedOut)
    #expect(clock.elapsed == 16)
  }

  /// A paused stream is not idle: while the consumer holds the stream paused (the exchange
  /// suspended) for many idle timeouts, no timeout check is armed, and the body arrives whole once
  /// the consumer reads again.
  @Test func aPausedStreamIsNotIdle() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    let chunk = Data(repeating: 7, count: 1000)
    engine.respond(to: "/stream", with: .response(chunks: Array(repeating: chunk, count: 6)))
    let fetcher = Self.fetcher(engine, "/stream", timeout: 10)
    let stream = try await fetcher.beginStreaming(highWaterMark: 2500)
    #expect(await eventually { engine.requests.first?.suspensionCount == 1 })
    await engine.drainEvents()
    #expect(clock.armedTimers.isEmpty, "\(clock.armedTimers)")
    await clock.advance(by: 100)
    #expect(engine.requests.first?.wasCancelled == false)
    #expect(fetcher.error == nil)
    var total = 0
    for try await data in stream { total += data.count }
    #expect(total == 6000)
    #expect(engine.requests.count == 1)
    #expect(engine.requests.first?.events.last?.kind == .completed(failed: false))
  }

  /// A failure the fetcher decides on a response head (a body announced past
  /// `maximumResponseBodyLength`) stays the fetch's error when the timeout check fires while the
  /// head is still being handed on (a monitor holds the engine's event queue in it): the attempt
  /// was failed under the lock that decided it, so the check finds nothing left to end.
  @Test func aFailureDecidedOnTheHeadIsNotTurnedIntoATimeout() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    engine.respond(
      to: "/large",
      with: ScriptedExchange([
        .head(status: 200, headers: ["Content-Length": "100000"]), .body(Data(count: 100_000)),
      ]))
    let fetcher = Self.fetcher(engine, "/large", timeout: 10)
    fetcher.maximumResponseBodyLength = 1000
    let hold = Gate()
    let watch = Watch(holdingHeads: hold)
    fetcher.eventMonitors = [watch]
    let pending = Task { await fetcher.fetchResult() }
    #expect(await clock.waitUntilArmed(.timeoutCheck))
    #expect(await eventually { watch.headsEntered.count == 1 })
    // The timeout comes due while the head is held.
    await clock.advance(by: 20)
    hold.open()
    let result = await pending.value
    #expect(result.fetcherError == .responseTooLarge(limit: 1000), "\(String(describing: result.error))")
    #expect(engine.requests.count == 1)
  }

  /// A timeout ends the fetch while the engine can report nothing (its event queue held by another
  /// fetch's monitor): the fetcher ends the attempt itself, without waiting for the engine to
  /// report the cancellation.
  @Test func aTimeoutEndsTheFetchWhileTheEngineCannotCancel() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    engine.respond(to: "/blocker", with: .response(body: Data("held".utf8)))
    engine.respond(to: "/hang", with: .stall)
    let hold = Gate()
    let blocker = engine.fetcher("/blocker")
    let watch = Watch(holdingHeads: hold)
    blocker.eventMonitors = [watch]
    let blocked = Task { await blocker.fetchResult() }
    #expect(await eventually { watch.headsEntered.count == 1 })

    let fetcher = Self.fetcher(engine, "/hang", timeout: 5)
    let pending = Task { await fetcher.fetchResult(timeout: 30) }
    // The blocker's check and this fetch's.
    #expect(await clock.waitUntilArmed(.timeoutCheck, count: 2))
    await clock.advance(by: 5)
    let result = await pending.value
    // The engine has not been able to perform the cancellation: it is queued behind the hold.
    let cancelledByEngine = engine.requests(matching: "/hang").first?.events.contains {
      $0.kind == .completed(failed: true)
    }
    hold.open()
    #expect(result.urlError?.code == .timedOut, "\(String(describing: result.error))")
    #expect(result.urlError?.failingURL == engine.url("/hang"))
    #expect(cancelledByEngine == false)
    #expect(await blocked.value.data == Data("held".utf8))
  }

  /// A challenge block that never answers: the request's timeout still ends the fetch, and
  /// nothing more is sent.
  @Test func aChallengeBlockThatNeverAnswersStillTimesOut() async throws {
    let clock = ScriptedClock()
    let engine = ScriptedEngine(clock: clock)
    engine.respond(to: "/private", with: .challenge(), .response(body: Data("secret".utf8)))
    let fetcher = Self.fetcher(engine, "/private", timeout: 10)
    let asked = Recorder<Bool>()
    let release = AsyncLatch()
    fetcher.challengeBlock = { _, _ in
      asked.append(true)
      await release.wait()
      return (.useCredential, URLCredential(user: "user", password: "pa55", persistence: .none))
    }
    let pending = Task { await fetcher.fetchResult() }
    #expect(await eventually { asked.count == 1 })
    await clock.advance(by: 10)
    let result = await pending.value
    release.signal()
    #expect(result.urlError?.code == .timedOut, "\(String(describing: result.error))")
    #expect(engine.requests.count == 1)
  }
}
