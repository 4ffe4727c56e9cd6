import FetcherTesting
import Foundation
import Testing

@Suite("Elastic thread executor")
struct ElasticThreadExecutorTests {
  /// Eight child tasks that each block their thread until all eight have started: on the
  /// cooperative pool (one thread per core) the later ones never start and the waits run out; on
  /// the executor each blocked job gets a thread of its own.
  @Test func blockedJobsDoNotStarveTheOthers() async {
    let count = 8
    let started = DispatchSemaphore(value: 0)
    let allStarted = Gate()
    let metAll = Recorder<Bool>()
    let met = await withOwnThreads {
      await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count {
          group.addTask {
            started.signal()
            // Blocks this thread until every task has signalled (at most 20 s).
            allStarted.wait(timeout: 20)
            return metAll.count == 1
          }
        }
        for _ in 0..<count { _ = started.wait(timeout: .now() + 20) }
        metAll.append(true)
        allStarted.open()
        var results: [Bool] = []
        for await result in group { results.append(result) }
        return results
      }
    }
    #expect(met == Array(repeating: true, count: count))
  }
}
