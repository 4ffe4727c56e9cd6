import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// Attack table, part 1: credentials must not follow a redirect to another origin, and an
/// https → http redirect is never followed. Here what a real engine sends after a redirect to
/// another host, and the policy's table; other ports, statuses and chains that come back are in
/// `ScriptedCredentialLeakTests`.
@Suite("Security: credentials across origins")
struct CredentialLeakTests {
  /// The credential headers a caller can set, with recognisable values.
  static let secretHeaders = [
    ("Authorization", "Bearer leak-token-1"),
    ("Proxy-Authorization", "Basic bGVhazpwcm94eQ=="),
    ("Cookie", "session=leak-cookie-3"),
  ]

  /// A fetcher of `from` that redirects (302 unless told) to `to`, with every credential header set.
  private func redirectingFetcher(_ server: TestServer, to target: URL, status: Int = 302) -> SessionFetcher {
    let encoded = target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    let fetcher = server.fetcher("/redirect?to=\(encoded)&status=\(status)")
    // A private, empty jar: only the headers set here could carry a Cookie.
    fetcher.cookieStorage = SessionCookieStorage()
    for (name, value) in Self.secretHeaders { fetcher.setRequestValue(value, forHTTPHeaderField: name) }
    fetcher.setRequestValue("kept", forHTTPHeaderField: "X-Harmless")
    return fetcher
  }

  private func expectNoSecrets(in request: RecordedRequest, sourceLocation: SourceLocation = #_sourceLocation)
  {
    for (name, value) in Self.secretHeaders {
      #expect(request.header(name) == nil, "\(name) reached another origin", sourceLocation: sourceLocation)
      for (_, header) in request.headers.map({ ($0.name, $0.value) }) {
        #expect(
          !header.contains(value), "a secret value reached another origin", sourceLocation: sourceLocation)
      }
    }
    #expect(request.header("X-Harmless") == "kept", sourceLocation: sourceLocation)
  }

  @Test("host change: 127.0.0.1 → localhost on the same port")
  func hostChange() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let target = try #require(URL(string: "http://localhost:\(server.port)/headers"))
    let fetcher = redirectingFetcher(server, to: target)
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(server.requests.count == 2)
    let second = try #require(server.requests.last)
    #expect(second.path == "/headers")
    expectNoSecrets(in: second)
  }

  @Test("scheme change (http → https) drops credentials; https → http is refused", arguments: [true, false])
  func schemeChangePolicy(allowHTTP: Bool) throws {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:8080/start")!)
    for (name, value) in Self.secretHeaders { request.setValue(value, forHTTPHeaderField: name) }
    let response = HTTPURLResponse(
      url: request.url!, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: nil)!
    let upgrade = URL(string: "https://127.0.0.1:8080/next")!
    let hop = try RedirectPolicy.nextHop(
      from: request, response: response, target: upgrade, allowedInsecureSchemes: allowHTTP ? ["http"] : [],
      allowLocalhostRequest: true
    ).get()
    for (name, _) in Self.secretHeaders { #expect(hop.request.value(forHTTPHeaderField: name) == nil) }

    // A downgrade is refused even with http and localhost allowed.
    var secure = URLRequest(url: URL(string: "https://127.0.0.1/start")!)
    secure.setValue("Bearer x", forHTTPHeaderField: "Authorization")
    let secureResponse = HTTPURLResponse(
      url: secure.url!, statusCode: 301, httpVersion: nil, headerFields: nil)!
    for target in ["http://127.0.0.1/next", "http://localhost/next", "ftp://127.0.0.1/next"] {
      let downgrade = URL(string: target)!
      let result = RedirectPolicy.nextHop(
        from: secure, response: secureResponse, target: downgrade,
        allowedInsecureSchemes: allowHTTP ? ["http", "ftp"] : [], allowLocalhostRequest: true)
      #expect(result == .failure(.insecure(downgrade)))
    }
  }

}
