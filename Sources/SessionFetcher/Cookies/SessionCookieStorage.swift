import Foundation

/// An in-memory cookie jar that follows RFC 6265, used by fetchers instead of `HTTPCookieStorage`.
///
/// FoundationNetworking's `HTTPCookieStorage` cannot be used on Linux: its initializer is private,
/// the shared store persists to disk, `Max-Age` is not converted to an expiry, and repeated
/// Set-Cookie headers reach it joined with ", ". This jar parses with ``SetCookieParser``, keeps
/// everything in memory, and is safe to use from any thread.
///
/// ```swift
/// let jar = SessionCookieStorage()
/// jar.handleResponse(response, for: response.url!)          // store what Set-Cookie says
/// if let header = jar.cookieHeaderValue(for: nextURL) {     // "a=1; b=2"
///   request.setValue(header, forHTTPHeaderField: "Cookie")
/// }
/// ```
///
/// Rules:
/// - A cookie is identified by name, domain and path; storing one replaces the cookie with the same
///   three, keeping the replaced cookie's ``SessionCookie/creationDate``. Storing an expired cookie
///   deletes the matching one. Expired cookies are purged whenever the jar is read.
/// - Cookies are sent per RFC 6265 §5.4: host-only cookies to their host only, domain cookies to
///   the domain and its subdomains, on matching paths; ports are ignored, so a cookie set by
///   `http://127.0.0.1:8080` is sent to `http://127.0.0.1:9090`. Secure cookies are sent over https
///   only — not even to `http://localhost`, since nothing proves a loopback port is the intended
///   server.
/// - The jar is bounded: at most ``maximumCookiesPerSite`` cookies per site (the registrable domain
///   of the cookie's domain under the Public Suffix List, so `a.example.com` and `b.example.com`
///   are one site, `a.github.io` and `b.github.io` two) and ``maximumCookieCount`` in all. Past
///   either bound, expired cookies go first, then the least recently stored or sent. The bounds
///   are applied after each call, so the cookies of one response cost time in proportion to their
///   number, not its square.
///
/// Thread safety: an `NSLock` protects all mutable state, hence `@unchecked Sendable`.
public final class SessionCookieStorage: @unchecked Sendable {
  /// Which cookies a storage accepts from responses.
  public enum AcceptPolicy: Sendable {
    /// Accept every valid cookie.
    case always
    /// Accept none; ``SessionCookieStorage/setCookie(_:)`` is ignored too.
    case never
    /// Accept only cookies whose site (see the size bounds above) is that of the main document URL
    /// passed to ``SessionCookieStorage/handleResponse(_:for:mainDocumentURL:)``, or of the
    /// response URL when none is passed. Cookies set in code are accepted.
    case onlyFromMainDocumentDomain
  }

  /// The process-wide jar, used by fetchers created outside a fetcher service.
  public static let shared = SessionCookieStorage()

  private struct Key: Hashable {
    var name: String
    var domain: String
    var path: String
  }

  private struct Entry {
    var cookie: SessionCookie
    /// The registrable domain of the cookie's domain (see the size bounds above).
    var site: String
    /// Order of first storage: ties between equal creation dates keep insertion order.
    var insertionOrder: UInt64
    /// Bumped whenever the cookie is stored or sent; the lowest is evicted first.
    var lastUse: UInt64
  }

  private let lock = NSLock()
  private let now: @Sendable () -> Date
  private let publicSuffixes: PublicSuffixList
  // All of the following are protected by `lock`.
  private var entries: [Key: Entry] = [:]
  private var countsBySite: [String: Int] = [:]
  /// The keys of the Secure cookies by name: the only ones "leave secure cookies alone" looks at.
  private var secureKeysByName: [String: Set<Key>] = [:]
  /// No cookie expires before this date, so reading the jar purges nothing until then.
  private var earliestExpiry = Date.distantFuture
  private var useCounter: UInt64 = 0
  private var _acceptPolicy: AcceptPolicy = .always
  private var _maximumCookieCount = 3000
  private var _maximumCookiesPerSite = 180

  /// Creates an empty jar that accepts all cookies.
  public convenience init() {
    self.init(now: { Date() })
  }

  /// Creates an empty jar with a custom clock and public suffix list (for tests).
  init(now: @escaping @Sendable () -> Date, publicSuffixes: PublicSuffixList = .current) {
    self.now = now
    self.publicSuffixes = publicSuffixes
  }

  /// Which cookies the jar accepts; ``AcceptPolicy/always`` by default.
  public var acceptPolicy: AcceptPolicy {
    get { withLock { _acceptPolicy } }
    set { withLock { _acceptPolicy = newValue } }
  }

  /// The most cookies the jar holds (default 3000). Lowering it evicts at the next store.
  public var maximumCookieCount: Int {
    get { withLock { _maximumCookieCount } }
    set { withLock { _maximumCookieCount = max(1, newValue) } }
  }

  /// The most cookies the jar holds for one site (default 180), so that one server cannot push out
  /// the cookies of all others.
  public var maximumCookiesPerSite: Int {
    get { withLock { _maximumCookiesPerSite } }
    set { withLock { _maximumCookiesPerSite = max(1, newValue) } }
  }

  /// All unexpired cookies, sorted by domain, then path, then name.
  public var cookies: [SessionCookie] {
    withLock {
      purgeExpired()
      return entries.values.map(\.cookie).sorted {
        ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name)
      }
    }
  }

  /// Stores a cookie, replacing the one with the same name, domain and path (whose creation date is
  /// kept). An expired cookie deletes the matching one instead. Ignored under the
  /// ``AcceptPolicy/never`` policy, and for a cookie with an empty domain, a path not starting with
  /// "/", neither name nor value, or a control character (CR, LF, NUL…) in its name or value.
  public func setCookie(_ cookie: SessionCookie) {
    withLock {
      guard _acceptPolicy != .never else { return }
      var touchedSites: Set<String> = []
      store(cookie, touchedSites: &touchedSites)
      enforceBounds(sites: touchedSites)
    }
  }

  /// Stores several cookies, as ``setCookie(_:)`` does for each, after purging expired ones.
  public func setCookies(_ cookies: [SessionCookie]) {
    withLock {
      purgeExpired()
      guard _acceptPolicy != .never else { return }
      var touchedSites: Set<String> = []
      for cookie in cookies {
        store(cookie, touchedSites: &touchedSites)
      }
      enforceBounds(sites: touchedSites)
    }
  }

  /// Stores the cookies of a response's Set-Cookie headers.
  ///
  /// Reads every header whose name is `Set-Cookie` in any case from `allHeaderFields`, splits
  /// values that Foundation joined with ", " (see ``SetCookieParser/splitJoinedHeader(_:)``), and
  /// passes them to ``handleSetCookieHeaders(_:for:mainDocumentURL:)``.
  ///
  /// - Parameters:
  ///   - response: The response, one of possibly several in a redirect chain.
  ///   - url: The URL that was requested for this response; it decides which cookies it may set.
  ///   - mainDocumentURL: For ``AcceptPolicy/onlyFromMainDocumentDomain``: the URL of the document
  ///     the request belongs to; `url` when nil.
  public func handleResponse(_ response: HTTPURLResponse, for url: URL, mainDocumentURL: URL? = nil) {
    // Most responses set no cookie: a case-insensitive lookup answers that without building
    // `allHeaderFields` (a bridged dictionary, costly on Linux).
    guard response.value(forHTTPHeaderField: "Set-Cookie") != nil else { return }
    var values: [String] = []
    for (key, value) in response.allHeaderFields {
      guard let name = key.base as? String, Self.isSetCookieHeaderName(name) else { continue }
      guard let joined = value as? String else { continue }
      values += SetCookieParser.splitJoinedHeader(joined)
    }
    handleSetCookieHeaders(values, for: url, mainDocumentURL: mainDocumentURL)
  }

  /// Whether a header name is `Set-Cookie`, ASCII case-insensitively. Runs for every header of every
  /// response, so it compares bytes instead of calling Foundation's `caseInsensitiveCompare`
  /// (which cost more than the rest of a cookie-less response's handling).
  static func isSetCookieHeaderName(_ name: String) -> Bool {
    name.equalsIgnoringASCIICase("Set-Cookie")
  }

  /// Parses and stores Set-Cookie header values received from `url`; values that do not parse, or
  /// that `url` may not set, are skipped without affecting the others.
  ///
  /// Besides the checks of ``SetCookieParser/parse(_:from:now:)``, a response that is not over https
  /// cannot overwrite a Secure cookie (RFC 6265bis §5.7, "leave secure cookies alone").
  ///
  /// - Parameters:
  ///   - values: Single Set-Cookie values (not joined ones).
  ///   - url: The URL that was requested.
  ///   - mainDocumentURL: See ``handleResponse(_:for:mainDocumentURL:)``.
  public func handleSetCookieHeaders(_ values: [String], for url: URL, mainDocumentURL: URL? = nil) {
    guard !values.isEmpty else { return }
    let date = now()
    let parsed = values.compactMap {
      SetCookieParser.parse($0, from: url, now: date, publicSuffixes: publicSuffixes)
    }
    guard !parsed.isEmpty else { return }
    let isSecureOrigin = url.scheme?.lowercased() == "https"
    let requestPath = CookieRules.requestPath(of: url)
    let documentSite = CookieRules.canonicalHost(of: mainDocumentURL ?? url).map {
      CookieRules.registrableDomain(of: $0, in: publicSuffixes)
    }
    withLock {
      switch _acceptPolicy {
      case .never:
        return
      case .always, .onlyFromMainDocumentDomain:
        break
      }
      var touchedSites: Set<String> = []
      for cookie in parsed {
        if _acceptPolicy == .onlyFromMainDocumentDomain,
          CookieRules.registrableDomain(of: cookie.domain, in: publicSuffixes) != documentSite
        {
          continue
        }
        if !isSecureOrigin, !cookie.isSecure,
          shadowsSecureCookie(cookie, requestPath: requestPath)
        {
          continue
        }
        store(cookie, touchedSites: &touchedSites)
      }
      enforceBounds(sites: touchedSites)
    }
  }

  /// The unexpired cookies to send with a request to `url` (RFC 6265 §5.4), longest path first,
  /// then earliest created; empty when none match.
  public func cookies(for url: URL) -> [SessionCookie] {
    // An empty jar (most API clients') answers before the URL is taken apart.
    guard !withLock({ entries.isEmpty }), let request = CookieRequest(url) else { return [] }
    return withLock {
      purgeExpired()
      var matching = entries.filter { $0.value.cookie.matches(request) }
      for key in matching.keys {
        useCounter += 1
        entries[key]?.lastUse = useCounter
        matching[key]?.lastUse = useCounter
      }
      return matching.values.sorted(by: Self.sendOrder).map(\.cookie)
    }
  }

  /// The `Cookie` request header value for `url` ("a=1; b=2"), or nil when no cookie matches.
  /// A cookie with an empty name is sent as its value alone (RFC 6265bis).
  public func cookieHeaderValue(for url: URL) -> String? {
    let matching = cookies(for: url)
    guard !matching.isEmpty else { return nil }
    return matching.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }
      .joined(separator: "; ")
  }

  /// Removes the cookie with the same name, domain and path as `cookie`, if any.
  public func deleteCookie(_ cookie: SessionCookie) {
    withLock {
      remove(Self.key(of: cookie))
    }
  }

  /// Removes every cookie.
  public func removeAllCookies() {
    withLock {
      entries.removeAll()
      countsBySite.removeAll()
      secureKeysByName.removeAll()
      earliestExpiry = .distantFuture
    }
  }

  /// Removes the cookies created at or after `date`.
  public func removeCookies(since date: Date) {
    withLock {
      for (key, entry) in entries where entry.cookie.creationDate >= date {
        remove(key)
      }
    }
  }

  // MARK: - Private (call with the lock held)

  private func withLock<T>(_ body: () throws -> T) rethrows -> T {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }

  private static func key(of cookie: SessionCookie) -> Key {
    Key(name: cookie.name, domain: CookieRules.canonicalDomain(cookie.domain), path: cookie.path)
  }

  private static func sendOrder(_ lhs: Entry, _ rhs: Entry) -> Bool {
    let lhsPathLength = lhs.cookie.path.utf8.count
    let rhsPathLength = rhs.cookie.path.utf8.count
    if lhsPathLength != rhsPathLength { return lhsPathLength > rhsPathLength }
    if lhs.cookie.creationDate != rhs.cookie.creationDate {
      return lhs.cookie.creationDate < rhs.cookie.creationDate
    }
    return lhs.insertionOrder < rhs.insertionOrder
  }

  /// Stores or deletes one cookie without applying the size bounds; adds the site of a newly
  /// stored cookie to `touchedSites`, for ``enforceBounds(sites:)`` once the caller is done.
  private func store(_ newCookie: SessionCookie, touchedSites: inout Set<String>) {
    var cookie = newCookie
    cookie.domain = CookieRules.canonicalDomain(cookie.domain)
    // A control character (CR, LF, NUL…) in a cookie made in code would reach the Cookie header.
    guard !cookie.domain.isEmpty, cookie.path.utf8.first == UInt8(ascii: "/"),
      !(cookie.name.isEmpty && cookie.value.isEmpty),
      RequestValidation.isValidHeaderValue(cookie.name), RequestValidation.isValidHeaderValue(cookie.value)
    else { return }

    let key = Self.key(of: cookie)
    if cookie.isExpired(at: now()) {
      remove(key)
      return
    }
    useCounter += 1
    if let expiry = cookie.expiresDate, expiry < earliestExpiry {
      earliestExpiry = expiry
    }
    if cookie.isSecure {
      secureKeysByName[key.name, default: []].insert(key)
    }
    if let existing = entries[key] {
      if existing.cookie.isSecure, !cookie.isSecure {
        forgetSecureKey(key)
      }
      cookie.creationDate = existing.cookie.creationDate
      entries[key] = Entry(
        cookie: cookie, site: existing.site, insertionOrder: existing.insertionOrder, lastUse: useCounter)
      return
    }
    let site = CookieRules.registrableDomain(of: key.domain, in: publicSuffixes)
    entries[key] = Entry(cookie: cookie, site: site, insertionOrder: useCounter, lastUse: useCounter)
    countsBySite[site, default: 0] += 1
    touchedSites.insert(site)
  }

  private func remove(_ key: Key) {
    guard let entry = entries.removeValue(forKey: key) else { return }
    countsBySite[entry.site, default: 1] -= 1
    if countsBySite[entry.site] == 0 {
      countsBySite[entry.site] = nil
    }
    if entry.cookie.isSecure {
      forgetSecureKey(key)
    }
  }

  private func forgetSecureKey(_ key: Key) {
    secureKeysByName[key.name]?.remove(key)
    if secureKeysByName[key.name]?.isEmpty == true {
      secureKeysByName[key.name] = nil
    }
  }

  /// Removes the expired cookies; a no-op (no pass over the jar) until the earliest expiry.
  private func purgeExpired() {
    let date = now()
    guard earliestExpiry <= date else { return }
    var nextExpiry = Date.distantFuture
    for (key, entry) in entries {
      guard let expiry = entry.cookie.expiresDate else { continue }
      if expiry <= date {
        remove(key)
      } else if expiry < nextExpiry {
        nextExpiry = expiry
      }
    }
    earliestExpiry = nextExpiry
  }

  /// Applies the per-site bound to `sites` (the sites that gained cookies) and the total bound:
  /// one pass over the jar per site over its bound, however many cookies were stored.
  private func enforceBounds(sites: Set<String>) {
    let oversizedSites = sites.filter { countsBySite[$0, default: 0] > _maximumCookiesPerSite }
    if !oversizedSites.isEmpty || entries.count > _maximumCookieCount {
      purgeExpired()
    }
    for site in oversizedSites {
      let excess = countsBySite[site, default: 0] - _maximumCookiesPerSite
      guard excess > 0 else { continue }
      evictLeastRecentlyUsed(from: entries.filter { $0.value.site == site }, count: excess)
    }
    if entries.count > _maximumCookieCount {
      evictLeastRecentlyUsed(from: entries, count: entries.count - _maximumCookieCount)
    }
  }

  private func evictLeastRecentlyUsed(from candidates: [Key: Entry], count: Int) {
    if count == 1, let victim = candidates.min(by: { $0.value.lastUse < $1.value.lastUse }) {
      remove(victim.key)
      return
    }
    guard count > 0 else { return }
    let victims = candidates.sorted { $0.value.lastUse < $1.value.lastUse }.prefix(count)
    for (key, _) in victims {
      remove(key)
    }
  }

  /// "Leave secure cookies alone": whether a non-secure `cookie` from a non-secure origin would
  /// overwrite or shadow a stored Secure cookie of the same name.
  private func shadowsSecureCookie(_ cookie: SessionCookie, requestPath: String) -> Bool {
    guard let secureKeys = secureKeysByName[cookie.name] else { return false }
    return secureKeys.contains { key in
      guard let existing = entries[key]?.cookie else { return false }
      return existing.isSecure
        && (CookieRules.domainMatches(host: existing.domain, domain: cookie.domain)
          || CookieRules.domainMatches(host: cookie.domain, domain: existing.domain))
        && CookieRules.pathMatches(requestPath: requestPath, cookiePath: existing.path)
    }
  }
}
