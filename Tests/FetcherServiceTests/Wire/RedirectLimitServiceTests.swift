import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Service redirect limit")
struct RedirectLimitServiceTests {
  @Test func fetchersCarryTheServiceLimit() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    #expect(service.maximumRedirects == 20)
    service.maximumRedirects = 2

    let atLimit = service.fetcher(url: server.url("/redirect/2"))
    #expect(atLimit.maximumRedirects == 2)
    let result = await atLimit.fetchResult(timeout: 60)
    #expect(result.error == nil)
    #expect(atLimit.timing.redirectCount == 2)

    let over = service.fetcher(url: server.url("/redirect/3"))
    let overResult = await over.fetchResult(timeout: 60)
    #expect(overResult.urlError?.code == .httpTooManyRedirects)
    #expect(over.timing.redirectCount == 2)

    // A fetcher may still change its own.
    let own = service.fetcher(url: server.url("/redirect/3"))
    own.maximumRedirects = 3
    #expect(await own.fetchResult(timeout: 60).error == nil)
  }

  @Test func aServiceLimitOfZeroMakesRedirectsFinal() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.maximumRedirects = 0
    let fetcher = service.fetcher(url: server.url("/redirect/1"))
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError == .status(code: 302, data: Data("redirecting".utf8)))
    #expect(server.requests.count == 1)
  }

  @Test func aNegativeServiceLimitFailsEachFetchAtBegin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.maximumRedirects = -5
    let fetcher = service.fetcher(url: server.url("/redirect/1"))
    let result = await fetcher.fetchResult(timeout: 60)
    guard case .invalidConfiguration(let message)? = result.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
      return
    }
    #expect(message.contains("maximumRedirects"))
    #expect(server.requests.isEmpty)
  }
}
