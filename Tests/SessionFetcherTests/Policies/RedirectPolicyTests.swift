import Foundation
import Testing

@testable import SessionFetcher

@Suite("Redirect policy")
struct RedirectPolicyTests {
  static func response(_ status: Int, from url: String, location: String) -> HTTPURLResponse {
    HTTPURLResponse(
      url: URL(string: url)!, statusCode: status, httpVersion: "HTTP/1.1",
      headerFields: ["Location": location])!
  }

  static func request(_ method: String, _ url: String, body: Bool) -> URLRequest {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
    request.setValue("Basic proxy", forHTTPHeaderField: "Proxy-Authorization")
    request.setValue("a=1", forHTTPHeaderField: "Cookie")
    request.setValue("kept", forHTTPHeaderField: "X-Custom")
    if body {
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
      request.httpBody = Data("{}".utf8)
    }
    return request
  }

  struct Case: Sendable, CustomTestStringConvertible {
    var status: Int
    var method: String
    var expectedMethod: String
    var keepsBody: Bool
    var testDescription: String { "\(status) \(method) → \(expectedMethod) body=\(keepsBody)" }
  }

  static let methodCases: [Case] = [
    Case(status: 301, method: "GET", expectedMethod: "GET", keepsBody: false),
    Case(status: 301, method: "POST", expectedMethod: "GET", keepsBody: false),
    Case(status: 302, method: "POST", expectedMethod: "GET", keepsBody: false),
    Case(status: 302, method: "HEAD", expectedMethod: "HEAD", keepsBody: false),
    // Only a POST may become a GET on 301/302 (RFC 9110 §15.4.2, the Fetch standard).
    Case(status: 301, method: "PUT", expectedMethod: "PUT", keepsBody: true),
    Case(status: 302, method: "DELETE", expectedMethod: "DELETE", keepsBody: true),
    Case(status: 302, method: "PATCH", expectedMethod: "PATCH", keepsBody: true),
    Case(status: 303, method: "POST", expectedMethod: "GET", keepsBody: false),
    Case(status: 303, method: "PUT", expectedMethod: "GET", keepsBody: false),
    Case(status: 303, method: "HEAD", expectedMethod: "HEAD", keepsBody: false),
    Case(status: 307, method: "POST", expectedMethod: "POST", keepsBody: true),
    Case(status: 307, method: "PUT", expectedMethod: "PUT", keepsBody: true),
    Case(status: 308, method: "POST", expectedMethod: "POST", keepsBody: true),
    Case(status: 308, method: "GET", expectedMethod: "GET", keepsBody: true),
  ]

  @Test(arguments: methodCases)
  func methodAndBody(_ c: Case) throws {
    let from = "http://127.0.0.1:8000/a"
    let response = Self.response(c.status, from: from, location: "/b")
    let target = try #require(RedirectPolicy.location(of: response))
    #expect(target.absoluteString == "http://127.0.0.1:8000/b")
    let hop = try RedirectPolicy.nextHop(
      from: Self.request(c.method, from, body: c.method != "GET" && c.method != "HEAD"), response: response,
      target: target, allowedInsecureSchemes: ["http"], allowLocalhostRequest: false
    ).get()
    #expect(hop.request.httpMethod == c.expectedMethod)
    #expect(
      hop.keepsBody == (c.keepsBody && c.method != "GET" && c.method != "HEAD")
        || (c.keepsBody && hop.keepsBody))
    if !hop.keepsBody {
      #expect(hop.request.httpBody == nil)
      #expect(hop.request.value(forHTTPHeaderField: "Content-Type") == nil)
    }
    // Same origin: credentials stay.
    #expect(hop.request.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
    #expect(hop.request.value(forHTTPHeaderField: "X-Custom") == "kept")
  }

  struct OriginCase: Sendable, CustomTestStringConvertible {
    var from: String
    var to: String
    var sameOrigin: Bool
    var testDescription: String { "\(from) → \(to)" }
  }

  static let originCases: [OriginCase] = [
    OriginCase(from: "http://a.test/x", to: "http://a.test/y", sameOrigin: true),
    OriginCase(from: "http://a.test/x", to: "http://a.test:80/y", sameOrigin: true),
    OriginCase(from: "http://A.test/x", to: "http://a.TEST/y", sameOrigin: true),
    OriginCase(from: "http://a.test/x", to: "http://b.test/y", sameOrigin: false),
    OriginCase(from: "http://a.test:8000/x", to: "http://a.test:8001/y", sameOrigin: false),
    OriginCase(from: "http://a.test/x", to: "https://a.test/y", sameOrigin: false),
    OriginCase(from: "https://a.test/x", to: "https://a.test:443/y", sameOrigin: true),
  ]

  @Test(arguments: originCases)
  func crossOriginDropsCredentials(_ c: OriginCase) throws {
    let response = Self.response(302, from: c.from, location: c.to)
    let hop = try RedirectPolicy.nextHop(
      from: Self.request("GET", c.from, body: false), response: response, target: URL(string: c.to)!,
      allowedInsecureSchemes: ["http"], allowLocalhostRequest: false
    ).get()
    #expect(RedirectPolicy.isSameOrigin(URL(string: c.from)!, URL(string: c.to)!) == c.sameOrigin)
    for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
      #expect((hop.request.value(forHTTPHeaderField: name) != nil) == c.sameOrigin, "\(name)")
    }
    #expect(hop.request.value(forHTTPHeaderField: "X-Custom") == "kept")
  }

  @Test func httpsToHTTPIsRefused() {
    let response = Self.response(302, from: "https://a.test/x", location: "http://a.test/y")
    let result = RedirectPolicy.nextHop(
      from: Self.request("GET", "https://a.test/x", body: false), response: response,
      target: URL(string: "http://a.test/y")!, allowedInsecureSchemes: ["http"], allowLocalhostRequest: true)
    #expect(result == .failure(.insecure(URL(string: "http://a.test/y")!)))
  }

  @Test func targetMustPassTheInsecureGate() {
    let response = Self.response(302, from: "http://localhost:1/x", location: "http://example.com/y")
    let result = RedirectPolicy.nextHop(
      from: Self.request("GET", "http://localhost:1/x", body: false), response: response,
      target: URL(string: "http://example.com/y")!, allowedInsecureSchemes: [], allowLocalhostRequest: true)
    #expect(result == .failure(.insecure(URL(string: "http://example.com/y")!)))
  }

  @Test(arguments: [
    ("http://h.test/a/b", "c", "http://h.test/a/c"),
    ("http://h.test/a/b", "/c?q=1", "http://h.test/c?q=1"),
    ("http://h.test/a/b", "//other.test/p", "http://other.test/p"),
    ("http://h.test/a/b", "https://x.test/", "https://x.test/"),
  ])
  func locationResolution(_ from: String, _ location: String, _ expected: String) {
    #expect(
      RedirectPolicy.location(of: Self.response(302, from: from, location: location))?.absoluteString
        == expected)
  }

  @Test func redirectStatuses() {
    #expect([301, 302, 303, 307, 308].allSatisfy(RedirectPolicy.isRedirect))
    #expect(![300, 304, 305, 306, 200, 404].contains(where: RedirectPolicy.isRedirect))
  }
}
