import Foundation
import Testing

@testable import SessionFetcher

/// FoundationNetworking's errors, as it reports them (code and libcurl's text), and the code the
/// URLSession engine passes on: the libcurl engine's code for the same failure.
@Suite("FoundationNetworking errors")
struct FoundationNetworkingErrorsTests {
  @Test(
    arguments: [
      (
        URLError.Code.unknown, "transfer closed with 990 bytes remaining to read",
        URLError.Code.networkConnectionLost
      ),
      (.unknown, "transfer closed with outstanding read data remaining", .networkConnectionLost),
      (.unknown, "Recv failure: Connection reset by peer", .networkConnectionLost),
      (.unknown, "Send failure: Broken pipe", .networkConnectionLost),
      (.unknown, "Too large response headers: 307665 > 307200", .cannotParseResponse),
      (
        .unknown, "Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
        .cannotConnectToHost
      ),
      (.unknown, "Maximum file size exceeded", .dataLengthExceedsMaximum),
      (.unknown, "Weird server reply", .badServerResponse),
      (.unsupportedURL, "Received HTTP/0.9 when not allowed", .badServerResponse),
      (
        .unknown, "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number", .secureConnectionFailed
      ),
      // Errors FoundationNetworking makes itself, or that the fetcher maps later, keep their code.
      (.unsupportedURL, "The operation could not be completed", .unsupportedURL),
      (.unknown, "Error while processing content unencoding: invalid block type", .unknown),
      (.networkConnectionLost, "Recv failure: Connection reset by peer", .networkConnectionLost),
      (.timedOut, "The request timed out.", .timedOut),
      (.cannotConnectToHost, "Failed to connect", .cannotConnectToHost),
    ] as [(URLError.Code, String, URLError.Code)])
  func mapping(_ given: URLError.Code, _ text: String, _ expected: URLError.Code) {
    let url = URL(string: "http://127.0.0.1:8080/x")!
    let error = URLError(
      given, userInfo: [NSLocalizedDescriptionKey: text, NSURLErrorFailingURLErrorKey: url])
    let mapped = FoundationNetworkingErrors.appleError(error) ?? error
    #expect(mapped.code == expected)
    #expect(mapped.localizedDescription == text)
    #expect(mapped.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
  }
  #if canImport(FoundationNetworking)
    /// FoundationNetworking's -1011 is libcurl's "no byte of an answer" (CURLE_GOT_NOTHING) whatever
    /// its text: when libcurl sent the request again after a reused connection died, the text is the
    /// first failure's (the network soak's upload through a resetting proxy).
    @Test(arguments: ["Empty reply from server", "Recv failure: Connection reset by peer", ""])
    func noAnswerIsALostConnection(_ text: String) {
      mapping(.badServerResponse, text, .networkConnectionLost)
    }
  #endif

}
