import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@testable import SessionFetcher

/// Each test pins one workaround for a FoundationNetworking gap (the Linux notes article lists them). They pass on Apple
/// platforms and on toolchains where the gap is fixed, because they test the library's behaviour,
/// not the bug.
@Suite("FoundationNetworking workarounds", .ownThreads)
struct FoundationNetworkingWorkaroundTests {
  /// A fetcher of `url` whose request has the idle timeout `timeout`, on a session of its own
  /// whose request timeout is `sessionTimeout` when given.
  static func fetcher(_ url: URL, timeout: TimeInterval, sessionTimeout: TimeInterval? = nil)
    -> SessionFetcher
  {
    var request = URLRequest(url: url)
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    if let sessionTimeout {
      let configuration = URLSessionConfiguration.ephemeral
      configuration.timeoutIntervalForRequest = sessionTimeout
      fetcher.configuration = configuration
    }
    return fetcher
  }

  /// Fetches `/hang` (no answer ever) with `timeout`: the error code and the seconds it took.
  static func stalledFetch(_ server: TestServer, timeout: TimeInterval) async -> (
    URLError.Code?, TimeInterval
  ) {
    let start = Date()
    let result = await fetcher(server.url("/hang"), timeout: timeout).fetchResult()
    return (result.urlError?.code, Date().timeIntervalSince(start))
  }

  @Test func subSecondIdleTimeoutIsHonoured() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // On Linux a sub-second request timeout fires after ~1 ms, so every attempt would fail at once;
    // the fetcher's own timer lets them through. On a loaded machine a request may still take longer
    // than 0.9 s: then it may time out, but never before its 0.9 s.
    for _ in 0..<3 {
      let start = Date()
      let result = await Self.fetcher(server.url("/bytes/1"), timeout: 0.9).fetchResult()
      let seconds = Date().timeIntervalSince(start)
      if result.data != TestServer.patternBytes(count: 1) {
        #expect(
          result.urlError?.code == .timedOut && seconds >= 0.85,
          "\(String(describing: result.error)) after \(seconds) s")
      }
    }

    let (code, seconds) = await Self.stalledFetch(server, timeout: 0.9)
    #expect(code == .timedOut)
    #expect(seconds >= 0.85)
  }

  /// URLSession's timeout is a backstop behind the fetcher's: whole seconds, at least 2 s later,
  /// never below one second, and finite.
  @Test(arguments: [
    (60.0, 62.0), (1.0, 3.0), (3600.0, 3602.0), (0.9, 3.0), (0.0, 2.0), (-1.0, 1.0), (-5.0, 1.0),
    (2.5, 5.0), (59.999, 62.0), (1e12, 1e7), (.infinity, 1e7), (.nan, 1e7),
  ])
  func transportTimeoutIsALaterBackstop(idleTimeout: Double, backstop: Double) {
    #expect(SessionFetcher.transportTimeout(backing: idleTimeout) == backstop)
  }

  /// A whole-second timeout (its URLSession backstop is 2 s later) ends a stalled request with
  /// `URLError(.timedOut)`, after about that long.
  @Test func wholeSecondTimeoutEndsAStalledRequest() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (code, seconds) = await Self.stalledFetch(server, timeout: 1)
    #expect(code == .timedOut)
    #expect(seconds >= 0.95)
  }

  /// A timeout error names the URL (the fetcher's timer fires; URLSession's, 2 s later, would come
  /// without the URL on Linux), also where the request and the session agree on the timeout.
  @Test(arguments: [0.9, 1.0])
  func timeoutErrorNamesTheURL(timeout: TimeInterval) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = Self.fetcher(server.url("/hang"), timeout: timeout, sessionTimeout: timeout)
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .timedOut)
    #expect(result.urlError?.failingURL == server.url("/hang"))
  }

  /// Progress resets the idle timeout on the wire, the engine's own timer included (URLSession's
  /// backstop, `SessionFetcher.transportTimeout(backing:)`): a body that drips a piece every 100 ms
  /// for 1 s longer than that backstop never times out. What the fetcher decides from progress is
  /// `ScriptedTimeoutTests.theIdleTimeoutIsResetByProgress`.
  @Test func idleTimeoutIsResetByProgress() async throws {
    let server = try TestServer()
    defer { server.stop() }
    /// Records when each chunk reached the fetcher.
    final class Arrivals: FetcherEventMonitor, @unchecked Sendable {
      let times = Recorder<Date>()
      func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) { times.append(Date()) }
    }
    // A 1 s timeout is ten gaps between pieces, and its backstop 3 s: the drip lasts 4 s. A loaded
    // 2-core machine has held the whole process for longer than the timeout; then the fetcher
    // rightly saw no data for it, and the fetch is made again with a longer one (its drip longer
    // too). A timer that progress does not reset fires with the last chunk a moment old, and fails
    // the test at once.
    for (attempt, timeout) in [1.0, 4, 10].enumerated() {
      let pieces = Int((SessionFetcher.transportTimeout(backing: timeout) + 1) * 10)
      let arrivals = Arrivals()
      let start = Date()
      let fetcher = Self.fetcher(
        server.url("/drip?bytes=\(pieces * 10)&chunks=\(pieces)&interval=100"), timeout: timeout)
      fetcher.eventMonitors = [arrivals]
      let result = await fetcher.fetchResult(timeout: 90)
      if result.data == TestServer.patternBytes(count: pieces * 10) { return }
      let quiet = Date().timeIntervalSince(arrivals.times.values.last ?? start)
      try #require(
        result.urlError?.code == .timedOut && quiet >= timeout - 0.5,
        "attempt \(attempt + 1): \(String(describing: result.error)) after \(quiet) s without data")
    }
    Issue.record("three attempts each saw the process held for longer than their timeout")
  }

  @Test func resourceTimeoutIsEnforced() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // URLSession ignores timeoutIntervalForResource on Linux.
    let fetcher = server.fetcher("/drip?bytes=1000&chunks=20&interval=100")
    fetcher.resourceTimeoutInterval = 0.3
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .timedOut)
  }

  @Test func streamedUploadIgnoresInterimResponses() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // A streamed upload may get a (fake, on Linux) 100 response first; the fetcher must only see the 200.
    let responses = Recorder<Int>()
    final class StatusMonitor: FetcherEventMonitor, @unchecked Sendable {
      let statuses: Recorder<Int>
      init(_ statuses: Recorder<Int>) { self.statuses = statuses }
      func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
        statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
      }
    }
    let fetcher = server.fetcher("/upload")
    fetcher.eventMonitors = [StatusMonitor(responses)]
    fetcher.bodyStreamProvider = { InputStream(data: Data(repeating: 7, count: 200_000)) }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(responses.values == [200])
  }

  @Test func platformCookieStoreIsNotUsed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let jar = SessionCookieStorage()
    let fetcher = server.fetcher("/set-cookie?c=private%3D1")
    fetcher.cookieStorage = jar
    #expect(await fetcher.fetchResult().error == nil)
    #expect(jar.cookies.map(\.name) == ["private"])
    let shared = HTTPCookieStorage.shared.cookies(for: server.url("/")) ?? []
    #expect(!shared.contains { $0.name == "private" })
    // And the jar's cookie goes back to the server.
    let again = server.fetcher("/cookies")
    again.cookieStorage = jar
    #expect(String(decoding: await again.fetchResult().data ?? Data(), as: UTF8.self).contains("private=1"))
  }

  @Test func cookieHandlingCanBeTurnedOff() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let jar = SessionCookieStorage()
    let fetcher = server.fetcher("/set-cookie?c=off%3D1")
    fetcher.cookieStorage = jar
    fetcher.shouldHandleCookies = false
    #expect(await fetcher.fetchResult().error == nil)
    #expect(jar.cookies.isEmpty)
  }

  @Test func invalidatedSessionFailsTheFetchInsteadOfCrashing() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let session = SharedSession(configuration: nil)
    session.finishTasksAndInvalidate()
    let fetcher = server.fetcher("/bytes/1")
    fetcher.sessionProvider = { session }
    let result = await fetcher.fetchResult()
    #expect(result.error != nil)
    #expect(server.requests.isEmpty)
  }

  @Test func noTemporaryFilesLeak() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // FoundationNetworking never deletes download temp files; the fetcher never makes any.
    let before = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    for path in ["/bytes/100000", "/status/500", "/truncate?length=100000&send=10"] {
      let fetcher = server.fetcher(path)
      fetcher.destinationFileURL = folder.appendingPathComponent("x.bin")
      _ = await fetcher.fetchResult()
    }
    let after = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
    let leaked = after.subtracting(before).filter { $0.hasSuffix(".tmp") }
    #expect(leaked.isEmpty)
  }

  @Test func timingIsRecordedByTheFetcher() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // URLSession metrics never arrive on Linux.
    let fetcher = server.fetcher("/bytes/100")
    fetcher.bodyData = Data(count: 50)
    _ = await fetcher.fetchResult()
    let timing = fetcher.timing
    #expect(timing.startDate != nil && timing.endDate != nil && timing.firstResponseDate != nil)
    #expect(timing.firstByteDate != nil)
    #expect(timing.bytesSent == 50)
    #expect(timing.bytesReceived == 100)
    #expect((timing.duration ?? -1) >= 0)
  }

  /// File uploads that the server resets mid-body end with an error (or a retry), and never take
  /// the process down: FoundationNetworking's file source un-pauses a finished transfer with
  /// `try!` (`FileBodyInMemory`); file bodies up to its limit are sent from memory instead.
  @Test func fileUploadsResetMidBodyDoNotCrash() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.resetUploads(toPath: "/upload", afterBodyBytes: 200_000)
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("body.bin")
    try TestServer.patternBytes(count: 4 << 20).write(to: file)
    for _ in 0..<40 {
      let fetcher = server.fetcher("/upload")
      fetcher.request?.httpMethod = "PUT"
      fetcher.bodyFileURL = file
      let result = await fetcher.fetchResult()
      #expect(result.error != nil)
    }
  }

  /// Which file bodies the URLSession engine sends from memory (see `FileBodyInMemory`).
  @Test func smallFileBodiesAreSentFromMemory() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("body.bin")
    try Data(count: 1000).write(to: file)
    #expect(FileBodyInMemory.inMemoryBody(for: file, limit: 1000)?.count == 1000)
    #expect(FileBodyInMemory.inMemoryBody(for: file, limit: 999) == nil)
    #expect(FileBodyInMemory.inMemoryBody(for: folder.appendingPathComponent("missing")) == nil)
  }

  /// A file body sent from memory is mapped from its file, not copied into malloc's heap: freeing
  /// it must not raise glibc's mmap threshold (see "Linux notes").
  @Test(.linuxOnly("needs Linux: finds the mapping in /proc/self/maps"))
  func fileBodiesSentFromMemoryAreMapped() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("mapped-body.bin")
    try TestServer.patternBytes(count: 1 << 20).write(to: file)
    let body = try #require(FileBodyInMemory.inMemoryBody(for: file))
    #expect(body == TestServer.patternBytes(count: 1 << 20))
    let address = body.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    // The mapping that holds the bytes names the file (`start-end perms offset dev inode path`).
    // Read to the end: /proc files report a size of 0.
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps"))
    defer { try? handle.close() }
    let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    let holder = maps.split(separator: "\n").first { line in
      let bounds = line.prefix { $0 != " " }.split(separator: "-").compactMap { UInt($0, radix: 16) }
      return bounds.count == 2 && bounds[0] <= address && address < bounds[1]
    }
    #expect(holder?.hasSuffix(file.lastPathComponent) == true, "\(String(describing: holder))")
  }
}

@Suite("Timeouts under load", .serialized, .ownThreads)
struct TimeoutsUnderLoadTests {
  /// Timeouts fire while the program keeps every worker of the global queues busy with CPU-bound
  /// blocks (the network soak's checksums did): the timers have a queue of their own. A watcher
  /// thread (not the global queues, which Swift concurrency also runs on here) sees the timeout
  /// fire while the spinners still run; they stop then, or after 4 s, when a timeout held up by
  /// them would fire too late to be seen.
  @Test(arguments: FetcherEngine.libcurl.isAvailable ? [FetcherEngine.urlSession, .libcurl] : [.urlSession])
  func timeoutsFireWhileTheGlobalQueuesAreBusy(engine: FetcherEngine) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = FoundationNetworkingWorkaroundTests.fetcher(server.url("/hang"), timeout: 0.3)
    fetcher.engine = engine
    let busy = BusyGlobalQueues(until: {
      fetcher.storage.withLock { $0.lifecycle.exchange?.cancelReason != nil }
    })
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(busy.conditionHeldWhileBusy)
    busy.release()
    #expect(result.urlError?.code == .timedOut, "\(String(describing: result.error))")
  }

  /// A retry delay ends while the global queues are busy the same way: the retries have a queue of
  /// their own. The spinners start once the fetch waits to retry (after its 503), and stop when the
  /// delay ended, or after 4 s.
  @Test(arguments: FetcherEngine.libcurl.isAvailable ? [FetcherEngine.urlSession, .libcurl] : [.urlSession])
  func retryDelaysEndWhileTheGlobalQueuesAreBusy(engine: FetcherEngine) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = FoundationNetworkingWorkaroundTests.fetcher(
      server.url("/fail-first?n=1&key=\(UUID().uuidString)&status=503&bytes=100"), timeout: 10)
    fetcher.engine = engine
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.2
    // One retry, ended by a count rather than by the elapsed-time rule (3 × maxRetryInterval),
    // which a loaded machine can reach before the first 503 arrives.
    fetcher.maxRetryInterval = 60
    fetcher.maxRetryCount = 1
    let busy = BusyGlobalQueues(
      after: { fetcher.storage.withLock { $0.lifecycle.phase == .waitingToRetry } },
      until: { fetcher.storage.withLock { $0.run.timing.retryCount >= 1 } })
    let result = await fetcher.fetchResult(timeout: 30)
    #expect(busy.conditionHeldWhileBusy)
    busy.release()
    #expect(
      result.error == nil,
      "\(String(describing: result.error)); requests \(server.requests.count), \(fetcher.diagnosticSummary)")
    #expect(fetcher.retryCount == 1)
  }
}

/// Keeps every worker of the global queues busy with CPU-bound blocks (one more than there are
/// cores) for at most 4 s, from when `start` holds (checked for at most 10 s), and watches on a
/// thread of its own (not the global queues, which Swift concurrency also runs on here) whether
/// `condition` comes to hold meanwhile; the blocks stop then, or at ``release()``.
final class BusyGlobalQueues: Sendable {
  private let released = Locked(false)
  private let held = Locked(false)
  private let watched = DispatchSemaphore(value: 0)

  init(
    after start: @escaping @Sendable () -> Bool = { true }, until condition: @escaping @Sendable () -> Bool
  ) {
    let (released, held, watched) = (self.released, self.held, self.watched)
    let watcher = Thread {
      let waitLimit = DispatchTime.now() + 10
      while !start() && DispatchTime.now() < waitLimit { usleep(1_000) }
      let deadline = DispatchTime.now() + 4
      for _ in 0..<(ProcessInfo.processInfo.activeProcessorCount + 1) {
        DispatchQueue.global().async {
          while !released.withLock({ $0 }) && DispatchTime.now() < deadline {}
        }
      }
      while DispatchTime.now() < deadline {
        if condition() {
          held.withLock { $0 = true }
          break
        }
        usleep(5_000)
      }
      released.withLock { $0 = true }
      watched.signal()
    }
    watcher.start()
  }

  /// Whether `condition` came to hold while the blocks ran: waits for the watcher to see it (the
  /// condition stays true once the fetch is past it), or for the blocks' 4 s to run out (at most
  /// 15 s in all). Read it before ``release()``, which stops the blocks.
  var conditionHeldWhileBusy: Bool {
    _ = watched.wait(timeout: .now() + 15)
    watched.signal()
    return held.withLock { $0 }
  }

  func release() { released.withLock { $0 = true } }
}
