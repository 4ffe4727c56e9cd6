import Foundation

/// HTTP dates (RFC 9110 §5.6.7), with plain arithmetic rather than `DateFormatter`: no locale or
/// time-zone state, safe from any thread, and nothing cached that outlives the call.
package enum HTTPDate {
  /// Parses an HTTP-date in any of its three forms (IMF-fixdate, the obsolete RFC 850 and asctime
  /// forms), as a recipient must (§5.6.7). The cookie-date algorithm of RFC 6265 §5.1.1 accepts
  /// all three and is what browsers apply to dates in headers, so it is the one parser here.
  package static func parse(_ string: String) -> Date? {
    CookieDate.parse(string)
  }

  private static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
  private static let monthNames = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  /// The IMF-fixdate form, for example `Sun, 06 Nov 1994 08:49:37 GMT` (fractions of a second
  /// are dropped).
  package static func format(_ date: Date) -> String {
    let seconds = Int(date.timeIntervalSince1970.rounded(.down))
    let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
    let (year, month, day) = civilDate(daysSinceEpoch: days)
    // 1970-01-01 was a Thursday.
    let weekday = dayNames[days.floorDivided(by: 7).remainder]
    return "\(weekday), \(twoDigits(day)) \(monthNames[month - 1]) \(year) "
      + "\(twoDigits(secondOfDay / 3_600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
  }

  private static func twoDigits(_ value: Int) -> String {
    value < 10 ? "0\(value)" : "\(value)"
  }

  /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`, the
  /// inverse of the one `CookieDate` uses).
  private static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
  }
}

extension Int {
  /// Quotient and remainder rounded toward negative infinity (the remainder is never negative).
  fileprivate func floorDivided(by divisor: Int) -> (quotient: Int, remainder: Int) {
    let remainder = ((self % divisor) + divisor) % divisor
    return ((self - remainder) / divisor, remainder)
  }
}
