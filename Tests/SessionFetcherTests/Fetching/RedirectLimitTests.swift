import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The limit's rule and default. What a fetch does with it (each redirect followed or refused, per
/// attempt, a download past it) is in ScriptedRedirectLimitTests.
@Suite("Redirect limit")
struct RedirectLimitTests {
  @Test(
    "the limit decides each redirect",
    arguments: [
      (0, 0, RedirectLimit.final), (0, 1, .follow), (1, 1, .tooMany), (19, 20, .follow), (20, 20, .tooMany),
      (3, 0, .final),
    ])
  func limitTable(_ followed: Int, _ maximum: Int, _ expected: RedirectLimit) {
    #expect(RedirectPolicy.limit(followed: followed, maximum: maximum) == expected)
  }

  @Test func theDefaultIsTwenty() {
    #expect(
      SessionFetcher(request: URLRequest(url: URL(string: "https://example.com/")!)).maximumRedirects == 20)
  }
}
