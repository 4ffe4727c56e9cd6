import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The service's ETag cache against nginx: two fetches of one file, and what the second sent,
/// read from nginx's own log (`If-None-Match`, or none) and what it got. nginx answers a matching
/// `If-None-Match` with 304 and sends `Cache-Control` or `Vary` per folder (`.ci/servers.sh`).
@Suite(
  "Interop: the ETag cache's RFC 9111 rules with nginx", .enabled(if: Interop.isEnabled, Interop.skipMessage))
struct InteropCacheTests {
  /// One row: the folder nginx serves the file from, the first and second request's headers, and
  /// whether the second may revalidate the first's answer (send `If-None-Match`, take the 304 and
  /// be served the cached body).
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var folder: String
    var first: [String: String] = [:]
    var second: [String: String] = [:]
    var revalidates: Bool

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(name: "no credentials: reused", folder: "plain", revalidates: true),
    Row(
      name: "the same credentials: reused", folder: "private", first: ["Authorization": "Bearer user-a"],
      second: ["Authorization": "Bearer user-a"], revalidates: true),
    Row(
      name: "other credentials: not reused (§3.5)", folder: "private",
      first: ["Authorization": "Bearer user-a"],
      second: ["Authorization": "Bearer user-b"], revalidates: false),
    Row(
      name: "credentials, then none: not reused", folder: "plain", first: ["Authorization": "Bearer user-a"],
      revalidates: false),
    Row(
      name: "Cache-Control: public: reused across credentials", folder: "public",
      first: ["Authorization": "Bearer user-a"], second: ["Authorization": "Bearer user-b"], revalidates: true
    ),
    Row(name: "Cache-Control: no-store: never stored", folder: "no-store", revalidates: false),
    Row(
      name: "Vary: Accept-Language, the same language: reused", folder: "vary",
      first: ["Accept-Language": "fr"],
      second: ["Accept-Language": "fr"], revalidates: true),
    Row(
      name: "Vary: Accept-Language, another language: not reused", folder: "vary",
      first: ["Accept-Language": "fr"], second: ["Accept-Language": "de"], revalidates: false),
    Row(name: "Vary: *: never reused", folder: "vary-star", revalidates: false),
    Row(
      name: "a 206 to a Range request: never stored", folder: "plain", first: ["Range": "bytes=0-99"],
      revalidates: false),
    Row(
      name: "request Cache-Control: no-store: neither stores nor uses", folder: "plain",
      first: ["Cache-Control": "no-store"], revalidates: false),
  ]

  @Test(arguments: rows)
  func secondFetch(_ row: Row) async throws {
    let service = FetcherService()
    service.allowedInsecureSchemes = ["http"]
    service.callbackQueue = DispatchQueue(label: "interop.cache")
    service.shouldRememberETags = true
    service.shouldCacheETaggedData = true
    let probe = UUID().uuidString
    let url = Interop.nginx("/cache/\(row.folder)/file.bin?probe=\(probe)")

    func fetch(_ headers: [String: String]) async -> (SessionFetcher, FetchResult) {
      var request = URLRequest(url: url)
      for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
      let fetcher = service.fetcher(request: request)
      return (fetcher, await fetcher.fetchResult())
    }
    let (_, first) = await fetch(row.first)
    #expect(first.error == nil)
    let (second, result) = await fetch(row.second)
    #expect(result.error == nil)
    #expect(second.statusCode == 200)
    #expect(result.data?.count == 2048)

    let logPath = Interop.environment["SESSIONFETCHER_NGINX_CACHE_LOG"]
    let log = logPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
    let lines = log.split(separator: "\n").filter { $0.contains("probe=\(probe) ") }
    #expect(lines.count == 2, "nginx logged \(lines.count) requests for the probe")
    guard let last = lines.last else { return }
    // nginx logs the If-None-Match it received (quotes escaped as \x22); "-" means none.
    if row.revalidates {
      #expect(last.contains(" 304 ") && !last.hasSuffix("\"-\""), "\(last)")
    } else {
      #expect(last.contains(" 200 ") && last.hasSuffix("\"-\""), "\(last)")
    }
  }
}
