import FetcherService
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An error of the OpenAPI transport itself (transport failures pass through as the fetcher's
/// `URLError` or `SessionFetcherError`, and the OpenAPI runtime wraps them in its `ClientError`).
public enum SessionFetcherOpenAPIError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The operation's URL could not be made from the server URL and the request's path.
  case invalidRequestURL(String)
  /// A retry or a 307/308 redirect needed the request body again, but it is a single-pass stream
  /// (`HTTPBody.iterationBehavior == .single`) that was already read.
  case requestBodyNotReplayable
  /// The response was not an HTTP response.
  case notHTTPResponse

  /// A one-line description.
  public var description: String {
    switch self {
    case .invalidRequestURL(let text): return "cannot make a request URL from \(text)"
    case .requestBodyNotReplayable:
      return "the request body is a single-pass stream that was already sent; it cannot be sent again"
    case .notHTTPResponse: return "the response is not an HTTP response"
    }
  }
}

/// A swift-openapi-runtime `ClientTransport` that sends each operation as a ``SessionFetcher`` made
/// by a ``FetcherService``, so that the service's retries (with `Retry-After`), per-host
/// throttling, cookie jar, ETag memory, TLS settings, engine, event monitors and HTTPLogging apply
/// to a generated OpenAPI client.
///
/// ```swift
/// let service = FetcherService()
/// service.isRetryEnabled = true
/// let client = Client(
///   serverURL: try Servers.Server1.url(),
///   transport: SessionFetcherTransport(service: service))
/// let response = try await client.getGreeting()
/// ```
///
/// **Streaming both ways.** The response is returned as soon as its head arrives; its body is an
/// `HTTPBody` that reads the network as it is iterated (the fetcher's streaming mode: a bounded
/// buffer of ``Configuration/responseHighWaterMark`` bytes, above which the transfer pauses), so a
/// body still arriving when the operation returns is fine and nothing is buffered whole. Iterate
/// it once; dropping it or cancelling the task that iterates it stops the fetch. A request body of
/// known length up to ``Configuration/maximumBufferedRequestBodyLength`` is collected and sent with
/// a `Content-Length`; a longer one, or one of unknown length, is streamed (chunked) from the
/// `HTTPBody` as the network takes it.
///
/// **Retries never replay what cannot be re-created.** A streamed request body whose
/// `iterationBehavior` is `.multiple` is iterated anew for every attempt and 307/308 redirect. One
/// that is `.single` is sent at most once: once its first stream was handed out, the transport
/// answers every retry decision with "no" (before the service's own `retryBlock` is asked), and a
/// redirect that would resend it fails with ``SessionFetcherOpenAPIError/requestBodyNotReplayable``.
/// Bodies collected in memory (see above) are always replayable.
///
/// **HTTP statuses.** Every status, 4xx and 5xx included, is returned as a response (after the
/// service's retries) for the generated client to match against the document; only transport
/// failures throw. The body of an error status was received in memory by the fetcher (bounded by
/// the fetcher's `maximumResponseBodyLength`, if set).
///
/// **Cancellation.** Cancelling the calling task stops the fetch, also while it waits in the
/// service's throttle or in a retry delay; the operation then throws `CancellationError`.
///
/// **Fetchers.** Each operation's fetcher has the operation ID as its `comment` (so HTTPLogging's
/// index and ``SessionFetcher/description`` name it) and under the property key
/// ``operationIDPropertyKey``. ``Configuration/prepareFetcher`` can change each fetcher before it
/// begins, in the calling task (its task-local values, such as a tracing context, are current).
public struct SessionFetcherTransport: ClientTransport {
  /// Settings of the transport.
  public struct Configuration: Sendable {
    /// A request body of known length up to this many bytes is collected and sent with a
    /// `Content-Length` (servers that refuse chunked bodies accept it, and retries can resend it);
    /// longer bodies and bodies of unknown length are streamed. Default 64 KiB; 0 streams every body.
    public var maximumBufferedRequestBodyLength: Int
    /// How many bytes of a streamed request body are read ahead of the network. Default 256 KiB.
    public var requestBodyBufferLength: Int
    /// Buffered response bytes above which the transfer pauses until the body's reader catches up
    /// (the fetcher's `beginStreaming(highWaterMark:)`). Default `FetcherStream.defaultHighWaterMark`.
    public var responseHighWaterMark: Int
    /// Called with each operation's fetcher and operation ID before the fetch begins, in the calling
    /// task: set per-operation options, add event monitors, or start a trace.
    public var prepareFetcher: (@Sendable (SessionFetcher, _ operationID: String) -> Void)?

    /// Creates a configuration; every parameter has the default described above.
    public init(
      maximumBufferedRequestBodyLength: Int = 64 * 1024,
      requestBodyBufferLength: Int = 256 * 1024,
      responseHighWaterMark: Int = FetcherStream.defaultHighWaterMark,
      prepareFetcher: (@Sendable (SessionFetcher, _ operationID: String) -> Void)? = nil
    ) {
      self.maximumBufferedRequestBodyLength = maximumBufferedRequestBodyLength
      self.requestBodyBufferLength = requestBodyBufferLength
      self.responseHighWaterMark = responseHighWaterMark
      self.prepareFetcher = prepareFetcher
    }
  }

  /// The fetcher property under which each operation's fetcher keeps its operation ID.
  public static let operationIDPropertyKey = "SessionFetcherOpenAPI.operationID"

  /// The service that makes each operation's fetcher.
  public let service: FetcherService
  /// The transport's settings.
  public var configuration: Configuration

  /// Creates a transport whose operations are fetchers of `service`.
  ///
  /// - Parameters:
  ///   - service: the service whose defaults (retries, throttle, cookies, ETags, TLS, engine, …)
  ///     apply. Default: a new service whose callbacks run on a private serial queue (not the main
  ///     queue, which a command-line tool may not run).
  ///   - configuration: the transport's settings.
  public init(service: FetcherService? = nil, configuration: Configuration = Configuration()) {
    if let service {
      self.service = service
    } else {
      let service = FetcherService()
      service.callbackQueue = DispatchQueue(label: "SessionFetcherOpenAPI.callbacks")
      self.service = service
    }
    self.configuration = configuration
  }

  /// Sends `request` (with `body`) to `baseURL` as one fetcher of ``service`` and returns the
  /// response as soon as its head arrives, with the body streaming.
  ///
  /// - Throws: `CancellationError` when the calling task is cancelled; the fetcher's transport
  ///   errors (`URLError`, `SessionFetcherError`); ``SessionFetcherOpenAPIError``; the request body's
  ///   own error when its sequence failed.
  public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String)
    async throws -> (HTTPResponse, HTTPBody?)
  {
    let urlRequest = try Self.makeURLRequest(request, baseURL: baseURL)
    let fetcher = service.fetcher(request: urlRequest)
    fetcher.comment = operationID
    fetcher.setProperty(operationID, forKey: Self.operationIDPropertyKey)

    var source: RequestBodySource?
    if let body {
      if case .known(let length) = body.length, length <= configuration.maximumBufferedRequestBodyLength {
        fetcher.bodyData = try await Data(collecting: body, upTo: Int(length))
      } else {
        let bodySource = RequestBodySource(body: body, bufferLimit: configuration.requestBodyBufferLength)
        fetcher.bodyStreamProvider = { try bodySource.makeStream() }
        if case .known(let length) = body.length { fetcher.bodyLength = length }
        Self.guardRetries(of: fetcher, source: bodySource)
        source = bodySource
      }
    }
    configuration.prepareFetcher?(fetcher, operationID)
    try Task.checkCancellation()

    let stream: FetcherStream
    do {
      stream = try await fetcher.beginStreaming(highWaterMark: configuration.responseHighWaterMark)
    } catch SessionFetcherError.status(_, let data) {
      // A final status ≥ 300 after the service's retries: a response like any other for OpenAPI.
      guard let response = fetcher.response as? HTTPURLResponse else {
        throw SessionFetcherOpenAPIError.notHTTPResponse
      }
      let hasBody = request.method != .head && !(data ?? Data()).isEmpty
      return (Self.makeResponse(response), hasBody ? HTTPBody(data ?? Data()) : nil)
    } catch {
      if Task.isCancelled, case SessionFetcherError.cancelled = error { throw CancellationError() }
      if let failure = source?.failure { throw failure }
      throw error
    }
    guard let response = stream.httpResponse else {
      throw SessionFetcherOpenAPIError.notHTTPResponse
    }
    return (Self.makeResponse(response), Self.makeBody(stream, response: response, method: request.method))
  }

  /// A fetcher whose single-pass streamed body was handed out must not retry.
  private static func guardRetries(of fetcher: SessionFetcher, source: RequestBodySource) {
    let inner = fetcher.retryBlock
    fetcher.retryBlock = { suggested, error, respond in
      guard source.canReplay else {
        respond(false)
        return
      }
      if let inner {
        inner(suggested, error, respond)
      } else {
        respond(suggested)
      }
    }
  }

  /// `baseURL` with the request's path and query appended (as swift-openapi-urlsession does), the
  /// method and the header fields.
  static func makeURLRequest(_ request: HTTPRequest, baseURL: URL) throws -> URLRequest {
    guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
      let target = URLComponents(string: request.path ?? "")
    else {
      throw SessionFetcherOpenAPIError.invalidRequestURL("\(baseURL) and \(request.path ?? "")")
    }
    var basePath = components.percentEncodedPath
    if basePath.hasSuffix("/") && target.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
    components.percentEncodedPath = basePath + target.percentEncodedPath
    components.percentEncodedQuery = target.percentEncodedQuery
    guard let url = components.url else {
      throw SessionFetcherOpenAPIError.invalidRequestURL("\(baseURL) and \(request.path ?? "")")
    }
    var urlRequest = URLRequest(url: url)
    urlRequest.httpMethod = request.method.rawValue
    for field in request.headerFields {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
    }
    return urlRequest
  }

  /// The status, reason and header fields of `response`.
  static func makeResponse(_ response: HTTPURLResponse) -> HTTPResponse {
    var fields = HTTPFields()
    for (name, value) in response.allHeaderFields {
      guard let name = name as? String, let value = value as? String,
        let fieldName = HTTPField.Name(name)
      else { continue }
      fields.append(HTTPField(name: fieldName, value: value))
    }
    return HTTPResponse(status: .init(code: response.statusCode), headerFields: fields)
  }

  /// The streamed body of a successful response: nil when there cannot be one (HEAD, 204, 304, an
  /// announced length of 0).
  static func makeBody(_ stream: FetcherStream, response: HTTPURLResponse, method: HTTPRequest.Method)
    -> HTTPBody?
  {
    if method == .head || response.statusCode == 204 || response.statusCode == 304
      || response.expectedContentLength == 0
    {
      return nil
    }
    // Content-Length counts coded bytes; the stream gives decoded ones.
    let coded = response.value(forHTTPHeaderField: "Content-Encoding").map { !$0.isEmpty } ?? false
    let length: HTTPBody.Length =
      response.expectedContentLength > 0 && !coded ? .known(response.expectedContentLength) : .unknown
    return HTTPBody(stream, length: length, iterationBehavior: .single)
  }
}
