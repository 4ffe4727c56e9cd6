import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import FetcherService

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The ETag cache's storage and reuse rules (RFC 9111), first as pure decisions, then on the
/// scripted engine: what one service may store and reuse when it fetches for many users.
@Suite("The ETag cache's rules")
struct ScriptedETagRulesTests {
  static func request(_ headers: [String: String] = [:], method: String = "GET") -> URLRequest {
    var request = URLRequest(url: URL(string: "https://api.example/items")!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return request
  }

  struct KeyRow: Sendable, CustomTestStringConvertible {
    var name: String
    var method = "GET"
    var headers: [String: String] = [:]
    /// nil: the request neither uses nor fills the cache.
    var usesCache: Bool
    var personal = false
    var testDescription: String { name }
  }

  static let keyRows: [KeyRow] = [
    KeyRow(name: "a plain GET", usesCache: true),
    KeyRow(name: "a HEAD", method: "HEAD", usesCache: false),
    KeyRow(name: "a POST", method: "POST", usesCache: false),
    KeyRow(name: "a Range request", headers: ["Range": "bytes=0-9"], usesCache: false),
    KeyRow(
      name: "no-store in the request", headers: ["Cache-Control": "max-age=0, No-Store"], usesCache: false),
    KeyRow(name: "credentials", headers: ["Authorization": "Bearer alice"], usesCache: true, personal: true),
  ]

  @Test(arguments: keyRows)
  func whichRequestsUseTheCache(_ row: KeyRow) {
    let key = ETagCacheRules.key(for: Self.request(row.headers, method: row.method))
    #expect((key != nil) == row.usesCache)
    #expect((key?.personal != nil) == row.personal)
    if let personal = key?.personal {
      // The credential is digested, never kept.
      #expect(!personal.contains("alice"))
      #expect(key?.lookups == [personal, "GET https://api.example/items"])
    }
  }

  struct StoreRow: Sendable, CustomTestStringConvertible {
    var name: String
    var status = 200
    var headers: [String: String] = [:]
    var stored: Bool
    var isPublic = false
    var vary: [String] = []
    var testDescription: String { name }
  }

  static let storeRows: [StoreRow] = [
    StoreRow(name: "a 200", stored: true),
    StoreRow(name: "a 206", status: 206, stored: false),
    StoreRow(name: "a 203", status: 203, stored: false),
    StoreRow(name: "no-store", headers: ["Cache-Control": "private, no-store"], stored: false),
    StoreRow(name: "public", headers: ["Cache-Control": "public, max-age=60"], stored: true, isPublic: true),
    StoreRow(name: "Vary: *", headers: ["Vary": "Accept, *"], stored: false),
    StoreRow(
      name: "Vary names", headers: ["Vary": "Accept-Language, Authorization"], stored: true,
      vary: ["accept-language", "authorization"]),
  ]

  @Test(arguments: storeRows)
  func whichResponsesAreStored(_ row: StoreRow) {
    let lowered = Dictionary(uniqueKeysWithValues: row.headers.map { ($0.key.lowercased(), $0.value) })
    let rules = ETagCacheRules.storage(status: row.status) { lowered[$0.lowercased()] }
    #expect((rules != nil) == row.stored)
    #expect(rules?.isPublic ?? false == row.isPublic)
    #expect(rules?.vary ?? [] == row.vary)
  }

  // MARK: - On the scripted engine

  static func service(_ engine: ScriptedEngine) -> FetcherService {
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.etag.rules")
    service.shouldRememberETags = true
    service.shouldCacheETaggedData = true
    service.run(on: engine)
    return service
  }

  static func fetch(_ service: FetcherService, _ engine: ScriptedEngine, headers: [String: String] = [:])
    async
    -> FetchResult
  {
    let fetcher = service.fetcher(url: engine.url("/items"))
    for (name, value) in headers { fetcher.request?.setValue(value, forHTTPHeaderField: name) }
    return await fetcher.fetchResult()
  }

  static let notModified = ScriptedExchange.response(status: 304, headers: ["ETag": "\"v1\""])

  /// One user's private response is never another's: a request without the credentials sends no
  /// tag (and so gets its own body); the same credentials keep their 304.
  @Test func aResponseFetchedWithCredentialsServesOnlyThem() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/items",
      with: .response(
        headers: ["ETag": "\"v1\"", "Cache-Control": "private", "Vary": "Authorization"],
        body: Data("alice's".utf8)),
      .response(headers: ["ETag": "\"v2\""], body: Data("public".utf8)), Self.notModified)
    let service = Self.service(engine)
    #expect(
      await Self.fetch(service, engine, headers: ["Authorization": "Bearer alice"]).data
        == Data("alice's".utf8))
    let anonymous = await Self.fetch(service, engine)
    #expect(anonymous.data == Data("public".utf8))
    #expect(engine.requests[1].header("If-None-Match") == nil)
    let again = await Self.fetch(service, engine, headers: ["Authorization": "Bearer alice"])
    #expect(engine.requests[2].header("If-None-Match") == "\"v1\"")
    #expect(again.data == Data("alice's".utf8))
  }

  /// A `public` response fetched with credentials may serve any requester.
  @Test func aPublicResponseServesAnyone() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/items",
      with: .response(headers: ["ETag": "\"v1\"", "Cache-Control": "public"], body: Data("shared".utf8)),
      Self.notModified)
    let service = Self.service(engine)
    _ = await Self.fetch(service, engine, headers: ["Authorization": "Bearer alice"])
    let other = await Self.fetch(service, engine, headers: ["Authorization": "Bearer bob"])
    #expect(engine.requests[1].header("If-None-Match") == "\"v1\"")
    #expect(other.data == Data("shared".utf8))
  }

  /// `Vary` names request headers that must match; `Vary: *` and `no-store` are never stored; a
  /// 206 is never stored.
  @Test(
    arguments: [
      (["ETag": "\"v1\"", "Vary": "Accept-Language"], false),
      (["ETag": "\"v1\"", "Vary": "*"], false),
      (["ETag": "\"v1\"", "Cache-Control": "no-store"], false),
      (["ETag": "\"v1\"", "Vary": "Accept-Language"], true),
    ] as [([String: String], Bool)])
  func storedOnlyWhereItMayBeReused(headers: [String: String], sameLanguage: Bool) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(headers: headers, body: Data("en".utf8)), Self.notModified)
    let service = Self.service(engine)
    _ = await Self.fetch(service, engine, headers: ["Accept-Language": "en"])
    let second = await Self.fetch(service, engine, headers: ["Accept-Language": sameLanguage ? "en" : "de"])
    let reusable = sameLanguage && headers["Vary"] != "*" && headers["Cache-Control"] == nil
    #expect(engine.requests[1].header("If-None-Match") == (reusable ? "\"v1\"" : nil), "\(headers)")
    if reusable { #expect(second.data == Data("en".utf8)) }
  }

  @Test func aPartialResponseIsNeverStored() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/items",
      with: .response(
        status: 206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 0-3/10"], body: Data("part".utf8)),
      .response(headers: ["ETag": "\"v1\""], body: Data("the whole".utf8)))
    let service = Self.service(engine)
    _ = await Self.fetch(service, engine, headers: ["Range": "bytes=0-3"])
    let whole = await Self.fetch(service, engine)
    #expect(engine.requests[1].header("If-None-Match") == nil)
    #expect(whole.data == Data("the whole".utf8))
    #expect(whole.error == nil)
  }
}
