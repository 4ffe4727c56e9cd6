import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// Every `SessionUploadFetcherError` prints as one line naming what went wrong, however it is
/// printed, and `SessionFetcherError.describe` gives the same line.
@Suite struct UploadErrorLineTests {
  static let table: [(error: SessionUploadFetcherError, names: String)] = [
    (.retryLimitReached(underlying: "HTTP status 503"), "HTTP status 503"),
    (.chunkUnavailable(description: "the file /data/big.bin shrank"), "/data/big.bin"),
    (.invalidUploadLocation("ftp://example.com/upload"), "ftp://example.com/upload"),
    (
      .invalidProtocolValue(header: "X-Goog-Upload-Size-Received", value: "-1"), "X-Goog-Upload-Size-Received"
    ),
  ]

  @Test(arguments: table.indices)
  func eachCaseIsOneLine(_ index: Int) {
    let (error, name) = Self.table[index]
    let line = error.description
    for text in ["\(error)", error.localizedDescription, SessionFetcherError.describe(error)] {
      #expect(text == line)
    }
    #expect(line.contains(name), "\(line)")
    let breaksLine = line.contains(where: \.isNewline)
    #expect(!breaksLine && !line.contains("UserInfo"), "\(line)")
  }
}
