import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Redirects on the real engines: each engine hands the 3xx to the fetcher instead of following it
/// (a chain, and a relative `Location` resolved against the URL the engine reports), and a body
/// sent again really reaches the next hop. What the fetcher decides at a redirect (the method, the
/// credentials it drops, the limit, `willRedirectBlock`, cookies, insecure targets) is in
/// `ScriptedRedirectTests`; credentials across real origins in `CredentialLeakTests`.
@Suite("Redirects")
struct RedirectTests {
  @Test(arguments: ["/redirect/3", "/redirect?to=bytes/7&status=301"])
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

  /// The body really reaches the next hop on each engine (a 307 here; that a 308 keeps the body
  /// too is the fetcher's rule, in `ScriptedRedirectTests`).
  @Test func aTemporaryRedirectResendsTheBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 100_000)
    // Data body.
    let fetcher = server.fetcher("/redirect?to=/echo&status=307")
    fetcher.bodyData = body
    let result = await fetcher.fetchResult()
    #expect(result.data == body)
    #expect(server.requests.last?.method == "POST")
    // Stream body: the provider is asked again (FoundationNetworking drops the body, corelibs).
    let calls = Recorder<Int>()
    let streamed = server.fetcher("/redirect?to=/echo&status=307")
    streamed.bodyStreamProvider = {
      calls.append(1)
      return InputStream(data: body)
    }
    #expect(await streamed.fetchResult().data == body)
    #expect(calls.count == 2)
  }
}
