import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The service's `maximumRedirects`, carried by its fetchers, on the scripted engine: `/r/N`
/// redirects to `/r/N-1`, and `/r/0` answers.
@Suite("Service redirect limit on the scripted engine")
struct ScriptedRedirectLimitServiceTests {
  static func engine() -> ScriptedEngine {
    let engine = ScriptedEngine()
    for hop in 1...3 { engine.respond(to: "/r/\(hop)", with: .redirect(to: "/r/\(hop - 1)")) }
    engine.respond(to: "/r/0", with: .response(body: Data("arrived".utf8)))
    return engine
  }

  @Test func fetchersCarryTheServiceLimit() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    #expect(service.maximumRedirects == 20)
    service.maximumRedirects = 2

    let atLimit = service.fetcher(url: engine.url("/r/2"))
    #expect(atLimit.maximumRedirects == 2)
    #expect(await atLimit.fetchResult().data == Data("arrived".utf8))
    #expect(atLimit.timing.redirectCount == 2)

    let over = service.fetcher(url: engine.url("/r/3"))
    #expect(await over.fetchResult().urlError?.code == .httpTooManyRedirects)
    #expect(over.timing.redirectCount == 2)
    // The third redirect was not followed.
    #expect(engine.requests.suffix(3).map(\.path) == ["/r/3", "/r/2", "/r/1"])

    // A fetcher may still change its own.
    let own = service.fetcher(url: engine.url("/r/3"))
    own.maximumRedirects = 3
    #expect(await own.fetchResult().data == Data("arrived".utf8))
  }

  @Test func aServiceLimitOfZeroMakesRedirectsFinal() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.maximumRedirects = 0
    let result = await service.fetcher(url: engine.url("/r/1")).fetchResult()
    #expect(result.fetcherError == .status(code: 302, data: Data("redirecting".utf8)))
    #expect(engine.requests.count == 1)
  }

  @Test func aNegativeServiceLimitFailsEachFetchAtBegin() async throws {
    let engine = Self.engine()
    let service = ScriptedServiceTests.service(engine)
    service.maximumRedirects = -5
    let result = await service.fetcher(url: engine.url("/r/1")).fetchResult()
    guard case .invalidConfiguration(let message)? = result.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
      return
    }
    #expect(message.contains("maximumRedirects"))
    #expect(engine.requests.isEmpty)
  }
}
