import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Weak references to fetchers, to prove every one was deallocated.
final class WeakFetchers: @unchecked Sendable {
  // `@unchecked Sendable`: `references` is only touched under `lock`.
  private let lock = NSLock()
  private var references: [WeakReference<SessionFetcher>] = []
  /// Kept until notifications are counted: a freed fetcher's address (its ObjectIdentifier) may be
  /// reused by another suite's fetcher, whose notifications would then be counted too.
  private var strong: [SessionFetcher] = []

  func add(_ fetcher: SessionFetcher) {
    let reference = WeakReference(fetcher)
    lock.lock()
    references.append(reference)
    strong.append(fetcher)
    lock.unlock()
  }

  /// Whether any fetcher still runs.
  var anyFetching: Bool {
    lock.lock()
    defer { lock.unlock() }
    return strong.contains { $0.isFetching }
  }

  /// Drops the strong references: from now on only the fetchers themselves keep them alive.
  func release() {
    lock.lock()
    strong = []
    lock.unlock()
  }

  var total: Int {
    lock.lock()
    defer { lock.unlock() }
    return references.count
  }

  var alive: Int {
    lock.lock()
    let all = references
    lock.unlock()
    return all.reduce(0) { $0 + ($1.object == nil ? 0 : 1) }
  }
}

/// Counts Started/Stopped and RetryDelayStarted/Stopped per fetcher, for every fetcher it watches.
final class BalanceCounter: @unchecked Sendable {
  // `@unchecked Sendable`: `balance` and `watched` are only touched under `lock`.
  private let lock = NSLock()
  private var balance: [ObjectIdentifier: (attempt: Int, delay: Int)] = [:]
  private var watched: Set<ObjectIdentifier> = []
  private var observers: [any NSObjectProtocol] = []

  init() {
    let deltas: [(Notification.Name, Int, Int)] = [
      (.sessionFetcherStarted, 1, 0), (.sessionFetcherStopped, -1, 0),
      (.sessionFetcherRetryDelayStarted, 0, 1), (.sessionFetcherRetryDelayStopped, 0, -1),
    ]
    for (name, attempt, delay) in deltas {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
          guard let self, let fetcher = note.object as? SessionFetcher else { return }
          let id = ObjectIdentifier(fetcher)
          self.lock.lock()
          if self.watched.contains(id) {
            let old = self.balance[id] ?? (0, 0)
            self.balance[id] = (old.attempt + attempt, old.delay + delay)
          }
          self.lock.unlock()
        })
    }
  }

  deinit {
    for observer in observers { NotificationCenter.default.removeObserver(observer) }
  }

  func watch(_ fetcher: SessionFetcher) {
    lock.lock()
    watched.insert(ObjectIdentifier(fetcher))
    lock.unlock()
  }

  /// Fetchers whose Started/Stopped or RetryDelayStarted/Stopped do not balance (or went negative).
  var unbalanced: Int {
    lock.lock()
    defer { lock.unlock() }
    return balance.values.filter { $0.attempt != 0 || $0.delay != 0 }.count
  }
}

@Suite("Races and leaks", .ownThreads)
struct RacesAndLeaksTests {
  @Test("1,000 begin/stop pairs from several threads: no completion after stop, balanced, all freed")
  func beginStopPairs() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let weak = WeakFetchers()
    let balance = BalanceCounter()
    let lateCompletions = Recorder<Int>()
    let queue = DispatchQueue(label: "races.callbacks")
    await offThePool {
      DispatchQueue.concurrentPerform(iterations: 1_000) { index in
        do {
          let path = ["/hang", "/bytes/1000", "/delay/0.01"][index % 3]
          let fetcher = server.fetcher("\(path)?i=\(index)", queue: queue)
          weak.add(fetcher)
          balance.watch(fetcher)
          let stopped = Recorder<Bool>()
          fetcher.beginFetch { _, _ in
            if stopped.count > 0 { lateCompletions.append(index) }
          }
          if index % 4 == 0 { usleep(UInt32.random(in: 0...2_000)) }
          fetcher.stopFetching()
          // A completion already running when stop was called may finish; none may start later.
          queue.sync {}
          stopped.append(true)
        }
      }
    }
    #expect(await eventually(timeout: 30) { !weak.anyFetching })
    await drain(queue)
    #expect(weak.total == 1_000)
    #expect(lateCompletions.count == 0)
    #expect(balance.unbalanced == 0)
    weak.release()
    #expect(await eventually(timeout: 30) { weak.alive == 0 })
  }

  @Test("Task cancellation at random points ends every fetch once; every fetcher is freed")
  func taskCancellationAtRandomPoints() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let weak = WeakFetchers()
    let balance = BalanceCounter()
    let outcomes = Recorder<String>()
    let queue = DispatchQueue(label: "cancellation.callbacks")
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<200 {
        group.addTask {
          let paths = ["/delay/0.05", "/bytes/50000", "/drip?bytes=1000&chunks=5&interval=10"]
          let fetcher = server.fetcher(paths[index % 3], queue: queue)
          fetcher.isRetryEnabled = index % 2 == 0
          weak.add(fetcher)
          balance.watch(fetcher)
          let task = Task { try await fetcher.beginFetch() }
          try? await Task.sleep(nanoseconds: UInt64.random(in: 0...60_000_000))
          task.cancel()
          switch await task.result {
          case .success: outcomes.append("ok")
          case .failure(let error as SessionFetcherError) where error == .cancelled:
            outcomes.append("cancelled")
          case .failure(let error): outcomes.append("other \(error)")
          }
        }
      }
    }
    #expect(outcomes.count == 200)
    #expect(outcomes.values.allSatisfy { $0 == "ok" || $0 == "cancelled" })
    #expect(await eventually(timeout: 30) { !weak.anyFetching })
    await drain(queue)
    #expect(balance.unbalanced == 0)
    weak.release()
    #expect(await eventually(timeout: 30) { weak.alive == 0 })
  }

  @Test("fetchers that complete normally (data, error, file, retries) are all deallocated")
  func completedFetchersAreFreed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let weak = WeakFetchers()
    for index in 0..<60 {
      let paths = [
        "/bytes/1000", "/status/404", "/fail-first?n=1&key=leak\(index)&fault=reset", "/redirect/2", "/hang",
      ]
      let fetcher = server.fetcher(paths[index % paths.count])
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.01
      fetcher.sendProgressBlock = { _, _, _ in _ = fetcher }  // a cycle the fetcher must break
      if index % 5 == 4 {
        fetcher.request?.timeoutInterval = 0.2
        fetcher.maxRetryInterval = 0.02
      }
      if index % 7 == 0 { fetcher.destinationFileURL = folder.appendingPathComponent("f\(index)") }
      weak.add(fetcher)
      _ = await fetcher.fetchResult()
    }
    weak.release()
    #expect(await eventually(timeout: 60) { weak.alive == 0 })
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      !$0.hasPrefix("f")
    }
    #expect(leftovers.isEmpty)
  }
}
