import Foundation

extension SessionFetcherError {
  /// One line for an error a fetch ended with, for logs and command-line tools: what failed, the
  /// host (or URL) it concerns, the engine's own words, and the setting to change where there is
  /// one.
  ///
  /// `print(error)` of a `URLError` prints its domain, its code and a dump of its user info; this
  /// names the host and the cause instead. The library's own errors read as their ``description``,
  /// with the host added to an HTTP status.
  ///
  /// ```swift
  /// import SessionFetcher
  ///
  /// let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/items.json")
  /// do {
  ///   _ = try await fetcher.beginFetch()
  /// } catch {
  ///   // "Could not connect to example.com:443: Failed to connect… (URLError -1004)"
  ///   print(SessionFetcherError.describe(error, url: fetcher.request?.url))
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - error: an error a fetcher, a service or an upload reported (any other error is described
  ///     by its own text, on one line).
  ///   - url: the request's URL, named for errors that carry none (an HTTP status).
  public static func describe(_ error: any Error, url: URL? = nil) -> String {
    if let error = error as? SessionFetcherError {
      guard case .status = error, let host = url.map(hostAndPort) else { return error.description }
      return "\(error.description) from \(host)"
    }
    if let error = error as? URLError { return describe(error, url: url) }
    return readable(error)
  }

  /// A `URLError` as one line: the cause by its code, the host of its failing URL (else `url`'s),
  /// the engine's text when it adds to that, the code, and the setting where one applies.
  private static func describe(_ error: URLError, url: URL?) -> String {
    let failing = error.failingURL ?? url
    let host = failing.map(hostAndPort) ?? "the server"
    let whole = failing.map { oneLine($0.absoluteString) } ?? "the URL"
    let (cause, setting): (String, String?) =
      switch error.code {
      case .cannotConnectToHost: ("Could not connect to \(host)", nil)
      case .cannotFindHost, .dnsLookupFailed: ("Could not resolve the host of \(whole)", nil)
      case .timedOut:
        ("Timed out waiting for \(host)", "request.timeoutInterval or resourceTimeoutInterval set the limits")
      case .networkConnectionLost:
        ("The connection to \(host) was lost before the response was complete", nil)
      case .notConnectedToInternet: ("No network connection to reach \(host)", nil)
      case .badServerResponse: ("\(host) answered with something that is not a usable HTTP response", nil)
      case .cannotParseResponse: ("The response head from \(host) could not be read", nil)
      case .httpTooManyRedirects: ("Too many redirects from \(whole)", "maximumRedirects sets the limit")
      case .secureConnectionFailed: ("The TLS connection to \(host) failed", nil)
      case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
        (
          "The certificate of \(host) is not trusted",
          "tlsSettings.additionalTrustRoots adds a root (libcurl engine)"
        )
      case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
        ("The certificate of \(host) is expired or not yet valid", nil)
      case .clientCertificateRequired:
        ("\(host) asks for a client certificate", "tlsSettings.clientCertificate sends one (libcurl engine)")
      case .clientCertificateRejected: ("\(host) refused the client certificate", nil)
      case .userAuthenticationRequired: ("\(host) (or its proxy) refused the credentials", nil)
      case .cancelled: ("The fetch of \(whole) was cancelled", nil)
      case .cannotDecodeContentData:
        ("The body from \(host) could not be decoded (its Content-Encoding)", nil)
      case .dataLengthExceedsMaximum: ("The response from \(host) is larger than the engine accepts", nil)
      case .unsupportedURL: ("Unsupported URL \(whole)", nil)
      case .badURL: ("Bad URL \(whole)", nil)
      case .requestBodyStreamExhausted: ("The request body for \(host) could not be read to its end", nil)
      case .cannotOpenFile: ("The request body file for \(host) could not be read", nil)
      default: ("Fetching \(whole) failed", nil)
      }
    var line = cause
    if let detail = engineText(of: error) { line += ": \(detail)" }
    line += " (URLError \(error.code.rawValue))"
    if let setting { line += "; \(setting)" }
    return line
  }

  /// The engine's own words for `error` (libcurl's or FoundationNetworking's message), on one line,
  /// or nil when it has none.
  private static func engineText(of error: URLError) -> String? {
    guard let text = error.userInfo[NSLocalizedDescriptionKey] as? String else { return nil }
    let line = oneLine(text).trimmingCharacters(in: .whitespaces)
    return line.isEmpty || line == "(null)" ? nil : line
  }

  /// `url`'s host, with its port when the URL names one.
  private static func hostAndPort(_ url: URL) -> String {
    let host = url.host ?? oneLine(url.absoluteString)
    return url.port.map { "\(host):\($0)" } ?? host
  }
}
