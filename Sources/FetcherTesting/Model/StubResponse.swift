import Foundation
import SessionFetcher

/// What a fetcher's test block answers without any network: a response (status, headers, body) or
/// a transport error. Where ``TestResponse`` is what a ``TestServer`` route sends over a socket,
/// this is what `SessionFetcher.testBlock` (or `SessionFetcher.globalTestBlock`) hands the fetcher
/// directly; ``init(_:)`` turns a ``TestResponse`` into one, so a single value can answer both.
///
/// ```swift
/// import FetcherTesting
/// import SessionFetcher
///
/// func stubbedFetch() async throws -> Data {
///   let fetcher = SessionFetcher.fetcher(urlString: "https://api.example.com/me")
///   fetcher.testBlock = StubResponse.json(#"{"name":"Ada"}"#).testBlock
///   return try await fetcher.beginFetch()  // {"name":"Ada"}, no request sent
/// }
/// ```
///
/// A block that answers depending on the request:
///
/// ```swift
/// import FetcherTesting
/// import SessionFetcher
///
/// func installStubs() {
///   SessionFetcher.globalTestBlock = StubResponse.testBlock { fetcher in
///     fetcher.request?.url?.path == "/me" ? .json(#"{"name":"Ada"}"#) : .status(404)
///   }
/// }
/// ```
public struct StubResponse: Sendable {
  /// The status code (ignored when ``error`` is set).
  public var status: Int
  /// The response header fields.
  public var headers: [String: String]
  /// The response body.
  public var body: Data
  /// A transport error to fail the request with instead of a response, or nil.
  public var error: URLError?

  /// A response with `status`, `headers` and `body`.
  public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// The same answer as a ``TestServer`` route giving `response`: its status, headers (a repeated
  /// name keeps its last value) and body. A ``TestResponse/fault`` becomes the error a client sees
  /// for it: `URLError(.networkConnectionLost)` for a connection closed, truncated or reset, and
  /// `URLError(.timedOut)` for a stall. ``TestResponse/delay`` is not applied.
  public init(_ response: TestResponse) {
    var headers: [String: String] = [:]
    for field in response.headers { headers[field.name] = field.value }
    self.init(status: response.status, headers: headers, body: response.body)
    switch response.fault {
    case nil:
      break
    case .closeWithoutResponse?, .truncate?, .reset?:
      error = URLError(.networkConnectionLost)
    case .stall?:
      error = URLError(.timedOut)
    }
  }

  /// An `application/json` response whose body is `json`, sent as is.
  public static func json(_ json: String, status: Int = 200, headers: [String: String] = [:])
    -> StubResponse
  {
    StubResponse(
      status: status, headers: headers.merging(["Content-Type": "application/json"]) { own, _ in own },
      body: Data(json.utf8))
  }

  /// An `application/json` response with `value` encoded by `JSONEncoder` (keys sorted).
  public static func json(encoding value: some Encodable, status: Int = 200, headers: [String: String] = [:])
    throws -> StubResponse
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return StubResponse(
      status: status, headers: headers.merging(["Content-Type": "application/json"]) { own, _ in own },
      body: try encoder.encode(value))
  }

  /// A `text/plain; charset=utf-8` response.
  public static func text(_ text: String, status: Int = 200) -> StubResponse {
    StubResponse(
      status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
  }

  /// A response with `status` and `body` (empty unless given).
  public static func status(_ status: Int, body: Data = Data()) -> StubResponse {
    StubResponse(status: status, body: body)
  }

  /// A transport failure: the fetch sees `error` as if the network had reported it (retried as
  /// such when retries are on).
  public static func error(_ error: URLError) -> StubResponse {
    var response = StubResponse()
    response.error = error
    return response
  }

  /// The `HTTPURLResponse` for `url`, or nil for an ``error``.
  public func httpResponse(for url: URL) -> HTTPURLResponse? {
    guard error == nil else { return nil }
    return HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
  }

  /// Answers `fetcher`'s test block: calls `respond` with the response for the fetcher's current
  /// request (or `about:blank` without one) and the body, or with the ``error``.
  public func respond(
    to fetcher: SessionFetcher,
    with respond: @escaping @Sendable (HTTPURLResponse?, Data?, (any Error)?) -> Void
  ) {
    if let error {
      respond(nil, nil, error)
      return
    }
    let url = fetcher.request?.url ?? URL(string: "about:blank")!
    respond(httpResponse(for: url), body, nil)
  }

  /// A test block that answers every request with this response.
  public var testBlock: SessionFetcher.TestBlock {
    let answer = self
    return { fetcher, respond in answer.respond(to: fetcher, with: respond) }
  }

  /// A test block that answers each request with what `answer` returns for its fetcher (its
  /// `request` is the request being sent).
  public static func testBlock(_ answer: @escaping @Sendable (SessionFetcher) -> StubResponse)
    -> SessionFetcher.TestBlock
  {
    { fetcher, respond in answer(fetcher).respond(to: fetcher, with: respond) }
  }
}
