import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Service challenge and metrics blocks")
struct ServiceChallengeAndMetricsTests {
  /// The original's testFetcherUsingMetricsCollectionBlockFromFetcherService.
  @Test func theServiceMetricsBlockMeasuresEveryExchangeOfItsFetchers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let urls = Recorder<String>()
    service.metricsCollectionBlock = { _ in urls.append("metrics") }
    let first = await service.fetcher(url: server.url("/bytes/10")).fetchResult()
    let second = await service.fetcher(url: server.url("/redirect/1")).fetchResult()
    #expect(first.error == nil && second.error == nil)
    #expect(urls.count == 3)
  }

  @Test func theServiceChallengeBlockAnswersForItsFetchers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let realms = Recorder<String>()
    service.challengeBlock = { _, challenge in
      realms.append(challenge.protectionSpace.realm ?? "")
      return (.useCredential, URLCredential(user: "user", password: "pa55", persistence: .none))
    }
    for path in ["/basic-auth/user/pa55", "/digest-auth/auth/user/pa55/SHA-256"] {
      let result = await service.fetcher(url: server.url(path)).fetchResult()
      #expect(result.error == nil, "\(path): \(String(describing: result.error))")
    }
    #expect(realms.values == ["test", "test"])
  }
}
