import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// When the URLSession engine gives glibc's free heap pages back (see `ArenaTrim`).
@Suite("Arena trims")
struct ArenaTrimScheduleTests {
  typealias Schedule = ArenaTrim.Schedule

  /// Requests at the given times, from a fresh schedule, and whether a trim ran before each: the
  /// time each request schedules a trim at (nil: one is already due).
  @Test(
    arguments: [
      // One request: a trim one delay later.
      ([(0.0, nil)], [Schedule.delay] as [Double?]),
      // A second request before the trim ran adds nothing.
      ([(0.0, nil), (0.5, nil)], [Schedule.delay, nil]),
      // After a trim at 1, the next is no sooner than one interval later.
      ([(0.0, nil), (2.0, 1.0)], [Schedule.delay, 1 + Schedule.interval]),
      // Long after the last trim, one delay after the request.
      ([(0.0, nil), (60.0, 1.0)], [Schedule.delay, 60 + Schedule.delay]),
    ] as [([(Double, Double?)], [Double?])])
  func requestsAreThrottled(requests: [(Double, Double?)], expected: [Double?]) {
    var schedule = Schedule()
    var answers: [Double?] = []
    for (now, trimmedAt) in requests {
      if let trimmedAt { schedule.trimmed(at: trimmedAt) }
      answers.append(schedule.request(at: now))
    }
    #expect(answers == expected)
  }

  @Test func aTrimClearsTheDueTimeAndRemembersItsOwn() {
    var schedule = Schedule()
    _ = schedule.request(at: 10)
    #expect(schedule == Schedule(lastTrim: nil, next: 10 + Schedule.delay))
    schedule.trimmed(at: 11)
    #expect(schedule == Schedule(lastTrim: 11, next: nil))
  }
}

/// The URLSession engine trims after a large body; the libcurl engine, which streams bodies from
/// one thread per session, never asks. Serialized: the trims are counted for the whole process.
@Suite("Arena trims after large bodies", .serialized)
struct ArenaTrimFetchTests {
  /// A fetcher of `url` on a session of its own on `engine` (`SessionFetcher.fetcher(url:)` would
  /// share one of the default engine).
  static func fetcher(_ url: URL, engine: FetcherEngine) -> SessionFetcher {
    let fetcher = SessionFetcher(request: URLRequest(url: url))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.engine = engine
    return fetcher
  }

  @Test(arguments: FetcherEngine.libcurl.isAvailable ? [FetcherEngine.urlSession, .libcurl] : [.urlSession])
  func aLargeBodyLeadsToOneTrim(engine: FetcherEngine) async throws {
    guard ArenaTrim.isAvailable else { return }
    let server = try TestServer()
    defer { server.stop() }
    let before = ArenaTrim.figures.count
    let fetcher = Self.fetcher(server.url("/bytes/\(2 << 20)"), engine: engine)
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data?.count == 2 << 20)
    // The trim runs one delay after the task ended, and no sooner than one interval after the
    // last one: wait for it well past both (bounded; a loaded machine may be slow).
    let deadline = Date().addingTimeInterval(ArenaTrim.Schedule.interval + 30)
    while engine == .urlSession, ArenaTrim.figures.count == before, Date() < deadline {
      try await Task.sleep(nanoseconds: 50_000_000)
    }
    if engine == .urlSession {
      #expect(ArenaTrim.figures.count == before + 1)
    } else {
      try await Task.sleep(nanoseconds: UInt64(ArenaTrim.Schedule.delay * 2e9))
      #expect(ArenaTrim.figures.count == before)
    }
  }

  @Test func aSmallBodyLeadsToNoTrim() async throws {
    guard ArenaTrim.isAvailable else { return }
    let server = try TestServer()
    defer { server.stop() }
    let before = ArenaTrim.figures.count
    let fetcher = Self.fetcher(server.url("/bytes/1000"), engine: .urlSession)
    let result = await fetcher.fetchResult()
    #expect(result.data?.count == 1000)
    try await Task.sleep(nanoseconds: UInt64(ArenaTrim.Schedule.delay * 2e9))
    #expect(ArenaTrim.figures.count == before)
  }
}
