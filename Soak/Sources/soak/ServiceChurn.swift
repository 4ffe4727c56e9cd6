import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SoakSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Services made, used for a few fetches and dropped, one after another: what each leaves behind.
/// RSS after `malloc_trim` at the end of a warm-up and at the end, against a baseline that makes and
/// drops the same URLSessions (a delegate, a serial delegate queue, `finishTasksAndInvalidate`)
/// without the library.
///
///     swift run -c release --package-path Soak soak --service-churn N [--engine urlSession|libcurl]
struct ServiceChurnRun {
  let count: Int
  let fetchesPerService: Int
  let engine: FetcherEngine

  /// Growth over `count` services (trimmed RSS), with the library and the baseline.
  struct Figures {
    var library: Int64
    var baseline: Int64?
    var alive: Int
    var failed: Int
  }

  func run() throws -> Figures {
    let server = try TestServer()
    defer { server.stop() }
    let url = server.url("/bytes/1024")
    let warmUp = max(1, min(500, count / 10))

    say("== \(count) services, \(fetchesPerService) fetches each, engine \(engine)")
    var failed = 0
    var alive = 0
    let library = measure(count: count, warmUp: warmUp, server: server) { _ in
      let service = FetcherService()
      service.allowLocalhostRequest = true
      service.engine = engine
      service.callbackQueue = DispatchQueue(label: "soak.churn")
      for _ in 0..<fetchesPerService {
        let done = DispatchSemaphore(value: 0)
        let ok = Guarded(false)
        service.fetcher(url: url).beginFetch { data, error in
          ok.with { $0 = error == nil && data?.count == 1024 }
          done.signal()
        }
        if done.wait(timeout: .now() + 20) == .timedOut || !ok.with({ $0 }) { failed += 1 }
      }
      return service
    } alive: { services in
      alive = services
    }
    say("failed fetches:                \(failed)")
    say("services alive at the end:     \(alive)")
    say("trimmed RSS growth (library):  \(megabytes(library)) (\(library / Int64(count)) bytes a service)")

    var baseline: Int64?
    if engine == .urlSession {
      var baselineFailed = 0
      let growth = measure(count: count, warmUp: warmUp, server: server) { _ in
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let delegate = BaselineDelegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        for _ in 0..<fetchesPerService {
          if !delegate.fetch(url, on: session) { baselineFailed += 1 }
        }
        session.finishTasksAndInvalidate()
        return session
      } alive: { _ in
      }
      say("failed fetches (baseline):     \(baselineFailed)")
      say(
        "trimmed RSS growth (URLSession alone): \(megabytes(growth)) (\(growth / Int64(count)) bytes a session)"
      )
      baseline = growth
    }
    return Figures(library: library, baseline: baseline, alive: alive, failed: failed)
  }

  /// Runs `make` `count` times, dropping what it returns at once (but watching it weakly), and
  /// returns the trimmed RSS at the end minus the trimmed RSS after `warmUp` rounds.
  private func measure(
    count: Int, warmUp: Int, server: TestServer, make: (Int) -> AnyObject, alive: (Int) -> Void
  ) -> Int64 {
    var start: Int64 = 0
    var watched: [() -> AnyObject?] = []
    for index in 0..<count {
      if index % 100 == 0 { server.resetRecords() }
      if index == warmUp {
        settle()
        start = residentBytesAfterTrim()
        describeMemory("after warm-up")
      }
      let object = make(index)
      if index % 97 == 0 { watched.append({ [weak object] in object }) }
    }
    settle()
    let deadline = Date().addingTimeInterval(10)
    var living = watched.filter { $0() != nil }.count
    while living > 0 && Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
      living = watched.filter { $0() != nil }.count
    }
    alive(living)
    let end = residentBytesAfterTrim()
    describeMemory("at the end")
    return end - start
  }

  /// Where the memory is: malloc's heap in use and kept, mmapped blocks, threads.
  private func describeMemory(_ moment: String) {
    guard let figures = MallocFigures.current() else { return }
    say(
      "  \(moment): RSS \(megabytes(residentBytes())), malloc in use \(megabytes(figures.fromSystem - figures.freeKept + figures.mapped)) (\(figures.arenas) arenas, \(megabytes(figures.freeKept)) free but kept), threads \(threadCount())"
    )
  }

  /// Lets sessions invalidated a moment ago finish going away.
  private func settle() {
    Thread.sleep(forTimeInterval: 0.5)
  }
}

/// A URLSession delegate that collects one data task's body, as the library's does.
final class BaselineDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // `@unchecked Sendable`: `body` and `done` are only touched on the session's serial delegate
  // queue, and read after `done` was signalled.
  private var body = Data()
  private var done = DispatchSemaphore(value: 0)
  private var succeeded = false

  func fetch(_ url: URL, on session: URLSession) -> Bool {
    body = Data()
    succeeded = false
    done = DispatchSemaphore(value: 0)
    let semaphore = done
    session.dataTask(with: url).resume()
    return semaphore.wait(timeout: .now() + 20) == .success && succeeded
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    body.append(data)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    succeeded = error == nil && body.count == 1024
    done.signal()
  }
}
