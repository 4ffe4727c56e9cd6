import FetcherTesting
import Foundation
import SessionFetcher
import Testing

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

  @Test func zeroMakesTheRedirectFinal() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect/1")
    fetcher.maximumRedirects = 0
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError == .status(code: 302, data: Data("redirecting".utf8)))
    #expect(fetcher.statusCode == 302)
    #expect(fetcher.timing.redirectCount == 0)
    #expect(server.requests.map(\.path) == ["/redirect/1"])
  }

  @Test func oneAllowsOneRedirect() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect/1")
    fetcher.maximumRedirects = 1
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil)
    #expect(result.data == Data("redirect done".utf8))
    #expect(fetcher.timing.redirectCount == 1)

    let over = server.fetcher("/redirect/2")
    over.maximumRedirects = 1
    let overResult = await over.fetchResult(timeout: 60)
    #expect(overResult.urlError?.code == .httpTooManyRedirects)
    #expect(over.timing.redirectCount == 1)
  }

  @Test(arguments: [3, 20])
  func exactlyAtTheLimitSucceedsAndOneOverFails(_ limit: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let atLimit = server.fetcher("/redirect/\(limit)?absolute=1")
    atLimit.maximumRedirects = limit
    let result = await atLimit.fetchResult(timeout: 30)
    #expect(result.error == nil)
    #expect(atLimit.statusCode == 200)
    #expect(atLimit.timing.redirectCount == limit)
    #expect(server.requests.count == limit + 1)

    let before = server.requests.count
    let over = server.fetcher("/redirect/\(limit + 1)")
    over.maximumRedirects = limit
    let overResult = await over.fetchResult(timeout: 30)
    #expect(overResult.urlError?.code == .httpTooManyRedirects)
    #expect(overResult.urlError?.failingURL != nil)
    #expect(over.timing.redirectCount == limit)
    // The redirect past the limit is never requested.
    #expect(server.requests.count - before == limit + 1)
    #expect(server.requestCount(path: "/redirect/0") == 1)
  }

  @Test func theLimitIsPerAttempt() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // Two redirects, then a 503 on the first visit: the retry follows two redirects again.
    func redirect(to target: String) -> String {
      "/redirect?to=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
    let fetcher = server.fetcher(redirect(to: redirect(to: "/fail-first?key=per-attempt")))
    fetcher.maximumRedirects = 2
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    // Retries are allowed for 3 × maxRetryInterval since the first attempt: ample on a loaded machine.
    fetcher.maxRetryInterval = 60
    let result = await fetcher.fetchResult(timeout: 30)
    #expect(result.error == nil)
    #expect(fetcher.timing.retryCount == 1)
    #expect(fetcher.timing.redirectCount == 4)
  }

  @Test(arguments: [-1, Int.min])
  func aNegativeLimitFailsAtBegin(_ limit: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/redirect/1")
    fetcher.maximumRedirects = limit
    let result = await fetcher.fetchResult(timeout: 60)
    guard case .invalidConfiguration(let message)? = result.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
      return
    }
    #expect(message.contains("maximumRedirects"))
    #expect(server.requests.isEmpty)
  }

  @Test func aDownloadPastTheLimitLeavesNoFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("out.bin")
    let fetcher = server.fetcher("/redirect/3")
    fetcher.maximumRedirects = 2
    fetcher.destinationFileURL = destination
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    #expect(leftovers.isEmpty)
  }
}
