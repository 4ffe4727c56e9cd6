import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `maximumRedirects` on the scripted engine: which redirects a fetch follows, and how it ends past
/// the limit. How each real engine hands a redirect over is in `RedirectTests` and
/// `WireEventTests`.
@Suite("Redirect limit (scripted)")
struct ScriptedRedirectLimitTests {
  static let body = Data("redirect done".utf8)

  /// Scripts `/hop/<hops>` → … → `/hop/1` → `/hop/0`, which answers ``body``; each `Location` a
  /// path, or with `absolute` a whole URL.
  static func chain(_ engine: ScriptedEngine, hops: Int, absolute: Bool = false) {
    for hop in stride(from: hops, to: 0, by: -1) {
      let target = (absolute ? ScriptedEngine.origin : "") + "/hop/\(hop - 1)"
      engine.respond(to: "/hop/\(hop)", with: .redirect(to: target))
    }
    engine.respond(to: "/hop/0", with: .response(body: body))
  }

  /// How a fetch ends.
  enum Outcome: Sendable {
    /// With ``ScriptedRedirectLimitTests/body``.
    case body
    /// With the first redirect as a status error: a limit of 0 makes it final.
    case finalRedirect
    /// With `URLError.httpTooManyRedirects`.
    case tooManyRedirects
  }

  /// One row: the limit, the redirects before the body, and what the fetcher does.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var limit: Int
    var hops: Int
    var outcome: Outcome
    /// The fetch's `timing.redirectCount`.
    var redirects: Int
    /// The requests sent: the redirect past the limit is never requested.
    var requests: Int
    /// Whether each `Location` is a whole URL rather than a path.
    var absolute = false

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "limit 0: the redirect is final", limit: 0, hops: 1, outcome: .finalRedirect, redirects: 0,
      requests: 1),
    Row(
      name: "limit 1: one redirect is followed", limit: 1, hops: 1, outcome: .body, redirects: 1, requests: 2),
    Row(
      name: "limit 1: a second is refused", limit: 1, hops: 2, outcome: .tooManyRedirects, redirects: 1,
      requests: 2),
    Row(
      name: "limit 3: three are followed (absolute)", limit: 3, hops: 3, outcome: .body, redirects: 3,
      requests: 4, absolute: true),
    Row(
      name: "limit 3: a fourth is refused", limit: 3, hops: 4, outcome: .tooManyRedirects, redirects: 3,
      requests: 4),
    Row(
      name: "limit 20: twenty are followed (absolute)", limit: 20, hops: 20, outcome: .body, redirects: 20,
      requests: 21, absolute: true),
    Row(
      name: "limit 20: a twenty-first is refused", limit: 20, hops: 21, outcome: .tooManyRedirects,
      redirects: 20,
      requests: 21),
  ]

  @Test(arguments: rows)
  func theLimitDecidesEachRedirect(_ row: Row) async {
    let engine = ScriptedEngine()
    Self.chain(engine, hops: row.hops, absolute: row.absolute)
    let fetcher = engine.fetcher("/hop/\(row.hops)")
    fetcher.maximumRedirects = row.limit
    let result = await fetcher.fetchResult()
    switch row.outcome {
    case .body:
      #expect(result.error == nil)
      #expect(result.data == Self.body)
      #expect(fetcher.statusCode == 200)
    case .finalRedirect:
      #expect(result.fetcherError == .status(code: 302, data: Data("redirecting".utf8)))
      #expect(fetcher.statusCode == 302)
    case .tooManyRedirects:
      #expect(result.urlError?.code == .httpTooManyRedirects)
      #expect(result.urlError?.failingURL != nil)
    }
    #expect(fetcher.timing.redirectCount == row.redirects)
    #expect(engine.requests.count == row.requests)
    let requested = (0..<row.requests).map { "/hop/\(row.hops - $0)" }
    #expect(engine.requests.map(\.path) == requested)
  }

  /// Two redirects, then a 503 on the first visit: the retry follows the two redirects again, and
  /// the limit counts them afresh.
  @Test func theLimitIsPerAttempt() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hop/2", with: .redirect(to: "/hop/1"))
    engine.respond(to: "/hop/1", with: .redirect(to: "/hop/0"))
    engine.respond(to: "/hop/0", with: .response(status: 503), .response(body: Self.body))
    let fetcher = engine.fetcher("/hop/2")
    fetcher.maximumRedirects = 2
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.data == Self.body)
    #expect(fetcher.timing.retryCount == 1)
    #expect(fetcher.timing.redirectCount == 4)
    #expect(engine.requests.map(\.path) == ["/hop/2", "/hop/1", "/hop/0", "/hop/2", "/hop/1", "/hop/0"])
  }

  @Test func aDownloadPastTheLimitLeavesNoFile() async throws {
    let engine = ScriptedEngine()
    Self.chain(engine, hops: 3)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("out.bin")
    let fetcher = engine.fetcher("/hop/3")
    fetcher.maximumRedirects = 2
    fetcher.destinationFileURL = destination
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    #expect(leftovers.isEmpty)
  }
}
