import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The cases of the public HTTP cache conformance suite (http-tests/cache-tests) that apply to the
/// service's ETag cache, by their ids: a cache private to one process that may fetch for many
/// users, which stores 200 answers with an `ETag` and revalidates every reuse with `If-None-Match`
/// (so the suite's freshness, `Age`, `Expires`, heuristic, stale and `only-if-cached` cases do not
/// apply: nothing is served without asking the server). "Reused" here: the second request carries
/// the stored tag.
@Suite("HTTP cache conformance cases (cache-tests) on the ETag cache")
struct ScriptedCacheTestsConformanceTests {
  struct Row: Sendable, CustomTestStringConvertible {
    /// The cache-tests id.
    var id: String
    /// The first request's headers.
    var stored: [String: String] = [:]
    /// The first answer's headers besides its `ETag`.
    var response: [String: String] = [:]
    /// The second request's headers.
    var presented: [String: String] = [:]
    var reused: Bool

    var testDescription: String { id }
  }

  static let rows: [Row] = [
    // vary.mjs
    Row(
      id: "vary-match", stored: ["Foo": "1"], response: ["Vary": "Foo"], presented: ["Foo": "1"], reused: true
    ),
    Row(
      id: "vary-no-match", stored: ["Foo": "1"], response: ["Vary": "Foo"], presented: ["Foo": "2"],
      reused: false),
    Row(id: "vary-omit-stored", response: ["Vary": "Foo"], presented: ["Foo": "1"], reused: false),
    Row(id: "vary-omit", stored: ["Foo": "1"], response: ["Vary": "Foo"], reused: false),
    Row(
      id: "vary-cache-key", stored: ["Foo": "1", "Other": "a"], response: ["Vary": "Foo"],
      presented: ["Foo": "1", "Other": "b"], reused: true),
    Row(
      id: "vary-2-match", stored: ["Foo": "1", "Bar": "abc"], response: ["Vary": "Foo, Bar"],
      presented: ["Foo": "1", "Bar": "abc"], reused: true),
    Row(
      id: "vary-2-no-match", stored: ["Foo": "1", "Bar": "abc"], response: ["Vary": "Foo, Bar"],
      presented: ["Foo": "2", "Bar": "abc"], reused: false),
    Row(
      id: "vary-2-match-omit", stored: ["Foo": "1", "Bar": "abc"], response: ["Vary": "Foo, Bar"],
      presented: ["Foo": "1"], reused: false),
    Row(
      id: "vary-3-match", stored: ["Foo": "1", "Bar": "abc", "Baz": "789"],
      response: ["Vary": "Foo, Bar, Baz"],
      presented: ["Foo": "1", "Bar": "abc", "Baz": "789"], reused: true),
    Row(
      id: "vary-3-no-match", stored: ["Foo": "1", "Bar": "abc", "Baz": "789"],
      response: ["Vary": "Foo, Bar, Baz"], presented: ["Foo": "2", "Bar": "abc", "Baz": "789"], reused: false),
    Row(
      id: "vary-3-order", stored: ["Foo": "1", "Bar": "abc", "Baz": "789"],
      response: ["Vary": "Foo, Bar, Baz"],
      presented: ["Foo": "1", "Baz": "789", "Bar": "abcde"], reused: false),
    Row(
      id: "vary-3-omit", stored: ["Foo": "1", "Baz": "789"], response: ["Vary": "Foo, Bar, Baz"],
      presented: ["Foo": "1", "Baz": "789"], reused: true),
    Row(id: "vary-star", response: ["Vary": "*"], reused: false),
    // vary-parse.mjs (several header lines arrive joined with ", ")
    Row(id: "vary-syntax-star-star", response: ["Vary": "*, *"], reused: false),
    Row(id: "vary-syntax-empty-star", response: ["Vary": ", *"], reused: false),
    Row(id: "vary-syntax-star-foo", response: ["Vary": "*, Foo"], reused: false),
    Row(id: "vary-syntax-foo-star", response: ["Vary": "Foo, *"], reused: false),
    // cc-response.mjs
    Row(id: "cc-resp-no-store", response: ["Cache-Control": "no-store"], reused: false),
    Row(id: "cc-resp-no-store-case-insensitive", response: ["Cache-Control": "nO-StOrE"], reused: false),
    Row(id: "cc-resp-no-store-fresh", response: ["Cache-Control": "max-age=10000, no-store"], reused: false),
    Row(id: "cc-resp-private-private", response: ["Cache-Control": "private, max-age=3600"], reused: true),
    Row(id: "cc-resp-no-cache-revalidate", response: ["Cache-Control": "no-cache"], reused: true),
    // cc-request.mjs
    Row(id: "ccreq-no-store", presented: ["Cache-Control": "no-store"], reused: false),
    Row(id: "ccreq-no-cache-etag", presented: ["Cache-Control": "no-cache"], reused: true),
    // authorization.mjs: a shared cache (this one, across the users of one service)
    Row(
      id: "other-authorization", stored: ["Authorization": "FOO"],
      response: ["Cache-Control": "max-age=3600"],
      presented: ["Authorization": "BAR"], reused: false),
    Row(
      id: "other-authorization-public", stored: ["Authorization": "FOO"],
      response: ["Cache-Control": "public, max-age=3600"], presented: ["Authorization": "BAR"], reused: true),
    // The same user's own answers stay reusable (the common authenticated API with ETags).
    Row(
      id: "other-authorization (the same credentials)", stored: ["Authorization": "FOO"],
      response: ["Cache-Control": "max-age=3600"], presented: ["Authorization": "FOO"], reused: true),
    // partial.mjs: never stored (the suite's "optimal" partial cases are not taken on purpose)
    Row(
      id: "partial-store-partial-reuse-partial (not stored)", stored: ["Range": "bytes=0-4"], reused: false),
  ]

  @Test(arguments: rows)
  func secondRequest(_ row: Row) async {
    let engine = ScriptedEngine()
    let first = ScriptedExchange.response(
      status: row.stored["Range"] == nil ? 200 : 206,
      headers: row.response.merging(["ETag": "\"abc\""]) { $1 }, body: Data("01234".utf8))
    engine.respond(
      to: "/items", with: first, .response(headers: ["ETag": "\"abc\""], body: Data("01234".utf8)))
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.cache-tests")
    service.shouldRememberETags = true
    service.shouldCacheETaggedData = true
    service.run(on: engine)
    for headers in [row.stored, row.presented] {
      var request = URLRequest(url: engine.url("/items"))
      for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
      #expect(await service.fetcher(request: request).fetchResult().error == nil)
    }
    #expect(engine.requests.count == 2)
    let tag = engine.requests.last?.headers.first { $0.key.lowercased() == "if-none-match" }?.value
    #expect((tag == "\"abc\"") == row.reused, "If-None-Match: \(tag ?? "none")")
  }
}
