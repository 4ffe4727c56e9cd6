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
  /// A transport-level misbehaviour, to test how clients cope with broken connections.
  public enum Fault: Sendable, Hashable {
    /// Close the connection without sending anything.
    ///
    /// libcurl (so URLSession on Linux) silently retries a request once on a new connection when
    /// a *reused* connection closes without any response; only a fresh connection shows the
    /// failure to the caller.
    case closeWithoutResponse
    /// Announce `announcedLength` body bytes, send the (shorter) ``TestResponse/body``, then close
    /// with a FIN.
    case truncate(announcedLength: Int)
    /// Like ``truncate(announcedLength:)``, then close with a RST.
    case reset(announcedLength: Int)
    /// Like ``truncate(announcedLength:)``, then send nothing more until the client leaves or the
    /// server stops.
    case stall(announcedLength: Int)
  }

  /// The status code.
  public var status: Int
  /// The header fields, sent in this order after the status line.
  public var headers: [HTTPHeader]
  /// The body.
  public var body: Data
  /// Seconds to wait before answering (interrupted when the server stops). Unlike sleeping in
  /// the handler, this does not delay ``TestServer/stop()``.
  public var delay: Double = 0
  /// Misbehave instead of answering normally; `nil` (the default) answers normally.
  public var fault: Fault?

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

  /// A `200` response that misbehaves as `fault` says; `body` is what is sent before the
  /// connection breaks (for the faults that send a head).
  ///
  /// ```swift
  /// server.route("/flaky") { _ in .fault(.reset(announcedLength: 1000), body: Data(count: 10)) }
  /// ```
  public static func fault(_ fault: Fault, body: Data = Data()) -> TestResponse {
    var response = TestResponse(headers: [("Content-Type", "application/octet-stream")], body: body)
    response.fault = fault
    return response
  }

  /// Returns a copy that is sent after waiting `seconds` (see ``delay``).
  public func delayed(by seconds: Double) -> TestResponse {
    var copy = self
    copy.delay = seconds
    return copy
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
