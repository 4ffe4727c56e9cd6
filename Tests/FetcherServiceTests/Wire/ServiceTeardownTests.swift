import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A service made, used and dropped leaves nothing of its own behind: soak runs of thousands of
/// such services measure the memory (`soak --service-churn`); these pin what that found.
@Suite("A dropped service")
struct ServiceTeardownTests {
  /// Weak references to what services left, to check that all of it went away.
  final class Watched: @unchecked Sendable {
    // `@unchecked Sendable`: only touched by the test's own task.
    var services: [() -> AnyObject?] = []
    var marks: [() -> AnyObject?] = []

    var livingServices: Int { services.filter { $0() != nil }.count }
    var livingMarks: Int { marks.filter { $0() != nil }.count }
  }

  /// The idle check a service queues when its last fetcher ends (to close the session after
  /// `unusedSessionTimeout`) goes with the service: it kept its block, the block's weak reference
  /// and the service's memory for the whole timeout (an hour here) when it was an `asyncAfter`.
  @Test("leaves no idle check queued")
  func leavesNoIdleCheck() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let watched = Watched()
    for _ in 0..<20 {
      let service = makeService()
      service.unusedSessionTimeout = 3600
      let result = await service.fetcher(url: server.url("/bytes/10")).fetchResult()
      #expect(result.error == nil)
      // Queued when the fetcher ended, before its completion ran.
      let timer = try #require(service.idleCheckTimer)
      let mark = timer.handlerMark
      watched.marks.append({ [weak mark] in mark })
      watched.services.append({ [weak service] in service })
    }
    // The fetchers let go of their services once their completions have run.
    #expect(await eventually { watched.livingServices == 0 })
    #expect(await eventually { watched.livingMarks == 0 }, "\(watched.livingMarks) idle checks left")
  }
}
