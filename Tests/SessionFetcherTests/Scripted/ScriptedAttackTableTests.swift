import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Attack table, part 2, on the scripted engine: the localhost gate, Secure cookies over http,
/// redirect loops and bodies past `maximumResponseBodyLength` — what the fetcher decides and how
/// many requests it makes. Cookie lines and huge headers as each engine reads them from the wire are
/// in `AttackTableTests`.
@Suite("Security: attack table (scripted)")
struct ScriptedAttackTableTests {
  @Test func httpTo127001WithoutAllowLocalhostRequestSendsNothing() async {
    let engine = ScriptedEngine()
    let url = "http://127.0.0.1:8080/items"
    engine.respond(to: url, with: .response(body: Data("ok".utf8)))
    let refused = engine.fetcher(url)
    #expect(await refused.fetchResult().fetcherError == .insecureRequest(URL(string: url)!))
    await engine.drainEvents()
    #expect(engine.requests.isEmpty)
    let allowed = engine.fetcher(url)
    allowed.allowLocalhostRequest = true
    #expect(await allowed.fetchResult().data == Data("ok".utf8))
  }

  @Test func aSecureCookieIsNeverSentOverHTTPAndHTTPCannotSetOrShadowOne() async throws {
    let engine = ScriptedEngine()
    let base = "http://127.0.0.1:8080"
    engine.respond(to: base + "/cookies", with: .response(body: Data("ok".utf8)))
    engine.respond(to: base + "/set-secure", with: .response(headers: ["Set-Cookie": "sneaky=1; Secure"]))
    engine.respond(to: base + "/shadow", with: .response(headers: ["Set-Cookie": "secret=overwritten"]))
    let jar = SessionCookieStorage()
    jar.setCookie(SessionCookie(name: "secret", value: "s3cure", domain: "127.0.0.1", isSecure: true))
    jar.setCookie(SessionCookie(name: "plain", value: "p", domain: "127.0.0.1"))
    for path in ["/cookies", "/set-secure", "/shadow"] {
      let fetcher = engine.fetcher(base + path)
      fetcher.allowLocalhostRequest = true
      fetcher.cookieStorage = jar
      #expect(await fetcher.fetchResult().error == nil)
    }
    #expect(engine.requests.map { $0.header("Cookie") } == ["plain=p", "plain=p", "plain=p"])
    #expect(!jar.cookies.contains { $0.name == "sneaky" })
    #expect(jar.cookies.filter { $0.name == "secret" }.map(\.value) == ["s3cure"])
  }

  @Test func aRedirectLoopOnOnePathEndsAfterTwentyRedirectsWithoutRetries() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/loop", with: .redirect(to: "/loop"))
    let fetcher = engine.fetcher("/loop")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(engine.requests.count == 21)
    #expect(fetcher.retryCount == 0)
  }

  @Test func aRedirectLoopBetweenTwoOriginsKeepsItsBodyAndEndsToo() async {
    let engine = ScriptedEngine()
    let first = ScriptedEngine.origin + "/a"
    let second = "https://other.test/b"
    engine.respond(to: first, with: .redirect(to: second, status: 307))
    engine.respond(to: second, with: .redirect(to: first, status: 308))
    let fetcher = engine.fetcher("/a")
    fetcher.bodyData = Data("loop body".utf8)
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(engine.requests.count == 21)
    #expect(engine.requests.allSatisfy { $0.method == "POST" && $0.body == Data("loop body".utf8) })
  }

  static let piece = Data(repeating: 0x5A, count: 100_000)

  /// A body past `maximumResponseBodyLength` fails with `responseTooLarge` at once, without
  /// retries: announced by its Content-Length (before any of it is read) or growing past it, and
  /// the fetcher cancels the exchange, which would otherwise never end.
  @Test(arguments: [true, false])
  func aBodyPastTheLimitFailsAndCancelsTheExchange(announced: Bool) async {
    let engine = ScriptedEngine()
    let head = ScriptedExchange.Step.head(
      status: 200, headers: announced ? ["Content-Length": "50000000"] : [:])
    engine.respond(
      to: "/big", with: ScriptedExchange([head] + Array(repeating: .body(Self.piece), count: 30) + [.stall]))
    let fetcher = engine.fetcher("/big")
    fetcher.maximumResponseBodyLength = 1_000_000
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .responseTooLarge(limit: 1_000_000))
    #expect(result.data == nil)
    #expect(fetcher.downloadedData == nil)
    #expect(fetcher.retryCount == 0)
    #expect(engine.requests.count == 1)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
    let delivered = engine.requests.first?.events.last?.deliveredBodyBytes ?? .max
    if announced {
      // Not a byte of it is taken.
      #expect(fetcher.downloadedLength == 0, "\(fetcher.downloadedLength)")
    } else {
      #expect(delivered <= 1_100_000, "\(delivered)")
    }
  }

  @Test func anErrorBodyPastTheLimitFailsTheSameWayBodiesWithinItAreUntouched() async throws {
    let engine = ScriptedEngine()
    let big = Data(repeating: 1, count: 300_000)
    engine.respond(to: "/big-error", with: .response(status: 500, body: big))
    engine.respond(to: "/fits", with: .response(body: Data(repeating: 2, count: 100_000)))
    engine.respond(to: "/big", with: .response(body: big))
    let failing = engine.fetcher("/big-error")
    failing.maximumResponseBodyLength = 100_000
    #expect(await failing.fetchResult().fetcherError == .responseTooLarge(limit: 100_000))

    let fits = engine.fetcher("/fits")
    fits.maximumResponseBodyLength = 100_000
    #expect(await fits.fetchResult().data == Data(repeating: 2, count: 100_000))

    // A download to a file is not held in memory: the limit does not apply.
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let download = engine.fetcher("/big")
    download.maximumResponseBodyLength = 100_000
    download.destinationFileURL = folder.appendingPathComponent("big.bin")
    #expect(await download.fetchResult().error == nil)
    #expect(try Data(contentsOf: folder.appendingPathComponent("big.bin")) == big)
  }
}
