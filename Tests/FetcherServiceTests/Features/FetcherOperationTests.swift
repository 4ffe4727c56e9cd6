import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// An operation's outcome and timing from a real exchange on each engine. When operations finish,
/// chain, and stop is tested on the scripted engine (`ScriptedFetcherOperationTests`).
@Suite("FetcherOperation and OperationQueue")
struct FetcherOperationTests {
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
}
