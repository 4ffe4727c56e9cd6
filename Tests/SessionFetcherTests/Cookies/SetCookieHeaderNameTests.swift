import Testing

@testable import SessionFetcher

@Suite("Set-Cookie header name matching")
struct SetCookieHeaderNameTests {
  @Test(arguments: [
    ("Set-Cookie", true), ("set-cookie", true), ("SET-COOKIE", true), ("sEt-CoOkIe", true),
    ("Set-Cookie2", false), ("Set_Cookie", false), ("SetCookie", false), ("Cookie", false),
    ("", false), ("Set\rCookie", false), ("Set-Cookie ", false), ("Sét-Cookie", false),
  ])
  func matching(_ name: String, _ expected: Bool) {
    #expect(SessionCookieStorage.isSetCookieHeaderName(name) == expected)
  }
}
