import Foundation
import Testing

@testable import SessionFetcher

@Suite("Header values")
struct HeaderValueTests {
  /// Which values can go in a header as they are: no control character but tab (a Set-Cookie with
  /// one is ignored).
  @Test(
    arguments: [
      ("MyApp/2.0", true), ("a\tb", true), ("ünïcödé/1.0", true), ("", true), ("a\r\nX-Injected: 1", false),
      ("a\nb", false), ("a\u{0}b", false), ("a\u{7F}b", false), ("a\u{85}b", false),
    ])
  func plainHeaderValue(_ value: String, _ plain: Bool) {
    #expect(HeaderValue.isPlain(value) == plain)
  }

  /// Header names, tokens and schemes compare ASCII case-insensitively; nothing else is folded.
  @Test(
    arguments: [
      ("Content-Type", "content-type", true), ("ETAG", "etag", true), ("a", "A", true), ("", "", true),
      ("@", "`", false), ("[", "{", false), ("Set\rCookie", "Set-Cookie", false), ("x", "xx", false),
      ("Ü", "ü", false), ("K", "\u{212A}", false), ("Set-Cookie2", "Set-Cookie", false),
    ])
  func headerNamesEqual(_ left: String, _ right: String, _ equal: Bool) {
    #expect(left.equalsIgnoringASCIICase(right) == equal)
    #expect(right.equalsIgnoringASCIICase(left) == equal)
    // Longer than a small string (stored out of line), and made from an NSString: the same answers.
    let suffix = String(repeating: "-Long-Name", count: 4)
    #expect((left + suffix).equalsIgnoringASCIICase(right + suffix.uppercased()) == equal)
    let bridged = NSString(string: left + suffix) as String
    #expect(bridged.equalsIgnoringASCIICase(right + suffix) == equal)
    #expect((right + suffix).equalsIgnoringASCIICase(bridged) == equal)
  }

  /// The cookie jar's test for `Set-Cookie` among a response's header names.
  @Test(arguments: [
    ("Set-Cookie", true), ("set-cookie", true), ("SET-COOKIE", true), ("sEt-CoOkIe", true),
    ("Set-Cookie2", false), ("Set_Cookie", false), ("SetCookie", false), ("Cookie", false),
    ("", false), ("Set\rCookie", false), ("Set-Cookie ", false), ("Sét-Cookie", false),
  ])
  func setCookieHeaderName(_ name: String, _ expected: Bool) {
    #expect(SessionCookieStorage.isSetCookieHeaderName(name) == expected)
  }
}
