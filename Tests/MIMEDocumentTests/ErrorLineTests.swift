import Foundation
import MIMEDocument
import SessionFetcher
import Testing

/// Every `MIMEDocumentError` prints as the one sentence that names the file, header or boundary,
/// however it is printed, and `SessionFetcherError.describe` gives that sentence too.
@Suite struct MIMEDocumentErrorLineTests {
  static let file = URL(fileURLWithPath: "/data/photo.jpg")
  static let table: [(error: MIMEDocumentError, names: String)] = [
    (.unreadableFile(file, errno: ENOENT), "/data/photo.jpg"),
    (.notARegularFile(file), "/data/photo.jpg"),
    (.fileChanged(file, expectedLength: 1024), "1024 bytes"),
    (.invalidHeader(name: "X-Bad\r\n"), "X-Bad\\r\\n"),
    (.invalidBoundary(""), "boundary"),
    (.tooLargeForData(length: 1 << 40), "1099511627776 bytes"),
    (.noDelimiter, "boundary"),
    (.missingCloseDelimiter, "closing boundary"),
    (.malformedHeader("no colon here"), "no colon here"),
    // A line break in what the error quotes is shown escaped: the sentence stays one line.
    (.malformedHeader("bare\rCR"), "bare\\rCR"),
  ]

  @Test(arguments: table.indices)
  func eachCaseIsOneSentence(_ index: Int) {
    let (error, name) = Self.table[index]
    let sentence = error.description
    for text in [
      sentence, "\(error)", String(describing: error), error.localizedDescription,
      SessionFetcherError.describe(error),
    ] {
      #expect(text == sentence)
    }
    #expect(sentence.contains(name), "\(sentence)")
    let breaksLine = sentence.contains(where: \.isNewline)
    #expect(!breaksLine, "\(sentence)")
    #expect(!sentence.contains("MIMEDocumentError") && !sentence.contains("UserInfo"), "\(sentence)")
  }
}
