import Foundation
import SessionFetcher

/// What the service's ETag cache may store and reuse, by RFC 9111's rules for a cache that one
/// process may use for many users (a server calling APIs for its own clients): pure decisions on a
/// request's and a response's headers, no lock, no I/O.
///
/// - Only a GET without `Range` and without `Cache-Control: no-store` uses the cache; the key
///   begins with the method.
/// - A request with credentials (`Authorization`, as the authorizer left it) keys on a SHA-256
///   digest of them, never the credential itself: its entries serve only the same credentials
///   (§3.5), unless the response said `public`, which any request may reuse.
/// - Only a 200 is stored (never a 206 nor another partial or bodiless status), and never one whose
///   `Cache-Control` says `no-store`; `Vary: *` is never stored, and the request headers other
///   `Vary` names are kept with the entry and must match for it to be used (§4.1).
enum ETagCacheRules {
  /// Where a request looks for and keeps entries.
  struct RequestKey: Equatable, Sendable {
    /// The key for any requester: method and URL.
    var shared: String
    /// The key of this request's credentials, when it has some.
    var personal: String?

    /// The key a response to this request is stored under.
    func storage(isPublic: Bool) -> String { isPublic ? shared : (personal ?? shared) }

    /// The keys to look in, most specific first.
    var lookups: [String] { personal.map { [$0, shared] } ?? [shared] }
  }

  /// The keys of `request`, or nil when it may neither use nor fill the cache.
  static func key(for request: URLRequest) -> RequestKey? {
    let headers = RequestHeaderFields(request)
    guard let url = request.url, (request.httpMethod ?? "GET").uppercased() == "GET",
      headers.value("Range") == nil,
      !directives(headers.value("Cache-Control")).contains("no-store")
    else { return nil }
    let shared = "GET " + url.absoluteString
    guard let credential = headers.value("Authorization"), !credential.isEmpty else {
      return RequestKey(shared: shared, personal: nil)
    }
    return RequestKey(
      shared: shared, personal: shared + " as " + MessageDigest.sha256Hex(Array(credential.utf8)))
  }

  /// What a response allows: nil when it must not be stored, else whether any requester may reuse
  /// it and the request headers its `Vary` names (lowercased).
  static func storage(status: Int, responseHeaders: (String) -> String?) -> (isPublic: Bool, vary: [String])?
  {
    guard status == 200 else { return nil }
    let cacheControl = directives(responseHeaders("Cache-Control"))
    guard !cacheControl.contains("no-store") else { return nil }
    let vary = (responseHeaders("Vary") ?? "").split(separator: ",")
      .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    guard !vary.contains("*") else { return nil }
    return (cacheControl.contains("public"), vary)
  }

  /// The values of `names` in `request` (absent: nil), as an entry keeps them.
  static func varyValues(_ names: [String], in request: URLRequest) -> [String: String?] {
    var values: [String: String?] = [:]
    for name in names {
      values[name] = .some(request.value(forHTTPHeaderField: name))
    }
    return values
  }

  /// Whether `request` presents the header values an entry was stored with.
  static func matches(_ stored: [String: String?], _ request: URLRequest) -> Bool {
    stored.allSatisfy { name, value in request.value(forHTTPHeaderField: name) == value }
  }

  /// The directive names of a `Cache-Control` value, lowercased (arguments dropped).
  static func directives(_ value: String?) -> Set<String> {
    guard let value else { return [] }
    return Set(
      value.split(separator: ",").map {
        String($0.split(separator: "=", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
          .lowercased()
      })
  }
}
