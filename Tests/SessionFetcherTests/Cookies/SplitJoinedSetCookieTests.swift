import Foundation
import Testing

@testable import SessionFetcher

@Suite("Splitting joined Set-Cookie headers")
struct SplitJoinedSetCookieTests {
  static let cases: [(String, [String])] = [
    ("", []),
    ("a=1", ["a=1"]),
    ("a=1, b=2", ["a=1", "b=2"]),
    ("a=1,b=2", ["a=1", "b=2"]),
    ("a=1; Path=/, b=2; Path=/x", ["a=1; Path=/", "b=2; Path=/x"]),
    (
      "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT, b=2",
      ["a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT", "b=2"]
    ),
    (
      "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Path=/, b=2; Expires=Thu, 10 Jun 2021 10:18:14 GMT",
      ["a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Path=/", "b=2; Expires=Thu, 10 Jun 2021 10:18:14 GMT"]
    ),
    (
      "a=1; expires=Wednesday, 09-Jun-21 10:18:14 GMT, b=2",
      ["a=1; expires=Wednesday, 09-Jun-21 10:18:14 GMT", "b=2"]
    ),
    ("a=1; Expires=Wed Jun  9 10:18:14 2021, b=2", ["a=1; Expires=Wed Jun  9 10:18:14 2021", "b=2"]),
    ("a=hello, world", ["a=hello, world"]),  // a comma in a value that no "=" follows
    ("a=hello, world; Path=/", ["a=hello, world; Path=/"]),
    ("a=1, =2", ["a=1", "=2"]),
    ("a=1, , b=2", ["a=1", "b=2"]),
    ("a=1,", ["a=1"]),
    (", a=1", ["a=1"]),
    ("  a=1  ,  b=2  ", ["a=1", "b=2"]),
  ]

  @Test("split", arguments: cases)
  func split(joined: String, expected: [String]) {
    #expect(SetCookieParser.splitJoinedHeader(joined) == expected)
  }

  @Test func splitPiecesParseLikeSeparateHeaders() {
    let url = cookieURL("https://example.com/")
    let joined = "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT, b=2; Max-Age=60, c=3"
    let cookies = SetCookieParser.splitJoinedHeader(joined).compactMap {
      SetCookieParser.parse($0, from: url, now: CookieTestDates.june1st2021)
    }
    #expect(cookies.map(\.name) == ["a", "b", "c"])
    #expect(cookies[0].expiresDate == CookieTestDates.june9th2021)
  }
}
