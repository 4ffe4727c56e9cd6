import Foundation

/// What a response's `Content-Encoding` changes for the fetcher: both engines hand over the body
/// decoded (libcurl decodes it), so every length the fetcher counts and limits is of decoded bytes,
/// and the `Content-Length`, which is of the encoded body, says nothing about them.
package enum ContentDecoding {
  /// Whether `response` declares a content coding other than `identity`.
  package static func isEncoded(_ response: URLResponse?) -> Bool {
    guard let http = response as? HTTPURLResponse,
      let value = http.value(forHTTPHeaderField: "Content-Encoding")
    else { return false }
    return isEncoding(value)
  }

  /// Whether `head` declares a content coding other than `identity` (without making its response).
  package static func isEncoded(_ head: ResponseHead) -> Bool {
    guard head.statusCode != nil, let value = head.value(forHTTPHeaderField: "Content-Encoding") else {
      return false
    }
    return isEncoding(value)
  }

  /// Whether a `Content-Encoding` value names a coding other than `identity`.
  private static func isEncoding(_ value: String) -> Bool {
    value.split(separator: ",").contains {
      let coding = $0.trimmingCharacters(in: .whitespaces).lowercased()
      return !coding.isEmpty && coding != "identity"
    }
  }

  /// `error` as `URLError(.cannotDecodeContentData)` when it is libcurl failing to decode an
  /// encoded body, as Apple platforms report it; any other error unchanged.
  ///
  /// - FoundationNetworking reports libcurl's `CURLE_BAD_CONTENT_ENCODING` as `.unknown` with
  ///   libcurl's text ("Error while processing content unencoding: …", "Unrecognized content
  ///   encoding type …", or for br and zstd only the code's own text, "Unrecognized or bad HTTP
  ///   Content or Transfer-Encoding"), and a decoder failing inside a chunked body as "Failed reading the
  ///   chunked-encoded stream" (its write callback never fails otherwise).
  /// - The libcurl engine maps code 61 itself; a decoder failing inside a chunked body reaches it
  ///   as code 23 (`CURLE_WRITE_ERROR`, "Failed reading the chunked-encoded stream"), which its own
  ///   write callback causes only for a cancelled transfer, whose end the fetcher no longer reads.
  package static func error(_ error: any Error, response: URLResponse?) -> any Error {
    guard let urlError = error as? URLError, urlError.code == .unknown, isEncoded(response) else {
      return error
    }
    let description = urlError.localizedDescription.lowercased()
    let curlCode = urlError.userInfo[EngineErrorKeys.curlCode] as? Int
    let decoding =
      description.contains("unencoding") || description.contains("content encoding")
      || description.contains("content or transfer-encoding")
      || description.contains("chunked-encoded stream") || curlCode == 23 || curlCode == 61
    guard decoding else { return error }
    return URLError(.cannotDecodeContentData, userInfo: urlError.userInfo)
  }
}
