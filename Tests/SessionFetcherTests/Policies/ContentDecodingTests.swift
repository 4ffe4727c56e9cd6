import Foundation
import Testing

@testable import SessionFetcher

@Suite("Content decoding errors")
struct ContentDecodingTests {
  private static let url = URL(string: "http://127.0.0.1/x")!

  private static func response(_ encoding: String?) -> HTTPURLResponse {
    HTTPURLResponse(
      url: url, statusCode: 200, httpVersion: "HTTP/1.1",
      headerFields: encoding.map { ["Content-Encoding": $0] } ?? [:])!
  }

  @Test(
    "which responses are encoded",
    arguments: [
      (nil, false), ("gzip", true), ("identity", false), ("", false), ("deflate, br", true),
      (" Identity ", false), ("x-gzip", true),
    ] as [(String?, Bool)])
  func encoded(_ encoding: String?, _ expected: Bool) {
    #expect(ContentDecoding.isEncoded(Self.response(encoding)) == expected)
  }

  /// A body libcurl could not decode, as each engine reports it: `.cannotDecodeContentData`, as
  /// Apple platforms give it, when the response declared a content coding; the same failure text
  /// for a response that did not is another failure and keeps its code.
  @Test(
    "which errors become cannotDecodeContentData",
    arguments: [
      // FoundationNetworking: .unknown with libcurl's text.
      (URLError.Code.unknown, "Error while processing content unencoding: invalid block type", true, true),
      (.unknown, "Unrecognized content encoding type. libcurl understands deflate, gzip", true, true),
      (.unknown, "Failed reading the chunked-encoded stream", true, true),
      // br and zstd: only the code's own text.
      (.unknown, "Unrecognized or bad HTTP Content or Transfer-Encoding", true, true),
      // Not an encoded response, or another failure: unchanged.
      (.unknown, "Error while processing content unencoding: invalid block type", false, false),
      (.unknown, "Unrecognized or bad HTTP Content or Transfer-Encoding", false, false),
      (.unknown, "Failed reading the chunked-encoded stream", false, false),
      (.unknown, "something else", true, false),
      (.networkConnectionLost, "Error while processing content unencoding", true, false),
    ] as [(URLError.Code, String, Bool, Bool)])
  func foundationNetworking(_ code: URLError.Code, _ text: String, _ encoded: Bool, _ decodes: Bool) {
    let error = URLError(code, userInfo: [NSLocalizedDescriptionKey: text])
    let mapped = FoundationNetworkingErrors.appleError(error, bodyIsEncoded: encoded) ?? error
    #expect(mapped.code == (decodes ? .cannotDecodeContentData : code))
    #expect(mapped.localizedDescription == text)
  }

  #if LIBCURL_ENGINE
    /// The libcurl engine: code 61 is a decoding failure; 23 (a write error) is one only for an
    /// encoded body, a decoder failing inside a chunked body.
    @Test(
      "which libcurl codes become cannotDecodeContentData",
      arguments: [
        (61 as Int32, "Error while processing content unencoding: invalid block type", true, true),
        (61, "Unrecognized content encoding type", false, true),
        (23, "Failed reading the chunked-encoded stream", true, true),
        (23, "Failure writing output to destination", false, false),
        (18, "transfer closed with 10 bytes remaining to read", true, false),
      ] as [(Int32, String, Bool, Bool)])
    func libcurl(_ code: Int32, _ text: String, _ encoded: Bool, _ decodes: Bool) {
      let mapped = CurlErrorMapping.errorCode(code: code, curlMessage: text, bodyIsEncoded: encoded)
      #expect((mapped == .cannotDecodeContentData) == decodes, "\(mapped)")
    }
  #endif
}
