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
      // Empty items, and a length past UInt64 (not a number either).
      (["5,,5", ", 5"], false), (["18446744073709551616", "6"], false), ([" 5 ", "6"], true),
      // Not ASCII: read by `Character`, where a comma with a combining mark after it is no comma.
      (["5", "6,\u{301}"], false), (["5\u{A0}", "6"], false), (["5", "\u{A0}5"], false),
    ] as [([String], Bool)])
  func contentLengths(_ values: [String], disagree: Bool) {
    #expect(ResponseFraming.contentLengthsDisagree(values) == disagree)
  }
}
