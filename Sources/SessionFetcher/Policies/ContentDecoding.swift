import Foundation

/// What a response's `Content-Encoding` changes for the fetcher: both engines hand over the body
/// decoded (libcurl decodes it), so every length the fetcher counts and limits is of decoded bytes,
/// and the `Content-Length`, which is of the encoded body, says nothing about them. A body that
/// cannot be decoded each engine reports itself, as `URLError(.cannotDecodeContentData)`.
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
}
