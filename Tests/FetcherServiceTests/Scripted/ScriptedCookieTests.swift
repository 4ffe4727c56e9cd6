import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Which jar a service's fetchers keep cookies in and send them from, on the scripted engine: the
/// `Cookie` header each request carried is read from the engine's records.
@Suite("Cookie jars on the scripted engine")
struct ScriptedCookieTests {
  static let echo = ScriptedExchange.response(body: Data("echo".utf8))

  static func setCookie(_ line: String) -> ScriptedExchange {
    .response(headers: ["Set-Cookie": line], body: Data("set".utf8))
  }

  @Test func jarsAreIsolatedBetweenServicesAndFromStandaloneFetchers() async throws {
    let engine = ScriptedEngine()
    let name = "svc\(UUID().uuidString.prefix(8))"
    engine.respond(to: "/set-cookie", with: Self.setCookie("\(name)=one; Path=/"))
    engine.respond(to: "/cookies", with: Self.echo)
    let first = ScriptedServiceTests.service(engine)
    let second = ScriptedServiceTests.service(engine)
    #expect(first.cookieStorage !== second.cookieStorage)

    #expect(await first.fetcher(url: engine.url("/set-cookie")).fetchResult().error == nil)
    #expect(first.cookieStorage.cookies.contains { $0.name == name })

    // The same service sends it back.
    #expect(await first.fetcher(url: engine.url("/cookies")).fetchResult().error == nil)
    // Another service and a standalone fetcher do not.
    #expect(await second.fetcher(url: engine.url("/cookies")).fetchResult().error == nil)
    #expect(!second.cookieStorage.cookies.contains { $0.name == name })
    #expect(await engine.fetcher("/cookies").fetchResult().error == nil)
    #expect(!SessionCookieStorage.shared.cookies.contains { $0.name == name })
    let sent = engine.requests(matching: "/cookies").map { $0.header("Cookie") ?? "" }
    #expect(sent.count == 3)
    #expect(sent.first?.contains("\(name)=one") == true)
    #expect(sent.dropFirst().allSatisfy { !$0.contains(name) }, "\(sent)")
  }

  @Test func cookiesSetDuringARedirectAreKept() async throws {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/set-cookie", with: .redirect(to: "/cookies", headers: ["Set-Cookie": "hop=1; Path=/"]))
    engine.respond(to: "/cookies", with: Self.echo)
    let service = ScriptedServiceTests.service(engine)
    let result = await service.fetcher(url: engine.url("/set-cookie")).fetchResult()
    #expect(result.data == Data("echo".utf8))
    #expect(engine.requests.map(\.path) == ["/set-cookie", "/cookies"])
    #expect(engine.requests.last?.header("Cookie")?.contains("hop=1") == true)
    #expect(service.cookieStorage.cookies.contains { $0.name == "hop" })
  }

  @Test func aSharedJarCanBeGivenToAService() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/set-cookie", with: Self.setCookie("both=yes"))
    engine.respond(to: "/cookies", with: Self.echo)
    let jar = SessionCookieStorage()
    let first = ScriptedServiceTests.service(engine)
    let second = ScriptedServiceTests.service(engine)
    first.cookieStorage = jar
    second.cookieStorage = jar
    #expect(await first.fetcher(url: engine.url("/set-cookie")).fetchResult().error == nil)
    #expect(await second.fetcher(url: engine.url("/cookies")).fetchResult().error == nil)
    #expect(engine.requests(matching: "/cookies").first?.header("Cookie")?.contains("both=yes") == true)
  }

  /// A cookie for another domain than the response's is refused; the jar keeps the rest and sends
  /// only what matches the request's URL.
  @Test func aCookieForAnotherDomainIsRefused() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/set-good", with: Self.setCookie("good=1"))
    engine.respond(to: "/set-bad", with: Self.setCookie("bad=1; Domain=example.com"))
    engine.respond(to: "/cookies", with: Self.echo)
    let service = ScriptedServiceTests.service(engine)
    for path in ["/set-good", "/set-bad", "/cookies"] {
      #expect(await service.fetcher(url: engine.url(path)).fetchResult().error == nil)
    }
    #expect(Set(service.cookieStorage.cookies.map(\.name)) == ["good"])
    #expect(engine.requests(matching: "/cookies").first?.header("Cookie") == "good=1")
  }
}
