import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A URL whose host is an IPv6 literal (`http://[::1]:PORT/`) is fetched on every engine, and the
/// fetcher sees it as written: the response's URL, the `Host` the server gets, redirects on the
/// same origin.
@Suite(
  "IPv6 literals",
  .enabled(if: IPv6Loopback.isAvailable, "this machine has no IPv6 loopback address (::1) to listen on"))
struct IPv6LiteralTests {
  @Test func aServerOnTheIPv6LoopbackIsFetched() async throws {
    let server = try TestServer(host: "::1")
    defer { server.stop() }
    let url = server.url("/bytes/100")
    #expect(url.absoluteString == "http://[::1]:\(server.port)/bytes/100")
    let fetcher = server.fetcher("/bytes/100")
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == TestServer.patternBytes(count: 100))
    #expect(fetcher.response?.url == url)
    #expect(server.requests.first?.header("Host") == "[::1]:\(server.port)")
  }

  /// Relative and absolute `Location`s: every hop is on the request's own origin, so its
  /// `Authorization` is sent again each time.
  @Test(arguments: ["/redirect/2", "/redirect/2?absolute=1"])
  func redirectsStayOnTheOrigin(_ path: String) async throws {
    let server = try TestServer(host: "::1")
    defer { server.stop() }
    let fetcher = server.fetcher(path)
    fetcher.setRequestValue("Bearer token-6", forHTTPHeaderField: "Authorization")
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Data("redirect done".utf8))
    #expect(server.requests.count == 3)
    #expect(
      server.requests.map { $0.header("Authorization") } == Array(repeating: "Bearer token-6", count: 3))
    #expect(fetcher.response?.url?.host() == "::1")
    #expect(fetcher.response?.url?.path == "/redirect/0")
  }

  /// A failure names the URL as the caller wrote it.
  @Test func aFailureNamesTheURLAsWritten() async throws {
    let server = try TestServer(host: "::1")
    defer { server.stop() }
    let url = server.url("/truncate?length=1000&send=10")
    let result = await server.fetcher("/truncate?length=1000&send=10").fetchResult()
    #expect(result.urlError?.code == .networkConnectionLost, "\(String(describing: result.error))")
    #expect(result.urlError?.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
  }
}

/// Whether a server can listen on `::1` here.
enum IPv6Loopback {
  static let isAvailable: Bool = {
    guard let server = try? TestServer(host: "::1") else { return false }
    server.stop()
    return true
  }()
}
