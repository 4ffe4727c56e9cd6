import Foundation

/// The cookie-date algorithm of RFC 6265 §5.1.1.
///
/// The algorithm is deliberately forgiving: it tokenizes the string on a wide set of delimiters and
/// picks the first token that looks like a time, a day of month, a month and a year, in that order
/// of preference. This accepts every format servers actually send, among them
/// `Wed, 09 Jun 2021 10:18:14 GMT` (RFC 1123), `Wednesday, 09-Jun-21 10:18:14 GMT` (RFC 850) and
/// `Wed Jun  9 10:18:14 2021` (asctime). Two-digit years 70–99 mean 19xx and 00–69 mean 20xx.
/// The time is always read as UTC; a zone name in the string is skipped like any other token.
package enum CookieDate {
  /// Parses a cookie date, or returns nil when the string has no valid date in it.
  package static func parse<S: StringProtocol>(_ string: S) -> Date? {
    var time: (hour: Int, minute: Int, second: Int)?
    var dayOfMonth: Int?
    var month: Int?
    var year: Int?

    for token in tokens(of: Array(string.utf8)) {
      if time == nil, let parsed = parseTime(token) {
        time = parsed
      } else if dayOfMonth == nil, let parsed = parseDigits(token, minCount: 1, maxCount: 2) {
        dayOfMonth = parsed
      } else if month == nil, let parsed = parseMonth(token) {
        month = parsed
      } else if year == nil, let parsed = parseDigits(token, minCount: 2, maxCount: 4) {
        year = parsed
      }
    }

    guard let time, let dayOfMonth, let month, var year else { return nil }
    if (70...99).contains(year) {
      year += 1900
    } else if (0...69).contains(year) {
      year += 2000
    }
    guard (1...31).contains(dayOfMonth), year >= 1601, time.hour <= 23, time.minute <= 59,
      time.second <= 59, dayOfMonth <= daysInMonth(month, year: year)
    else { return nil }

    let days = daysSinceEpoch(year: year, month: month, day: dayOfMonth)
    let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
    return Date(timeIntervalSince1970: TimeInterval(seconds))
  }

  /// Splits the bytes into runs of non-delimiter bytes (§5.1.1: delimiters are HTAB and the
  /// punctuation ranges %x20-2F, %x3B-40, %x5B-60, %x7B-7E; ":" and digits are not delimiters).
  private static func tokens(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    var result: [ArraySlice<UInt8>] = []
    var start: Int?
    for index in bytes.indices {
      if isDelimiter(bytes[index]) {
        if let tokenStart = start {
          result.append(bytes[tokenStart..<index])
          start = nil
        }
      } else if start == nil {
        start = index
      }
    }
    if let tokenStart = start {
      result.append(bytes[tokenStart..<bytes.endIndex])
    }
    return result
  }

  private static func isDelimiter(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
    default: return false
    }
  }

  private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

  /// Reads `minCount...maxCount` leading digits that are followed by a non-digit or the end
  /// (the `1*2DIGIT ( non-digit *OCTET )` shape of the grammar), starting at `start`.
  private static func leadingNumber(
    _ token: ArraySlice<UInt8>, from start: Int, minCount: Int, maxCount: Int
  ) -> (value: Int, end: Int)? {
    var index = start
    var value = 0
    while index < token.endIndex, isDigit(token[index]) {
      guard index - start < maxCount else { return nil }
      value = value * 10 + Int(token[index] - 0x30)
      index += 1
    }
    guard index - start >= minCount else { return nil }
    return (value, index)
  }

  private static func parseDigits(_ token: ArraySlice<UInt8>, minCount: Int, maxCount: Int) -> Int? {
    leadingNumber(token, from: token.startIndex, minCount: minCount, maxCount: maxCount)?.value
  }

  private static func parseTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
    let colon = UInt8(ascii: ":")
    guard let hour = leadingNumber(token, from: token.startIndex, minCount: 1, maxCount: 2),
      hour.end < token.endIndex, token[hour.end] == colon,
      let minute = leadingNumber(token, from: hour.end + 1, minCount: 1, maxCount: 2),
      minute.end < token.endIndex, token[minute.end] == colon,
      let second = leadingNumber(token, from: minute.end + 1, minCount: 1, maxCount: 2)
    else { return nil }
    return (hour.value, minute.value, second.value)
  }

  private static let monthNames: [[UInt8]] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
  ].map { Array($0.utf8) }

  private static func parseMonth(_ token: ArraySlice<UInt8>) -> Int? {
    guard token.count >= 3 else { return nil }
    // ASCII letters only: OR-ing 0x20 lowercases them, and leaves no other byte equal to a letter.
    let prefix = token.prefix(3).map { $0 | 0x20 }
    guard let index = monthNames.firstIndex(of: prefix) else { return nil }
    return index + 1
  }

  private static func isLeapYear(_ year: Int) -> Bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
  }

  private static func daysInMonth(_ month: Int, year: Int) -> Int {
    switch month {
    case 2: return isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's `days_from_civil`);
  /// plain arithmetic, so no `Calendar` or time-zone state is involved.
  private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
