import Foundation
import Testing

@testable import SessionFetcher

@Suite("Cookie dates (RFC 6265 §5.1.1)")
struct CookieDateTests {
  static let valid: [(String, TimeInterval)] = [
    ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894),  // RFC 1123
    ("Wednesday, 09-Jun-21 10:18:14 GMT", 1_623_233_894),  // RFC 850, two-digit year
    ("Wed Jun  9 10:18:14 2021", 1_623_233_894),  // asctime
    ("Wed, 09-Jun-2021 10:18:14 GMT", 1_623_233_894),  // Netscape
    ("09 Jun 2021 10:18:14", 1_623_233_894),  // no weekday, no zone
    ("wed, 09 JUN 2021 10:18:14 gmt", 1_623_233_894),  // case-insensitive month
    ("Wed, 9 June 2021 10:18:14 GMT", 1_623_233_894),  // long month name
    ("Wed, 09 Jun 2021 10:18:14 +0200", 1_623_233_894),  // zone ignored: always UTC
    ("2021 Jun 09 10:18:14", 1_623_233_894),  // any order
    ("Wed, 09 Jun 2021 1:2:3 GMT", 1_623_200_523),  // one-digit time fields
    ("Thu, 01-Jan-70 00:00:00 GMT", 0),  // 70 → 1970
    ("Sat, 01-Jan-00 00:00:00 GMT", 946_684_800),  // 00 → 2000
    ("Tue, 31-Dec-69 23:59:59 GMT", 3_155_759_999),  // 69 → 2069
    ("Mon, 29 Feb 2016 12:00:00 GMT", 1_456_747_200),  // leap day
    ("Mon, 01 Jan 1601 00:00:00 GMT", -11_644_473_600),  // earliest allowed year
    ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
  ]

  @Test("valid dates", arguments: valid)
  func parsesValidDate(string: String, expected: TimeInterval) {
    #expect(CookieDate.parse(string) == Date(timeIntervalSince1970: expected))
  }

  static let invalid: [String] = [
    "",
    "garbage",
    "Wed, 09 Jun 2021",  // no time
    "10:18:14 2021",  // no day or month
    "Wed, 32 Jun 2021 10:18:14 GMT",  // day out of range
    "Wed, 00 Jun 2021 10:18:14 GMT",
    "Tue, 29 Feb 2022 10:18:14 GMT",  // not a leap year
    "Thu, 31 Apr 2021 10:18:14 GMT",
    "Wed, 09 Jun 2021 24:00:00 GMT",  // hour out of range
    "Wed, 09 Jun 2021 10:60:00 GMT",
    "Wed, 09 Jun 2021 10:18:60 GMT",
    "Wed, 09 Jun 1600 10:18:14 GMT",  // before 1601
    "Wed, 09 Xyz 2021 10:18:14 GMT",  // no month
    "Wed, 09 Jun 12345 10:18:14 GMT",  // five-digit year
    "Wed, 123 Jun 2021 10:18:14 GMT",  // three-digit day is read as a year, then no day is left
  ]

  @Test("invalid dates", arguments: invalid)
  func rejectsInvalidDate(string: String) {
    #expect(CookieDate.parse(string) == nil)
  }
}
