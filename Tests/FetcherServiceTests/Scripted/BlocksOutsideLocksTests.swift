import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The service's blocks are the caller's code and may read the service: none runs while the
/// service holds its lock (which is not reentrant: a read from inside would wait on itself for
/// ever, and hold the thread that began the fetch).
@Suite("FetcherService runs its blocks outside its lock")
struct BlocksOutsideLocksTests {
  /// `configurationBlock` reads the service's settings while the shared session is made. The fetch
  /// begins on a thread of its own, so that a block that deadlocks fails the test at its bound
  /// instead of hanging the run.
  @Test func theConfigurationBlockMayReadTheService() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/one", with: .response(body: Data("1".utf8)))
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.blocks.service")
    service.run(on: engine)
    let seen = Recorder<String>()
    service.configurationBlock = { [weak service] configuration in
      guard let service else { return }
      seen.append("per host \(service.maxRunningFetchersPerHost), reuse \(service.reuseSession)")
      configuration.httpAdditionalHeaders = ["X-Configured": "yes"]
    }
    let expected = "per host \(service.maxRunningFetchersPerHost), reuse true"
    let completed = Recorder<Data?>()
    let fetcher = service.fetcher(url: engine.url("/one"))
    Thread.detachNewThread {
      fetcher.beginFetch { data, _ in completed.append(data) }
    }
    guard await eventually(timeout: 60, { completed.count == 1 }) else {
      // The service's lock is held for ever by the thread that began: touch nothing of it.
      Issue.record("the fetch did not complete: the configuration block waits on the service's lock")
      return
    }
    #expect(completed.values.first == Data("1".utf8))
    #expect(seen.values == [expected])
    #expect(engine.requests.first?.headers["X-Configured"] == "yes")
    #expect(service.sharedSessionCreationCount == 1)
  }

  /// Fetchers that find no shared session at once each may make one; one is shared, and every
  /// fetch completes on it.
  @Test func fetchersBegunTogetherShareOneSession() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/one", with: .response(body: Data("1".utf8)))
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.blocks.together")
    service.run(on: engine)
    service.configurationBlock = { _ in usleep(2_000) }  // widens the window two makers share
    let completed = Recorder<Bool>()
    let fetchers = (0..<8).map { _ in service.fetcher(url: engine.url("/one")) }
    DispatchQueue.concurrentPerform(iterations: fetchers.count) { index in
      fetchers[index].beginFetch { data, error in completed.append(error == nil && data == Data("1".utf8)) }
    }
    #expect(await eventually(timeout: 60) { completed.count == fetchers.count })
    #expect(completed.values.allSatisfy { $0 })
    #expect(service.sharedSessionCreationCount == 1)
  }
}
