import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `FetcherOperation` in an `OperationQueue`, on the scripted engine: when an operation finishes
/// (after retries, after a stop), what a chained operation fetches, and what a cancelled queue
/// sends.
@Suite("FetcherOperation and OperationQueue on the scripted engine")
struct ScriptedFetcherOperationTests {
  struct Login: Codable, Sendable {
    var userID: Int
    var token: String
  }

  /// Waits (bounded, without blocking a cooperative thread for long) for every operation to finish.
  private func allFinish(_ operations: [FetcherOperation]) async -> Bool {
    await eventually { operations.allSatisfy(\.isFinished) }
  }

  @Test func anHTTPErrorFinishesWithTheStatusError() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/busy", with: .response(status: 503, body: Data("busy".utf8)))
    let operation = FetcherOperation(
      fetcher: ScriptedServiceTests.service(engine).fetcher(url: engine.url("/busy")))
    OperationQueue().addOperation(operation)
    #expect(await allFinish([operation]))
    let error = try #require(operation.error as? SessionFetcherError)
    #expect(error.statusCode == 503)
    #expect(error.data == Data("busy".utf8))
    #expect(operation.data == nil)
    #expect(throws: SessionFetcherError.self) { try operation.decode([String].self) }
  }

  /// The operation is executing through its fetcher's retries, and finishes once the last attempt
  /// answered (held at a gate until the test has looked).
  @Test func theOperationFinishesOnlyAfterRetries() async throws {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    engine.respond(
      to: "/flaky", with: .response(status: 503), .response(status: 503),
      ScriptedExchange([.wait(gate), .head(status: 200), .body(Data("ok".utf8))]))
    let service = ScriptedServiceTests.service(engine)
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    let operation = FetcherOperation(fetcher: service.fetcher(url: engine.url("/flaky")))
    OperationQueue().addOperation(operation)
    #expect(await eventually { engine.requests.count == 3 })
    #expect(operation.isExecuting && !operation.isFinished)
    gate.open()
    #expect(await allFinish([operation]))
    #expect(engine.requests.count == 3)
    #expect(operation.data == Data("ok".utf8))
    #expect(operation.timing?.retryCount == 2)
  }

  @Test func aChainedOperationUsesTheFirstOnesParsedResult() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/login", with: .response(body: Data(#"{"userID":42,"token":"t0k3n"}"#.utf8)))
    engine.respond(to: "/users/42", with: .response(body: Data("profile of 42".utf8)))
    let service = ScriptedServiceTests.service(engine)
    let login = FetcherOperation(fetcher: service.fetcher(url: engine.url("/login")))
    let profile = FetcherOperation {
      let session = try login.decode(Login.self)
      let fetcher = service.fetcher(url: engine.url("/users/\(session.userID)"))
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
    #expect(engine.requests.map(\.path) == ["/login", "/users/42"])
    #expect(engine.requests.last?.header("Authorization") == "Bearer t0k3n")
  }

  @Test func aFailedDependencyFailsTheFactoryWithoutAFetch() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/login", with: .response(status: 401))
    let service = ScriptedServiceTests.service(engine)
    let login = FetcherOperation(fetcher: service.fetcher(url: engine.url("/login")))
    let profile = FetcherOperation {
      _ = try login.decode(Login.self)
      return service.fetcher(url: engine.url("/users/1"))
    }
    profile.addDependency(login)
    OperationQueue().add([login, profile])
    #expect(await allFinish([login, profile]))
    #expect((profile.error as? SessionFetcherError)?.statusCode == 401)
    #expect(profile.fetcher == nil)
    #expect(engine.requests.map(\.path) == ["/login"])
  }

  /// Two operations at a time: the third fetch goes out only when one of the first two finished.
  @Test func maxConcurrentOperationCountIsRespected() async throws {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    engine.respond(
      to: "/slow", with: ScriptedExchange([.wait(gate), .head(status: 200), .body(Data("b".utf8))]))
    let service = ScriptedServiceTests.service(engine, maxPerHost: 0)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 2
    let operations = (0..<6).map { index in
      FetcherOperation(fetcher: service.fetcher(url: engine.url("/slow?i=\(index)")))
    }
    queue.add(operations)
    #expect(await eventually { engine.requests.count == 2 })
    #expect(operations.filter(\.isExecuting).count == 2)
    gate.open()
    #expect(await allFinish(operations))
    #expect(operations.allSatisfy { $0.data == Data("b".utf8) })
    #expect(engine.requests.count == 6)
    #expect(ScriptedThrottlingTests.peakConcurrency(engine.requests, host: "scripted.test") == 2)
  }

  @Test func cancellingTheQueueStopsRunningFetchesAndSkipsWaitingOnes() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let service = ScriptedServiceTests.service(engine)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 2
    let operations = (0..<4).map { _ in FetcherOperation(fetcher: service.fetcher(url: engine.url("/hang"))) }
    let completions = Recorder<Int>()
    for (index, operation) in operations.enumerated() {
      operation.completionBlock = { completions.append(index) }
    }
    let recorder = NotificationRecorder(operations.compactMap(\.fetcher))
    queue.add(operations)
    #expect(await eventually { engine.requests.count == 2 })
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
    // Each fetch that started sent at most its one request, each cancelled, and nothing was
    // retried or restarted.
    #expect(await eventually { engine.requests.allSatisfy(\.hasCompleted) })
    await engine.drainEvents()
    await drain(service.callbackQueue)
    #expect(engine.requests.count <= recorder.started)
    #expect(engine.requests.allSatisfy { $0.wasCancelled })
    #expect(completions.count == 4)
    #expect(operations.allSatisfy { ($0.error as? SessionFetcherError) == .cancelled })
  }

  @Test func anOperationCancelledBeforeItStartsFinishesWithoutFetching() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/one", with: .response(body: Data("1".utf8)))
    let fetcher = ScriptedServiceTests.service(engine).fetcher(url: engine.url("/one"))
    let operation = FetcherOperation(fetcher: fetcher)
    let queue = OperationQueue()
    queue.isSuspended = true
    queue.addOperation(operation)
    operation.cancel()
    queue.isSuspended = false
    #expect(await allFinish([operation]))
    #expect((operation.error as? SessionFetcherError) == .cancelled)
    #expect(operation.timing == nil || operation.timing?.startDate == nil)
    // A fetch begun by mistake would be waited for here, and its request recorded.
    #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    await engine.drainEvents()
    #expect(engine.requests.isEmpty)
    #expect(!fetcher.isFetching)
  }

  @Test func stoppingTheServiceFinishesItsOperations() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let service = ScriptedServiceTests.service(engine)
    let operation = FetcherOperation(fetcher: service.fetcher(url: engine.url("/hang")))
    OperationQueue().addOperation(operation)
    #expect(await eventually { engine.requests.count == 1 })
    service.stopAllFetchers()
    #expect(await allFinish([operation]))
    #expect((operation.error as? SessionFetcherError) == .cancelled)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
  }

  @Test func waitUntilFinishedAndStartOutsideAQueueWork() async throws {
    let engine = ScriptedEngine()
    // The answer waits for the gate, so the operation is still executing when it is looked at.
    let gate = ScriptedGate()
    engine.respond(
      to: "/held", with: ScriptedExchange([.wait(gate), .head(status: 200), .body(Data("hi".utf8))]))
    let operation = FetcherOperation(
      fetcher: ScriptedServiceTests.service(engine).fetcher(url: engine.url("/held")))
    operation.start()
    #expect(operation.isExecuting && !operation.isFinished)
    #expect(await eventually { engine.requests.count == 1 })
    #expect(operation.isExecuting && !operation.isFinished)
    gate.open()
    await Task.detached { blockUntilFinished(operation) }.value
    #expect(operation.isFinished && !operation.isExecuting)
    #expect(operation.data == Data("hi".utf8))
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
