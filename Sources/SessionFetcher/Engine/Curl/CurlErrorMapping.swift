import Foundation

/// Turns a libcurl result (`CURLcode`) into the `URLError` Apple platforms report for the same
/// failure, so that the fetcher's retry and error handling see the same errors on every engine.
///
/// A pure function of its inputs, tested table by table in `CurlErrorMappingTests`.
package enum CurlErrorMapping {
  /// The `URLError` for a failed transfer.
  ///
  /// - Parameters:
  ///   - code: the transfer's `CURLcode` (not 0).
  ///   - curlMessage: libcurl's text for the failure (the transfer's error buffer, else
  ///     `curl_easy_strerror`); it becomes the error's `localizedDescription`.
  ///   - url: the request's URL, for `NSURLErrorFailingURLErrorKey` and its string key.
  ///   - bodyIsFile: whether the request body is read from a file (a read error is then
  ///     `cannotOpenFile`, URLError having no code for a file that fails while read, rather than
  ///     `requestBodyStreamExhausted`).
  ///   - overHTTP2: whether the transfer's connection spoke HTTP/2.
  package static func urlError(
    code: Int32, curlMessage: String, url: URL?, bodyIsFile: Bool = false, overHTTP2: Bool = false,
    bodyIsEncoded: Bool = false
  ) -> URLError {
    var userInfo: [String: Any] = [
      NSLocalizedDescriptionKey: curlMessage,
      EngineErrorKeys.curlCode: Int(code),
    ]
    if isRetriedByTransport(code: code, curlMessage: curlMessage) {
      userInfo[RetryPolicy.retriedByTransportKey] = true
    }
    if let url {
      userInfo[NSURLErrorFailingURLErrorKey] = url
      userInfo[EngineErrorKeys.failingURLString] = url.absoluteString
    }
    return URLError(
      errorCode(
        code: code, curlMessage: curlMessage, bodyIsFile: bodyIsFile, overHTTP2: overHTTP2,
        bodyIsEncoded: bodyIsEncoded),
      userInfo: userInfo)
  }

  /// Whether libcurl gave up after sending the request again itself: "Connection died, tried 5
  /// times before giving up" (an HTTP/2 stream the server refused, `REFUSED_STREAM`, each time, or a
  /// reused connection that died under the request each time).
  package static func isRetriedByTransport(code: Int32, curlMessage: String) -> Bool {
    code == 56 && curlMessage.contains("before giving up")
  }

  /// The HTTP/2 error codes (RFC 9113 §7) that mean the response (or the request) broke the
  /// protocol, as libcurl names them in "HTTP/2 stream N was not closed cleanly: NAME (err N)".
  static let malformedHTTP2Errors = ["PROTOCOL_ERROR", "FRAME_SIZE_ERROR", "COMPRESSION_ERROR"]

  /// The `URLError.Code` alone (see ``urlError(code:curlMessage:url:bodyIsFile:overHTTP2:bodyIsEncoded:)``).
  /// `bodyIsEncoded`: the final head declared a content coding, which libcurl decodes.
  package static func errorCode(
    code: Int32, curlMessage: String, bodyIsFile: Bool = false, overHTTP2: Bool = false,
    bodyIsEncoded: Bool = false
  ) -> URLError.Code {
    // TLS verdicts come from the code and OpenSSL's text together (see `TLSErrorMapping`).
    if let tls = TLSErrorMapping.code(curlCode: code, message: curlMessage) { return tls }
    switch code {
    case 1:
      // libcurl refuses a reply that is not HTTP at all as "HTTP/0.9"; Apple platforms call that a
      // bad server response, not an unsupported URL.
      return curlMessage.contains("HTTP/0.9") ? .badServerResponse : .unsupportedURL
    case 3: return .badURL
    case 5, 6: return .cannotFindHost
    case 7: return .cannotConnectToHost
    case 8: return .badServerResponse
    case 56 where curlMessage.contains("Too large response header"):
      // libcurl's cap on a head (300 KiB): an endless header block, not a lost connection (which a
      // fetcher would retry).
      return .cannotParseResponse
    case 92 where malformedHTTP2Errors.contains(where: curlMessage.contains):
      // A stream reset because a response broke HTTP/2 (a bad header name, a frame too large):
      // another attempt would get the same answer.
      return .badServerResponse
    case 52 where overHTTP2:
      // No head on an HTTP/2 stream: the client's HTTP/2 layer refused the header block (over
      // nghttp2's limits, or malformed) and reset the stream. Not a lost connection.
      return .cannotParseResponse
    case 16, 18, 52, 55, 56, 92: return .networkConnectionLost
    // "necessary data rewind wasn't possible" / "seek callback returned error": a reused connection
    // closed under the request and libcurl could not resend a stream body on a new one by itself.
    // The connection was lost; a fetcher's retry opens a fresh stream (found by the network soak).
    case 65: return .networkConnectionLost
    case 26: return bodyIsFile ? .cannotOpenFile : .requestBodyStreamExhausted
    // Out of memory: in practice a header block too large to hold.
    case 27: return .cannotParseResponse
    case 28: return .timedOut
    // 35, 58, 59, 60, 83 and 90 are TLS verdicts, answered above.
    case 66, 77, 80, 82: return .secureConnectionFailed
    case 91: return .serverCertificateUntrusted
    case 42: return .cancelled
    case 47: return .httpTooManyRedirects
    case 61: return .cannotDecodeContentData
    // A decoder failing inside a chunked body ends the transfer as a write error ("Failed reading
    // the chunked-encoded stream"); the engine's own write callback fails only for a cancelled
    // transfer, which never gets here.
    case 23 where bodyIsEncoded: return .cannotDecodeContentData
    case 63: return .dataLengthExceedsMaximum
    case 94: return .userAuthenticationRequired
    // A SOCKS (or HTTPS) proxy's handshake failed: a rejected login is an authentication failure,
    // anything else (a proxy that closed, answered garbage or could not reach the host) means no
    // connection to the host.
    case 97:
      return curlMessage.lowercased().contains("rejected") || curlMessage.contains("authentication")
        ? .userAuthenticationRequired : .cannotConnectToHost
    default: return .unknown
    }
  }
}
