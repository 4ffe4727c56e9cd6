import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Redirects")
struct RedirectTests {
  @Test(arguments: [
    "/redirect/3", "/redirect/3?absolute=1", "/redirect?to=/bytes/7", "/redirect?to=bytes/7&status=301",
  ])
  func redirectsAreFollowed(_ path: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher(path)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(fetcher.statusCode == 200)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
    #expect(fetcher.timing.redirectCount >= 1)
  }

  @Test func seeOtherTurnsPostIntoGet() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect?to=/headers&status=303")
    fetcher.bodyData = Data("payload".utf8)
    #expect(await fetcher.fetchResult().error == nil)
    let last = try #require(server.requests.last)
    #expect(last.path == "/headers")
    #expect(last.method == "GET")
    #expect(last.body.isEmpty)
  }

  @Test(arguments: [307, 308])
  func temporaryAndPermanentRedirectsResendTheBody(_ status: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 100_000)
    // Data body.
    let fetcher = server.fetcher("/redirect?to=/echo&status=\(status)")
    fetcher.bodyData = body
    let result = await fetcher.fetchResult()
    #expect(result.data == body)
    #expect(server.requests.last?.method == "POST")
    // Stream body: the provider is asked again (FoundationNetworking drops the body, corelibs).
    let calls = Recorder<Int>()
    let streamed = server.fetcher("/redirect?to=/echo&status=\(status)")
    streamed.bodyStreamProvider = {
      calls.append(1)
      return InputStream(data: body)
    }
    #expect(await streamed.fetchResult().data == body)
    #expect(calls.count == 2)
  }

  @Test func crossOriginRedirectDropsCredentialsButKeepsThemOnTheSameOrigin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let other = try TestServer()
    defer { other.stop() }
    let target = other.url("/headers").absoluteString
    let fetcher = server.fetcher(
      "/redirect?to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
    fetcher.setRequestValue("Bearer secret", forHTTPHeaderField: "Authorization")
    fetcher.setRequestValue("Basic proxy", forHTTPHeaderField: "Proxy-Authorization")
    fetcher.setRequestValue("user=cookie", forHTTPHeaderField: "Cookie")
    fetcher.setRequestValue("kept", forHTTPHeaderField: "X-Custom")
    #expect(await fetcher.fetchResult().error == nil)
    let atOther = try #require(other.requests.last)
    #expect(atOther.header("Authorization") == nil)
    #expect(atOther.header("Proxy-Authorization") == nil)
    #expect(atOther.header("Cookie") == nil)
    #expect(atOther.header("X-Custom") == "kept")

    let same = server.fetcher("/redirect?to=/headers")
    same.setRequestValue("Bearer secret", forHTTPHeaderField: "Authorization")
    #expect(await same.fetchResult().error == nil)
    #expect(server.requests.last?.header("Authorization") == "Bearer secret")
  }

  @Test func willRedirectBlockCanRefuse() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect?to=/bytes/1")
    let seen = Recorder<String>()
    fetcher.willRedirectBlock = { response, request, respond in
      seen.append("\(response.statusCode) \(request.url?.path ?? "")")
      respond(nil)
    }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .status(code: 302, data: Data("redirecting".utf8)))
    #expect(seen.values == ["302 /bytes/1"])
    #expect(server.requestCount(path: "/bytes/1") == 0)
  }

  @Test func willRedirectBlockCanChangeTheRequest() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect?to=/bytes/1")
    let serverURL = server.url("/headers")
    fetcher.willRedirectBlock = { _, request, respond in
      var changed = request
      changed.url = serverURL
      changed.setValue("added", forHTTPHeaderField: "X-Redirected")
      respond(changed)
    }
    #expect(await fetcher.fetchResult().error == nil)
    let last = try #require(server.requests.last)
    #expect(last.path == "/headers")
    #expect(last.header("X-Redirected") == "added")
  }

  @Test func redirectLoopsEndAtTwenty() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect/25")
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(server.requests.count == 21)
  }

  @Test func redirectToAnInsecureTargetIsRefused() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect?to=http://example.invalid/")
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .insecureRequest(URL(string: "http://example.invalid/")!))
  }

  @Test func cookiesSetDuringARedirectAreKept() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let jar = SessionCookieStorage()
    let fetcher = server.fetcher("/set-cookie?c=hop%3D1&redirect=/cookies")
    fetcher.cookieStorage = jar
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(String(decoding: result.data ?? Data(), as: UTF8.self).contains("hop=1"))
    #expect(jar.cookies.map(\.name) == ["hop"])
  }
}
