import Foundation

/// What a custom route (``TestServer/route(_:_:)``) answers.
///
/// The server adds `Content-Length` (unless you set it, or set `Transfer-Encoding: chunked`, in
/// which case the body is sent chunked), and `Connection: close` when the connection is closing.
/// Statuses 1xx, 204 and 304 are sent without a body.
///
/// ```swift
/// server.route("/login") { request in
///   request.header("Authorization") == "Bearer t0k3n"
///     ? .json(#"{"ok":true}"#)
///     : TestResponse(status: 401, headers: [("WWW-Authenticate", "Bearer")])
/// }
/// ```
public struct TestResponse: Sendable {
  /// The status code.
  public var status: Int
  /// The header fields, sent in this order after the status line.
  public var headers: [HTTPHeader]
  /// The body.
  public var body: Data

  /// Creates a response.
  public init(status: Int = 200, headers: [(String, String)] = [], body: Data = Data()) {
    self.status = status
    self.headers = headers.map { HTTPHeader(name: $0.0, value: $0.1) }
    self.body = body
  }

  /// Creates a response from header fields.
  public init(status: Int = 200, headerFields: [HTTPHeader], body: Data = Data()) {
    self.status = status
    self.headers = headerFields
    self.body = body
  }

  /// A `text/plain; charset=utf-8` response.
  public static func text(_ text: String, status: Int = 200) -> TestResponse {
    TestResponse(
      status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
  }

  /// An `application/json` response whose body is `json`, sent as is.
  public static func json(_ json: String, status: Int = 200) -> TestResponse {
    TestResponse(status: status, headers: [("Content-Type", "application/json")], body: Data(json.utf8))
  }

  /// An `application/json` response with `value` encoded by `JSONEncoder` (keys sorted).
  public static func json(encoding value: some Encodable, status: Int = 200) throws -> TestResponse {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return TestResponse(
      status: status, headers: [("Content-Type", "application/json")], body: try encoder.encode(value))
  }

  /// An `application/octet-stream` response of `count` pattern bytes
  /// (see ``TestServer/patternBytes(count:offset:)``).
  public static func bytes(count: Int, status: Int = 200) -> TestResponse {
    TestResponse(
      status: status, headers: [("Content-Type", "application/octet-stream")],
      body: TestServer.patternBytes(count: count))
  }

  /// A redirect to `location` (sent verbatim, relative or absolute).
  public static func redirect(to location: String, status: Int = 302) -> TestResponse {
    TestResponse(
      status: status, headers: [("Location", location), ("Content-Type", "text/plain")],
      body: Data("redirecting".utf8))
  }

  /// A response with only a status, and an empty body.
  public static func status(_ status: Int) -> TestResponse {
    TestResponse(status: status)
  }

  /// Returns a copy with one more header field.
  public func adding(header name: String, _ value: String) -> TestResponse {
    var copy = self
    copy.headers.append(HTTPHeader(name: name, value: value))
    return copy
  }

  /// The value of the first header named `name` (case-insensitive), or `nil`.
  public func header(_ name: String) -> String? {
    headers.first(named: name)
  }
}
