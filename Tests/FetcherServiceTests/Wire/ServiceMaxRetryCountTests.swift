import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("FetcherService.maxRetryCount")
struct ServiceMaxRetryCountTests {
  @Test func fetchersTakeTheServiceLimitWhenMade() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    #expect(service.maxRetryCount == nil)
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    service.maxRetryCount = 1
    let fetcher = service.fetcher(url: server.url("/fail-first?n=3&key=\(UUID().uuidString)&status=503"))
    service.maxRetryCount = 5  // Fetchers already made keep their copy.
    #expect(fetcher.maxRetryCount == 1)
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    #expect(server.requests(path: "/fail-first").count == 2)
    #expect(service.fetcher(urlString: "https://example.com/").maxRetryCount == 5)
  }

  @Test func aNegativeServiceLimitFailsItsFetchersAtBegin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.maxRetryCount = -2
    let result = await service.fetcher(url: server.url("/bytes/1")).fetchResult()
    guard case .invalidConfiguration? = result.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
      return
    }
    await pause(0.1)
    #expect(server.requests.isEmpty)
  }
}
