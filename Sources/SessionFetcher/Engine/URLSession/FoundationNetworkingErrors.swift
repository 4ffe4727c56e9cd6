import Foundation

/// FoundationNetworking's transport errors as the codes Apple platforms (and the libcurl engine)
/// give for the same failure on the wire.
///
/// FoundationNetworking (swift-corelibs-foundation 6.3) maps only a few of libcurl's codes and
/// reports the rest as `-1` (`.unknown`), keeping only libcurl's text: a body cut short is `-1`
/// ("transfer closed with 990 bytes remaining to read"), an oversized head `-1` ("Too large response
/// headers: …"), an answer that is not HTTP `-1002` ("Received HTTP/0.9 when not allowed"), a
/// connection closed without an answer `-1011` (libcurl's `CURLE_GOT_NOTHING`, told by the code
/// alone: its text may be an earlier failure's). The text, or that code, names libcurl's code; the
/// libcurl engine's own table (``CurlErrorMapping``) then gives the `URLError` code, so both engines
/// report one failure with one code.
///
/// Only libcurl's texts are matched, and `-1011` only on FoundationNetworking: an error
/// FoundationNetworking makes itself keeps its code, and Apple's URLSession is left as it is.
enum FoundationNetworkingErrors {
  /// libcurl's texts, as FoundationNetworking passes them on, and the `CURLcode` each comes from.
  static let curlCodesByText: [(text: String, curlCode: Int32)] = [
    // CURLE_PARTIAL_FILE: a body shorter than its Content-Length, or a chunked body cut short.
    ("transfer closed with", 18),
    // CURLE_RECV_ERROR, CURLE_SEND_ERROR: a connection reset or broken under the exchange. (A reset
    // is `-1005` only when FoundationNetworking saw the errno.)
    ("Recv failure", 56), ("Failure when receiving data from the peer", 56),
    ("Send failure", 55), ("Failed sending data to the peer", 55),
    // CURLE_RECV_ERROR again, for a head over libcurl's cap (the libcurl engine tells it by the
    // text too).
    ("Too large response header", 56),
    // CURLE_COULDNT_CONNECT when the connection was reset rather than refused.
    ("Couldn't connect to server", 7), ("Failed to connect", 7),
    // CURLE_HTTP2, CURLE_HTTP2_STREAM.
    ("Error in the HTTP2 framing layer", 16), ("HTTP/2 framing layer", 92),
    // CURLE_FILESIZE_EXCEEDED: a Content-Length over `ResponseHeadGuard`'s limit.
    ("Maximum file size exceeded", 63),
    // CURLE_WEIRD_SERVER_REPLY.
    ("Weird server reply", 8), ("Unsupported HTTP version in response", 8),
  ]

  /// libcurl's texts for a body it could not decode, and the `CURLcode` each comes from: read only
  /// for a response that declared a content coding (`-1` with "Unrecognized or bad HTTP Content or
  /// Transfer-Encoding" is also a broken chunked framing). For br and zstd libcurl gives only the
  /// code's own text; a decoder failing inside a chunked body reads as a failed chunked stream,
  /// FoundationNetworking's write callback never failing otherwise.
  static let decodingCurlCodesByText: [(text: String, curlCode: Int32)] = [
    ("Error while processing content unencoding", 61), ("Unrecognized content encoding type", 61),
    ("Unrecognized or bad HTTP Content or Transfer-Encoding", 61),
    ("Failed reading the chunked-encoded stream", 23),
  ]

  /// The `CURLcode` behind `error`, read from FoundationNetworking's code and libcurl's text; nil
  /// when the error is not one of libcurl's that FoundationNetworking left unmapped or mapped apart
  /// from Apple. `bodyIsEncoded`: the response declared a content coding.
  static func curlCode(of error: URLError, bodyIsEncoded: Bool = false) -> Int32? {
    let text = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
    switch error.code {
    case .badServerResponse:
      // FoundationNetworking gives -1011 only for CURLE_GOT_NOTHING (no byte of an answer), whatever
      // the text: libcurl keeps the first error message of a transfer, so when it sent the request
      // again on a fresh connection after a reused one died, the text is the first failure's
      // ("Recv failure: Connection reset by peer") and the code the last one's. Apple's URLSession
      // gives -1011 for answers that are not HTTP: kept.
      #if canImport(FoundationNetworking)
        return 52
      #else
        return nil
      #endif
    case .unsupportedURL:
      // CURLE_UNSUPPORTED_PROTOCOL for an answer that is not HTTP; an unsupported scheme has no
      // such text.
      return text.contains("HTTP/0.9") ? 1 : nil
    case .unknown:
      if bodyIsEncoded, let decoding = decodingCurlCodesByText.first(where: { text.contains($0.text) }) {
        return decoding.curlCode
      }
      return curlCodesByText.first { text.contains($0.text) }?.curlCode
    default:
      return nil
    }
  }

  /// `error` with the code Apple platforms give, its text and other details kept; nil when it
  /// keeps its code. `bodyIsEncoded`: the response declared a content coding (libcurl decodes it).
  static func appleError(_ error: URLError, bodyIsEncoded: Bool = false) -> URLError? {
    if let tls = TLSErrorMapping.fromFoundationNetworking(error) { return tls }
    guard let curlCode = curlCode(of: error, bodyIsEncoded: bodyIsEncoded) else { return nil }
    let text = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
    let code = CurlErrorMapping.errorCode(code: curlCode, curlMessage: text, bodyIsEncoded: bodyIsEncoded)
    guard code != error.code, code != .unknown else { return nil }
    var userInfo = error.userInfo
    userInfo[EngineErrorKeys.curlCode] = Int(curlCode)
    return URLError(code, userInfo: userInfo)
  }
}
