import Foundation

/// HTTP dates (RFC 9110 §5.6.7), parsed with plain arithmetic rather than `DateFormatter`: no locale
/// or time-zone state, safe from any thread, and nothing cached that outlives the call (Foundation's
/// formatter leaked under LeakSanitizer).
package enum HTTPDate {
  /// Parses an HTTP-date in any of its three forms (IMF-fixdate, the obsolete RFC 850 and asctime
  /// forms), as a recipient must (§5.6.7). The cookie-date algorithm of RFC 6265 §5.1.1 accepts
  /// all three and is what browsers apply to dates in headers, so it is the one parser here.
  package static func parse(_ string: String) -> Date? {
    CookieDate.parse(string)
  }
}
