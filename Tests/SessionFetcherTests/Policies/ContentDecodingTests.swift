import Foundation
import SessionFetcher
import Testing

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

  @Test(
    "which errors become cannotDecodeContentData",
    arguments: [
      // FoundationNetworking: .unknown with libcurl's text.
      (
        URLError.Code.unknown, "Error while processing content unencoding: invalid block type", nil, "gzip",
        true
      ),
      (.unknown, "Unrecognized content encoding type. libcurl understands deflate, gzip", nil, "xz", true),
      (.unknown, "Failed reading the chunked-encoded stream", nil, "gzip", true),
      // br and zstd: only the code's own text.
      (.unknown, "Unrecognized or bad HTTP Content or Transfer-Encoding", nil, "br", true),
      (.unknown, "Unrecognized or bad HTTP Content or Transfer-Encoding", nil, "zstd", true),
      // The libcurl engine: the code.
      (.unknown, "Failed reading the chunked-encoded stream", 23, "gzip", true),
      // Not an encoded response, or another failure: unchanged.
      (.unknown, "Error while processing content unencoding: invalid block type", nil, nil, false),
      (.unknown, "Failed reading the chunked-encoded stream", 23, "identity", false),
      (.unknown, "something else", nil, "gzip", false),
      (.networkConnectionLost, "Error while processing content unencoding", nil, "gzip", false),
    ] as [(URLError.Code, String, Int?, String?, Bool)])
  func mapping(_ code: URLError.Code, _ text: String, _ curlCode: Int?, _ encoding: String?, _ decodes: Bool)
  {
    var info: [String: Any] = [NSLocalizedDescriptionKey: text]
    if let curlCode { info[EngineErrorKeys.curlCode] = curlCode }
    let mapped = ContentDecoding.error(URLError(code, userInfo: info), response: Self.response(encoding))
    let expected: URLError.Code = decodes ? .cannotDecodeContentData : code
    #expect((mapped as? URLError)?.code == expected)
  }
}
