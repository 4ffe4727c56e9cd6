import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Redirects on the scripted engine: the fetcher follows each 3xx itself, with its rules for the
/// method, the body, credentials, cookies, the limit and `willRedirectBlock`.
@Suite("Redirects (scripted)")
struct ScriptedRedirectTests {
  static let body = Data("arrived".utf8)

  @Test(arguments: [
    ["/a": "/b", "/b": "/c", "/c": "/end"], ["/a": "https://scripted.test/end"], ["/a": "end"],
  ])
  func redirectsAreFollowed(_ hops: [String: String]) async {
    let engine = ScriptedEngine()
    for (from, to) in hops { engine.respond(to: from, with: .redirect(to: to, status: 301)) }
    engine.respond(to: "/end", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/a")
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.data == Self.body)
    #expect(fetcher.statusCode == 200)
    #expect(fetcher.timing.redirectCount == hops.count)
    #expect(engine.requests.count == hops.count + 1)
    #expect(engine.requests.last?.path == "/end")
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func seeOtherTurnsPostIntoGet() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/form", with: .redirect(to: "/result", status: 303))
    engine.respond(to: "/result", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/form")
    fetcher.bodyData = Data("payload".utf8)
    #expect(await fetcher.fetchResult().data == Self.body)
    let first = try #require(engine.requests.first)
    #expect(first.method == "POST" && first.body == Data("payload".utf8))
    let last = try #require(engine.requests.last)
    #expect(last.path == "/result")
    #expect(last.method == "GET")
    #expect(last.body.isEmpty)
  }

  @Test(arguments: [307, 308])
  func temporaryAndPermanentRedirectsResendTheBody(_ status: Int) async {
    let body = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
    let engine = ScriptedEngine()
    engine.respond(to: "/upload", with: .redirect(to: "/moved", status: status))
    engine.respond(to: "/moved", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/upload")
    fetcher.bodyData = body
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(engine.requests.map(\.method) == ["POST", "POST"])
    #expect(engine.requests.map(\.body) == [body, body])
    // A stream body: the provider is asked again.
    let calls = Recorder<Int>()
    let streamed = engine.fetcher("/upload")
    streamed.bodyStreamProvider = {
      calls.append(1)
      return InputStream(data: body)
    }
    #expect(await streamed.fetchResult().data == Self.body)
    #expect(calls.count == 2)
    #expect(engine.requests.suffix(2).map(\.body) == [body, body])
  }

  @Test func crossOriginRedirectDropsCredentialsButKeepsThemOnTheSameOrigin() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/away", with: .redirect(to: "https://other.test/landing"))
    engine.respond(to: "https://other.test/landing", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/away")
    fetcher.setRequestValue("Bearer secret", forHTTPHeaderField: "Authorization")
    fetcher.setRequestValue("Basic proxy", forHTTPHeaderField: "Proxy-Authorization")
    fetcher.setRequestValue("user=cookie", forHTTPHeaderField: "Cookie")
    fetcher.setRequestValue("kept", forHTTPHeaderField: "X-Custom")
    #expect(await fetcher.fetchResult().data == Self.body)
    let first = try #require(engine.requests.first)
    #expect(first.header("Authorization") == "Bearer secret")
    let atOther = try #require(engine.requests.last)
    #expect(atOther.url.host == "other.test")
    #expect(atOther.header("Authorization") == nil)
    #expect(atOther.header("Proxy-Authorization") == nil)
    #expect(atOther.header("Cookie") == nil)
    #expect(atOther.header("X-Custom") == "kept")

    engine.respond(to: "/near", with: .redirect(to: "/landing"))
    engine.respond(to: "/landing", with: .response(body: Self.body))
    let same = engine.fetcher("/near")
    same.setRequestValue("Bearer secret", forHTTPHeaderField: "Authorization")
    #expect(await same.fetchResult().data == Self.body)
    #expect(engine.requests.last?.path == "/landing")
    #expect(engine.requests.last?.header("Authorization") == "Bearer secret")
  }

  @Test func willRedirectBlockCanRefuse() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: "/target"))
    let fetcher = engine.fetcher("/start")
    let seen = Recorder<String>()
    fetcher.willRedirectBlock = { response, request, respond in
      seen.append("\(response.statusCode) \(request.url?.path ?? "")")
      respond(nil)
    }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .status(code: 302, data: Data("redirecting".utf8)))
    #expect(seen.values == ["302 /target"])
    #expect(engine.requests(matching: "/target").isEmpty)
  }

  @Test func willRedirectBlockCanChangeTheRequest() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: "/target"))
    engine.respond(to: "/elsewhere", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/start")
    let elsewhere = engine.url("/elsewhere")
    fetcher.willRedirectBlock = { _, request, respond in
      var changed = request
      changed.url = elsewhere
      changed.setValue("added", forHTTPHeaderField: "X-Redirected")
      respond(changed)
    }
    #expect(await fetcher.fetchResult().data == Self.body)
    let last = try #require(engine.requests.last)
    #expect(last.path == "/elsewhere")
    #expect(last.header("X-Redirected") == "added")
    #expect(engine.requests(matching: "/target").isEmpty)
  }

  @Test func redirectLoopsEndAtTwenty() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/loop", with: .redirect(to: "/loop"))
    let result = await engine.fetcher("/loop").fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(engine.requests.count == 21)
  }

  @Test func redirectToAnInsecureTargetIsRefused() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: "http://example.invalid/"))
    let result = await engine.fetcher("/start").fetchResult()
    #expect(result.fetcherError == .insecureRequest(URL(string: "http://example.invalid/")!))
    #expect(engine.requests.count == 1)
  }

  @Test func cookiesSetDuringARedirectAreKept() async throws {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/login", with: .redirect(to: "/home", headers: ["Set-Cookie": "hop=1; Path=/"]))
    engine.respond(to: "/home", with: .response(body: Self.body))
    let jar = SessionCookieStorage()
    let fetcher = engine.fetcher("/login")
    fetcher.cookieStorage = jar
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(jar.cookies.map(\.name) == ["hop"])
    #expect(engine.requests.last?.header("Cookie") == "hop=1")
  }
}
