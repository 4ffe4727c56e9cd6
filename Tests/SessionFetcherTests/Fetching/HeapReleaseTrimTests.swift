import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// When the URLSession engine gives glibc's free heap pages back (see `HeapReleaseTrim`).
@Suite("Arena trims")
struct ArenaTrimScheduleTests {
  typealias Schedule = HeapReleaseTrim.Schedule

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

/// The URLSession engine asks for a trim when a task that moved a large body ends, and only then.
///
/// Each test counts the requests of its own engine session, which no other test's fetch changes,
/// so they are exact while the whole suite runs in parallel; that a trim then runs is seen in the
/// process's count going up (other tests' trims add to it too). The URLSession engine is chosen
/// whatever engine the tests run on; the libcurl engine has no path to `HeapReleaseTrim`.
@Suite("Arena trims after large bodies")
struct ArenaTrimFetchTests {
  /// A session of its own on the URLSession engine, and its engine session.
  static func makeSession() throws -> (SharedSession, URLSessionEngineSession) {
    let session = SharedSession(configuration: nil, engine: .urlSession)
    let engineSession = try #require(session.engineSession as? URLSessionEngineSession)
    return (session, engineSession)
  }

  /// A fetcher of `path` on `server` that runs on `session`.
  static func fetcher(_ path: String, on server: TestServer, session: SharedSession) -> SessionFetcher {
    let fetcher = SessionFetcher(request: URLRequest(url: server.url(path)))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.sessionProvider = { session }
    return fetcher
  }

  /// Waits, bounded, until the process's trim count exceeds `count`: the trim runs one delay after
  /// the request, no sooner than one interval after the last one began (a loaded machine may be
  /// slow, so well past both).
  static func waitForATrim(after count: Int) async throws -> Int {
    _ = await eventually(timeout: HeapReleaseTrim.Schedule.interval + 30) {
      HeapReleaseTrim.figures.count > count
    }
    return HeapReleaseTrim.figures.count
  }

  @Test func aLargeDownloadAsksForOneTrimAndATrimRuns() async throws {
    guard HeapReleaseTrim.isAvailable else { return }
    let server = try TestServer()
    defer { server.stop() }
    let (session, engineSession) = try Self.makeSession()
    defer { session.invalidateAndCancel() }
    let before = HeapReleaseTrim.figures.count
    let result = await Self.fetcher("/bytes/\(2 << 20)", on: server, session: session).fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data?.count == 2 << 20)
    // Counted before the fetch heard that its task ended.
    #expect(engineSession.arenaTrimRequests == 1)
    let after = try await Self.waitForATrim(after: before)
    #expect(after > before, "no trim ran within \(HeapReleaseTrim.Schedule.interval + 30) s")
  }

  /// An upload's body counts whole, however little comes back: data, and a file sent from memory.
  @Test(arguments: [false, true])
  func aLargeUploadAsksForOneTrim(fromFile: Bool) async throws {
    guard HeapReleaseTrim.isAvailable else { return }
    let server = try TestServer()
    defer { server.stop() }
    let (session, engineSession) = try Self.makeSession()
    defer { session.invalidateAndCancel() }
    let body = TestServer.patternBytes(count: 2 << 20)
    let fetcher = Self.fetcher("/upload?discard=1", on: server, session: session)
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    if fromFile {
      let file = folder.appendingPathComponent("upload.bin")
      try body.write(to: file)
      fetcher.request?.httpMethod = "PUT"
      fetcher.bodyFileURL = file
    } else {
      fetcher.bodyData = body
    }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect((result.data?.count ?? 0) < 1000)
    #expect(server.requests.last?.bodyChecksum == TestServer.checksum(body))
    #expect(engineSession.arenaTrimRequests == 1)
  }

  @Test func aSmallBodyAsksForNoTrim() async throws {
    guard HeapReleaseTrim.isAvailable else { return }
    let server = try TestServer()
    defer { server.stop() }
    let (session, engineSession) = try Self.makeSession()
    defer { session.invalidateAndCancel() }
    let result = await Self.fetcher("/bytes/1000", on: server, session: session).fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data?.count == 1000)
    #expect(engineSession.arenaTrimRequests == 0)
  }
}
