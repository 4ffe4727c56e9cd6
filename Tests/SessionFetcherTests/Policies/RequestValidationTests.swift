import Foundation
import Testing

@testable import SessionFetcher

/// `RequestValidation`: the one rule for methods, header names and header values, as a table.
@Suite("Request validation")
struct RequestValidationTests {
  @Test(
    "tokens (methods, header names)",
    arguments: [
      ("GET", true), ("patch", true), ("X-Custom_Header.1", true), ("!#$%&'*+-.^_`|~", true),
      ("a", true), ("0", true),
      ("", false), (" ", false), ("X Y", false), ("X-N: a", false), ("Host:", false), ("X-N\r\nX-Y", false),
      ("X-N\n", false), ("\rX", false), ("X\u{0}", false), ("X\t", false), ("X\u{7F}", false),
      ("\"quoted\"", false), ("a(b)", false), ("a,b", false), ("a/b", false), ("a;b", false),
      ("a=b", false), ("a@b", false), ("a[b]", false), ("a{b}", false), ("a\\b", false), ("a?b", false),
      ("é", false), ("X-\u{0130}", false), ("DELETE /x HTTP/1.1\r\nX-Inj: 1\r\nX-Z:", false),
    ] as [(String, Bool)])
  func tokens(_ text: String, _ valid: Bool) {
    #expect(RequestValidation.isToken(text) == valid, "\(RequestValidation.quoted(text))")
  }

  @Test(
    "header values",
    arguments: [
      ("", true), ("plain value", true), ("tab\tinside", true), ("é ✓ 🎉", true), ("a:b;c=d, \"q\"", true),
      ("\u{A0}non-breaking", true), ("~", true),
      ("a\r\nX-Injected: 1", false), ("\r\n", false), ("a\rb", false), ("a\nb", false), ("a\u{0}b", false),
      ("a\u{0B}b", false), ("a\u{0C}b", false), ("\u{1B}[31m", false), ("a\u{7F}", false),
      ("a\u{85}b", false), ("a\u{9F}", false), ("\u{1F}", false), ("é\r\n", false),
    ] as [(String, Bool)])
  func values(_ text: String, _ valid: Bool) {
    #expect(RequestValidation.isValidHeaderValue(text) == valid, "\(RequestValidation.quoted(text))")
  }

  static func request(method: String? = nil, headers: [String: String] = [:]) -> URLRequest {
    var request = URLRequest(url: URL(string: "http://127.0.0.1/")!)
    if let method { request.httpMethod = method }
    // The dictionary keeps names and values as they are (`setValue` rewrites the case of a name
    // and drops a value with CR or LF on Linux).
    if !headers.isEmpty { request.allHTTPHeaderFields = headers }
    return request
  }

  @Test(
    "problems name the field; values are never quoted",
    arguments: [
      (request(), nil),
      (request(method: "PROPFIND", headers: ["X-A": "1", "Accept": "*/*"]), nil),
      (
        request(method: "DELETE /x HTTP/1.1\r\nX-Inj: 1\r\nX-Z:"),
        "HTTP method \"DELETE /x HTTP/1.1\\r\\nX-Inj"
      ),
      (request(method: "GET "), "HTTP method \"GET \""),
      (
        request(headers: ["X-N: a\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: evil\r\nX-Y": "v"]),
        "header name \"X-N: a\\r\\n"
      ),
      (request(headers: ["Host:": "evil"]), "header name \"Host:\""),
      (request(headers: ["X-Token": "secret\r\nX-Injected: 1"]), "value of header \"X-Token\""),
      (request(headers: ["X-VT": "a\u{0B}b"]), "value of header \"X-VT\""),
    ] as [(URLRequest, String?)])
  func problems(_ request: URLRequest, _ expected: String?) {
    let problem = RequestValidation.problem(in: request)
    if let expected {
      #expect(problem?.contains(expected) == true, "\(problem ?? "nil")")
      #expect(problem?.contains("secret") != true)
      #expect(problem?.utf8.contains { $0 < 0x20 } != true, "the message itself holds a control")
      #expect(throws: SessionFetcherError.invalidConfiguration(problem ?? "")) {
        try RequestValidation.check(request)
      }
    } else {
      #expect(problem == nil)
      #expect(throws: Never.self) { try RequestValidation.check(request) }
    }
  }

  @Test func quotingIsBoundedAndEscaped() {
    let long = String(repeating: "a", count: 500)
    #expect(RequestValidation.quoted(long) == "\"" + String(repeating: "a", count: 64) + "…\"")
    #expect(RequestValidation.quoted("a\"b\\c\u{0}\u{7F}") == "\"a\\\"b\\\\c\\u{0}\\u{7f}\"")
  }
}
