import Foundation

/// The errors a ``SessionFetcher`` reports itself.
///
/// Transport failures are not wrapped: they arrive as `URLError` exactly as URLSession reported
/// them (and a fetch that exceeds its timeout arrives as `URLError(.timedOut)`), and an error of an
/// authorizer, a decorator or a user-agent provider arrives as it was thrown.
///
/// ## As an NSError
///
/// `error as NSError` reads as GTMSessionFetcher's errors did (`CustomNSError`): a final HTTP
/// status has the domain ``statusDomain`` (`"com.google.HTTPStatus"`, GTM's
/// `kGTMSessionFetcherStatusDomain`), the status as its code, and the body under
/// ``statusDataKey`` (`"data"`) when there is one. Every case has that one domain, because
/// Foundation on Linux takes an error type's domain from its type, not from the value; the
/// library's own errors have negative codes, so no status is taken for one of them (and
/// `.cancelled` and `.insecureRequest` have GTM's codes for them). Every `userInfo` also holds the
/// ``description`` under `NSLocalizedDescriptionKey`.
///
/// | case | code | `userInfo` besides the description |
/// |---|---|---|
/// | ``status(code:data:)`` | the status (300 or more) | `"data"`: the body, when not empty |
/// | ``downloadFailed(description:)`` | -1 | |
/// | ``insecureRequest(_:)`` | -5 | `NSURLErrorFailingURLErrorKey`: the URL |
/// | ``cancelled`` | -7 | |
/// | ``invalidURL(_:)`` | -100 | |
/// | ``bodyUnavailable(description:)`` | -101 | |
/// | ``invalidConfiguration(_:)`` | -102 | |
/// | ``authorizationFailed(description:)`` | -103 | |
/// | ``streamInterrupted(description:)`` | -104 | |
/// | ``responseTooLarge(limit:)`` | -105 | |
/// | ``engineUnavailable(_:)`` | -106 | |
/// | ``unsupportedByEngine(_:)`` | -107 | |
/// | ``invalidTLSSettings(_:)`` | -108 | |
///
/// GTM's `"data_content_type"` (``statusDataContentTypeKey``) is not in the `userInfo`: the case
/// carries no response headers. Read the content type from the fetcher's
/// ``SessionFetcher/responseHeaders``. A `URLError` stays in `NSURLErrorDomain` with its own code.
/// Back from an `NSError`: `error as? SessionFetcherError` works on the error the fetch gave
/// (bridged to `NSError` and back on Apple platforms; Foundation on Linux makes a new `NSError`
/// that does not convert back).
public enum SessionFetcherError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The final response had an HTTP status outside 200–299.
  ///
  /// `data` is the response body (also passed as the completion's data), or `nil` when it was empty.
  case status(code: Int, data: Data?)
  /// The URL's scheme is not allowed: only https passes unless the scheme is listed in
  /// ``SessionFetcher/allowedInsecureSchemes`` or the URL is http to localhost and
  /// ``SessionFetcher/allowLocalhostRequest`` is set. Also reported for an https → http redirect
  /// and for a redirect to any scheme but http and https.
  case insecureRequest(URL)
  /// The fetcher was made from a string that is not a valid URL (or has no request at all).
  case invalidURL(String)
  /// The fetch was stopped, by ``SessionFetcher/stopFetching()`` or by cancelling the `Task`
  /// awaiting ``SessionFetcher/beginFetch()``.
  case cancelled
  /// The body could not be read: a missing or unreadable ``SessionFetcher/bodyFileURL``, or a
  /// ``SessionFetcher/bodyStreamProvider`` that threw.
  case bodyUnavailable(description: String)
  /// The download could not be written to ``SessionFetcher/destinationFileURL`` (for example, the
  /// folder cannot be created).
  case downloadFailed(description: String)
  /// The fetcher was configured inconsistently (for example, both `bodyData` and `bodyFileURL`), or
  /// its request would not be sent as made: a method or header name that is not a token, or a
  /// header value with a control character (see ``RequestValidation``; the text names the field,
  /// never the value). Reported before any byte is sent.
  case invalidConfiguration(String)
  /// The fetch's ``FetcherAuthorizer`` could not be used: it implements neither form of
  /// ``FetcherAuthorizer/authorizeRequest(_:)`` (the text says which to write).
  ///
  /// An error the authorizer throws itself is not wrapped in this case: it ends the fetch as it is,
  /// so `catch let error as MyTokenError` sees it. (Until this library's GTM-migrant release, every
  /// authorizer error arrived here, as text.)
  case authorizationFailed(description: String)
  /// A streamed body could not go on after some of it was delivered (a paused transfer whose
  /// server no longer answers the Range request with the same resource), or a download in Range
  /// windows whose next window belongs to a resource of another length. Never retried: the consumer
  /// (or the part file) already has part of the body.
  case streamInterrupted(description: String)
  /// A response body kept in memory grew past ``SessionFetcher/maximumResponseBodyLength`` (or
  /// announced a `Content-Length` past it); the transfer was cancelled and nothing was kept.
  /// Also ends a stream's ``FetcherStream/lines`` at a line longer than
  /// ``SessionFetcher/maximumLineLength``, and its ``FetcherStream/events`` at an event longer than
  /// ``SessionFetcher/maximumEventLength`` (the fetch is stopped); `limit` is the limit passed.
  case responseTooLarge(limit: Int64)
  /// The fetch's ``FetcherEngine`` cannot be used here (for ``FetcherEngine/libcurl``: no loadable
  /// libcurl, one older than 7.68.0, or iOS, tvOS, watchOS or visionOS); the text says why. Reported at
  /// begin, before any traffic. Never retried.
  case engineUnavailable(String)
  /// The fetch asks for something its engine cannot do (the text names the setting and the engine
  /// that can); reported at begin, before any byte is sent.
  case unsupportedByEngine(String)
  /// The fetch's ``TLSSettings`` cannot be used: a file that is missing, unreadable or not the PEM
  /// it should be, a malformed pin, a client key its certificate does not match or whose password
  /// is wrong. The text names the file or the setting (never a password). Reported before any
  /// request is sent; never retried.
  case invalidTLSSettings(String)

  /// The HTTP status code for `.status` errors, otherwise `nil`.
  public var statusCode: Int? {
    if case .status(let code, _) = self { return code }
    return nil
  }

  /// The response body carried by a `.status` error.
  public var data: Data? {
    if case .status(_, let data) = self { return data }
    return nil
  }

  /// A one-line English description of the failure, for logs and command-line tools, that names
  /// the property or file to change where there is one.
  public var description: String {
    switch self {
    case .status(let code, let data):
      let size = data.map { ", \($0.count) body bytes" } ?? ""
      return "HTTP status \(code) (\(HTTPURLResponse.localizedString(forStatusCode: code))\(size))"
    case .insecureRequest(let url):
      return Self.insecureRequestText(url)
    case .invalidURL(let string):
      let shown = string.isEmpty ? "an empty string" : "\"\(Self.oneLine(string))\""
      return "Invalid URL: \(shown) is not an absolute URL with a scheme and a host; pass a URL such as "
        + "https://example.com/path to SessionFetcher.fetcher(urlString:) or set request"
    case .cancelled:
      return "The fetch was cancelled"
    case .bodyUnavailable(let text):
      return "The request body is unavailable: \(Self.oneLine(text))"
    case .downloadFailed(let text):
      return "The download could not be saved: \(Self.oneLine(text))"
    case .invalidConfiguration(let text):
      return "Invalid fetcher configuration: \(Self.oneLine(text))"
    case .authorizationFailed(let text):
      return "Authorization failed: \(Self.oneLine(text))"
    case .streamInterrupted(let text):
      return "The streamed body was interrupted: \(Self.oneLine(text))"
    case .responseTooLarge(let limit):
      return "The response body is larger than the limit of \(limit) bytes kept in memory"
    case .engineUnavailable(let reason):
      return "The fetch's engine is unavailable: \(Self.oneLine(reason))"
    case .unsupportedByEngine(let text):
      return "Not supported by the fetch's engine: \(Self.oneLine(text))"
    case .invalidTLSSettings(let text):
      return "Invalid tlsSettings: \(Self.oneLine(text))"
    }
  }
}

extension SessionFetcherError {
  /// What to change for a refused URL: the property that allows it, on the fetcher or its service.
  static func insecureRequestText(_ url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    guard SecurityPolicy.isHTTP(scheme: scheme) else {
      // No setting applies: neither allowLocalhostRequest (http only) nor a redirect's target.
      let named = scheme.isEmpty ? "no scheme" : "the scheme \"\(scheme)\""
      return "Unsupported URL refused: \(oneLine(url.absoluteString)) has \(named); SessionFetcher "
        + "fetches http and https URLs"
    }
    let allow =
      SecurityPolicy.isLocalhost(url)
      ? "set allowLocalhostRequest = true (the host is this machine) or add \"\(scheme)\" to "
        + "allowedInsecureSchemes"
      : "use https, or add \"\(scheme)\" to allowedInsecureSchemes"
    return "Insecure request refused: \(oneLine(url.absoluteString)) is not https; \(allow), on the "
      + "fetcher or its FetcherService (a redirect from https to it is refused in any case)"
  }

  /// `error` as one readable line: Foundation's errors by their localized text (their
  /// `description` is a domain, a code and a `UserInfo` dump), others by their own description.
  package static func readable(_ error: any Error) -> String {
    if let error = error as? SessionFetcherError { return error.description }
    if error is LocalizedError || type(of: error) is NSError.Type || error is CocoaError || error is URLError
    {
      return oneLine(error.localizedDescription)
    }
    return oneLine(String(describing: error))
  }

  /// `text` on one line: line breaks and tabs become spaces, runs of spaces one space.
  static func oneLine(_ text: String) -> String {
    guard text.contains(where: { $0.isNewline || $0 == "\t" }) else { return text }
    return text.split(whereSeparator: { $0.isNewline || $0 == "\t" || $0 == " " }).joined(separator: " ")
  }
}

extension SessionFetcherError: LocalizedError {
  /// The same text as ``description``, so `localizedDescription` is useful too.
  public var errorDescription: String? { description }
}
