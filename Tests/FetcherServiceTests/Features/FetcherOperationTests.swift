import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("FetcherOperation and OperationQueue")
struct FetcherOperationTests {
  struct Login: Codable, Sendable {
    var userID: Int
    var token: String
  }

  /// Waits (bounded, without blocking a cooperative thread for long) for every operation to finish.
  private func allFinish(_ operations: [FetcherOperation], timeout: TimeInterval = 15) async -> Bool {
    await eventually(timeout: timeout) { operations.allSatisfy(\.isFinished) }
  }

  @Test func anOperationFetchesAndExposesTheOutcome() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let operation = FetcherOperation(fetcher: service.fetcher(url: server.url("/bytes/2000")))
    #expect(operation.isAsynchronous)
    #expect(!operation.isExecuting && !operation.isFinished)
    let completions = Recorder<Bool>()
    operation.completionBlock = { completions.append(true) }
    let queue = OperationQueue()
    queue.addOperation(operation)
    #expect(await allFinish([operation]))
    #expect(!operation.isExecuting)
    #expect(operation.error == nil)
    #expect(operation.data == TestServer.patternBytes(count: 2000))
    #expect((operation.response as? HTTPURLResponse)?.statusCode == 200)
    let timing = try #require(operation.timing)
    #expect(timing.bytesReceived == 2000)
    #expect(timing.retryCount == 0)
    #expect(timing.duration != nil)
    #expect(timing.firstByteDate != nil)
    #expect((timing.timeToFirstByte ?? -1) >= 0)
    #expect(timing.description.contains("received 2000 B"))
    #expect(await eventually { completions.count == 1 })
  }

  @Test func anHTTPErrorFinishesWithTheStatusError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let operation = FetcherOperation(fetcher: makeService().fetcher(url: server.url("/status/503")))
    OperationQueue().addOperation(operation)
    #expect(await allFinish([operation]))
    let error = try #require(operation.error as? SessionFetcherError)
    #expect(error.statusCode == 503)
    #expect(error.data?.isEmpty == false)
    #expect(operation.data == nil)
    #expect(throws: SessionFetcherError.self) { try operation.decode([String].self) }
  }

  @Test func theOperationFinishesOnlyAfterRetries() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.isRetryEnabled = true
    service.minRetryInterval = 0.3
    let operation = FetcherOperation(
      fetcher: service.fetcher(url: server.url("/fail-first?n=2&key=op-retry&status=503")))
    OperationQueue().addOperation(operation)
    #expect(await eventually { server.requestCount(path: "/fail-first") >= 1 })
    // Waiting out a retry delay (at least 0.3 s after the first failure): still executing.
    #expect(server.requestCount(path: "/fail-first") == 3 || (operation.isExecuting && !operation.isFinished))
    #expect(await allFinish([operation]))
    #expect(server.requestCount(path: "/fail-first") == 3)
    #expect(operation.error == nil)
    #expect(operation.timing?.retryCount == 2)
  }

  @Test func aChainedOperationUsesTheFirstOnesParsedResult() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/login") { _ in .json(#"{"userID":42,"token":"t0k3n"}"#) }
    server.route("/users/42") { request in
      request.header("Authorization") == "Bearer t0k3n" ? .text("profile of 42") : .text("no", status: 401)
    }
    let service = makeService()
    let login = FetcherOperation(fetcher: service.fetcher(url: server.url("/login")))
    let profile = FetcherOperation {
      let session = try login.decode(Login.self)
      let fetcher = service.fetcher(url: server.url("/users/\(session.userID)"))
      fetcher.setRequestValue("Bearer \(session.token)", forHTTPHeaderField: "Authorization")
      return fetcher
    }
    profile.addDependency(login)
    #expect(profile.fetcher == nil)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 4
    // Added in reverse: only the dependency orders them.
    queue.add([profile, login])
    #expect(await allFinish([login, profile]))
    #expect(profile.error == nil)
    #expect(profile.data == Data("profile of 42".utf8))
    #expect(server.requests.map(\.path) == ["/login", "/users/42"])
  }

  @Test func aFailedDependencyFailsTheFactoryWithoutAFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let login = FetcherOperation(fetcher: service.fetcher(url: server.url("/status/401")))
    let profile = FetcherOperation {
      _ = try login.decode(Login.self)
      return service.fetcher(url: server.url("/users/1"))
    }
    profile.addDependency(login)
    OperationQueue().add([login, profile])
    #expect(await allFinish([login, profile]))
    #expect((profile.error as? SessionFetcherError)?.statusCode == 401)
    #expect(profile.fetcher == nil)
    #expect(server.requestCount(path: "/users/1") == 0)
  }

  @Test func maxConcurrentOperationCountIsRespectedOnTheWire() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let meter = ConcurrencyMeter()
    server.meteredRoute("/slow", meter: meter, delay: 0.15)
    let service = makeService(maxPerHost: 0)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 2
    let operations = (0..<6).map { index in
      FetcherOperation(fetcher: service.fetcher(url: server.url("/slow?i=\(index)")))
    }
    queue.add(operations)
    #expect(await allFinish(operations, timeout: 30))
    #expect(operations.allSatisfy { $0.error == nil })
    #expect(Set(operations.compactMap { $0.data.map { String(decoding: $0, as: UTF8.self) } }).count == 6)
    #expect(server.requestCount(path: "/slow") == 6)
    #expect(meter.peakByHost["127.0.0.1"] == 2)
  }

  @Test func cancellingTheQueueStopsRunningFetchesAndSkipsWaitingOnes() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 2
    let operations = (0..<4).map { _ in FetcherOperation(fetcher: service.fetcher(url: server.url("/hang"))) }
    let completions = Recorder<Int>()
    for (index, operation) in operations.enumerated() {
      operation.completionBlock = { completions.append(index) }
    }
    let recorder = NotificationRecorder(operations.compactMap(\.fetcher))
    queue.add(operations)
    #expect(await eventually { server.requestCount(path: "/hang") == 2 })
    #expect(operations.filter(\.isExecuting).count == 2)

    queue.cancelAllOperations()
    #expect(await allFinish(operations))
    for operation in operations {
      #expect((operation.error as? SessionFetcherError) == .cancelled)
      #expect(operation.data == nil)
      #expect(operation.fetcher?.isFetching == false)
    }
    #expect(await eventually { completions.count == 4 })
    #expect(await eventually { queue.operationCount == 0 })
    // Every fetch that started also stopped. (`cancelAllOperations()` cancels one operation after
    // another, so a waiting operation may start in a freed slot before its own turn comes: it is
    // then stopped like the running ones.)
    #expect(recorder.started >= 2)
    #expect(await eventually { recorder.stopped == recorder.started })
    // Each fetch that started sent at most its one request, and nothing was retried or restarted.
    // (A fetch stopped just after it started may still reach the server a little later: the engine
    // cancels on its own thread, and may already have sent the request.)
    await pause(0.3)
    #expect(server.requestCount(path: "/hang") <= recorder.started)
    #expect(completions.count == 4)
    #expect(operations.allSatisfy { ($0.error as? SessionFetcherError) == .cancelled })
  }

  @Test func anOperationCancelledBeforeItStartsFinishesWithoutFetching() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeService().fetcher(url: server.url("/bytes/1"))
    let operation = FetcherOperation(fetcher: fetcher)
    let queue = OperationQueue()
    queue.isSuspended = true
    queue.addOperation(operation)
    operation.cancel()
    queue.isSuspended = false
    #expect(await allFinish([operation]))
    #expect((operation.error as? SessionFetcherError) == .cancelled)
    #expect(operation.timing == nil || operation.timing?.startDate == nil)
    await pause(0.2)
    #expect(server.requests.isEmpty)
    #expect(!fetcher.isFetching)
  }

  @Test func stoppingTheServiceFinishesItsOperations() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let operation = FetcherOperation(fetcher: service.fetcher(url: server.url("/hang")))
    OperationQueue().addOperation(operation)
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    service.stopAllFetchers()
    #expect(await allFinish([operation]))
    #expect((operation.error as? SessionFetcherError) == .cancelled)
  }

  @Test func waitUntilFinishedAndStartOutsideAQueueWork() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // The server holds its answer until the gate opens, so the operation is still executing when
    // it is looked at (a loopback answer can otherwise arrive before the next line runs).
    let gate = Gate()
    server.meteredRoute("/held", meter: ConcurrencyMeter(), gate: gate)
    let operation = FetcherOperation(fetcher: makeService().fetcher(url: server.url("/held?i=hi")))
    operation.start()
    #expect(operation.isExecuting && !operation.isFinished)
    #expect(await eventually { server.requestCount(path: "/held") == 1 })
    #expect(operation.isExecuting && !operation.isFinished)
    gate.open()
    await Task.detached { blockUntilFinished(operation) }.value
    #expect(operation.isFinished && !operation.isExecuting)
    #expect(operation.data == Data("body hi".utf8))
  }
}

/// `Operation.waitUntilFinished()` is unavailable in async code; this synchronous wrapper runs it on
/// a detached task's thread, to check that Foundation's own waiting sees the finish.
private func blockUntilFinished(_ operation: Operation) {
  operation.waitUntilFinished()
}

extension OperationQueue {
  /// Adds `operations` one by one (`addOperations(_:waitUntilFinished:)` is unavailable in async code).
  fileprivate func add(_ operations: [Operation]) {
    for operation in operations { addOperation(operation) }
  }
}
