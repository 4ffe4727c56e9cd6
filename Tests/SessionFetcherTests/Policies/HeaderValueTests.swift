import Testing

@testable import SessionFetcher

@Suite("Header values")
struct HeaderValueTests {
  /// Which values can go in a header as they are: no control character but tab (a service's
  /// User-Agent with one is left to Foundation's check; a Set-Cookie with one is ignored).
  @Test(
    arguments: [
      ("MyApp/2.0", true), ("a\tb", true), ("ünïcödé/1.0", true), ("", true), ("a\r\nX-Injected: 1", false),
      ("a\nb", false), ("a\u{0}b", false), ("a\u{7F}b", false),
    ])
  func plainHeaderValue(_ value: String, _ plain: Bool) {
    #expect(HeaderValue.isPlain(value) == plain)
  }
}
