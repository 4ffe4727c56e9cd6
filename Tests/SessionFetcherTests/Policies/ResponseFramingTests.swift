import Testing

@testable import SessionFetcher

/// Which `Content-Length` fields make a response's framing unusable (RFC 9112 §6.3).
@Suite("Response framing")
struct ResponseFramingTests {
  @Test(
    arguments: [
      ([], false), (["5"], false), (["5", "5"], false), (["5, 5"], false), (["5 ,\t5", "5"], false),
      (["5", "6"], true), (["5, 6"], true), (["5", "5, 6"], true), (["0", "00"], false),
      // Not a number: libcurl refuses it on its own.
      (["five", "6"], false), (["-5", "6"], false),
    ] as [([String], Bool)])
  func contentLengths(_ values: [String], disagree: Bool) {
    #expect(ResponseFraming.contentLengthsDisagree(values) == disagree)
  }
}
