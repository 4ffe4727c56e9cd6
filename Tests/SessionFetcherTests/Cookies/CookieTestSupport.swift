import Foundation
import Testing

@testable import SessionFetcher

/// A settable clock for cookie-expiry tests.
final class CookieTestClock: @unchecked Sendable {
  // An NSLock protects `current`.
  private let lock = NSLock()
  private var current: Date

  init(_ start: Date = CookieTestDates.june1st2021) {
    current = start
  }

  var now: Date {
    lock.lock()
    defer { lock.unlock() }
    return current
  }

  func advance(by interval: TimeInterval) {
    lock.lock()
    defer { lock.unlock() }
    current = current.addingTimeInterval(interval)
  }

  /// A jar that reads this clock.
  func makeStorage() -> SessionCookieStorage {
    SessionCookieStorage(now: { [self] in self.now })
  }
}

enum CookieTestDates {
  /// 2021-06-01T00:00:00Z.
  static let june1st2021 = Date(timeIntervalSince1970: 1_622_505_600)
  /// 2021-06-09T10:18:14Z, the date of the sample Expires strings.
  static let june9th2021 = Date(timeIntervalSince1970: 1_623_233_894)
}

func cookieURL(_ string: String) -> URL {
  guard let url = URL(string: string) else { fatalError("bad test URL \(string)") }
  return url
}
