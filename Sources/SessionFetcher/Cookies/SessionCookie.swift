import Foundation

/// One HTTP cookie, as stored in a ``SessionCookieStorage``.
///
/// A value type that carries the RFC 6265 storage model: besides name and value, the cookie's
/// `domain` (stored lowercased, without a leading dot), whether it is host-only (sent only to
/// exactly that host) or a domain cookie (sent to the domain and all its subdomains), its path,
/// expiry and flags.
///
/// ```swift
/// let cookie = SessionCookie(name: "session", value: "abc123", domain: "api.example.com",
///                            isSecure: true, isHostOnly: true)
/// SessionCookieStorage.shared.setCookie(cookie)
/// ```
///
/// Cookies received from servers are made by ``SetCookieParser/parse(_:from:now:)``.
public struct SessionCookie: Sendable, Hashable {
  /// The cookie's name. May be empty when the value is not (RFC 6265bis).
  public var name: String
  /// The cookie's value, exactly as the server sent it (surrounding quotes are kept).
  public var value: String
  /// The domain the cookie belongs to: lowercased, without a leading dot.
  public var domain: String
  /// The path the cookie is scoped to; it is sent to this path and the paths below it.
  public var path: String
  /// When the cookie expires; nil for a session cookie, which lives as long as its storage.
  public var expiresDate: Date?
  /// Whether the cookie is sent only over https.
  public var isSecure: Bool
  /// Whether the server marked the cookie HttpOnly (hidden from scripts). An HTTP client sends it
  /// like any other cookie.
  public var isHTTPOnly: Bool
  /// Whether the cookie is sent only to the host equal to ``domain`` (the server sent no Domain
  /// attribute), rather than also to its subdomains.
  public var isHostOnly: Bool
  /// The SameSite attribute ("Strict", "Lax" or "None"), if the server sent a valid one. Recorded
  /// for interoperability; a fetcher has no notion of a first-party site, so it does not filter.
  public var sameSite: String?
  /// When the cookie was first stored. Replacing a cookie keeps the date of the one it replaces.
  public var creationDate: Date

  /// Creates a cookie.
  ///
  /// - Parameters:
  ///   - name: The name; may be empty only if `value` is not.
  ///   - value: The value, stored as given.
  ///   - domain: The domain. It is lowercased and a leading dot is removed; a leading dot also
  ///     makes the cookie a domain cookie whatever `isHostOnly` says, as in `HTTPCookie`.
  ///   - path: The path; "/" by default.
  ///   - expiresDate: The expiry; nil (the default) for a session cookie.
  ///   - isSecure: Send only over https. Default false.
  ///   - isHTTPOnly: The HttpOnly flag. Default false.
  ///   - isHostOnly: Send only to the host equal to `domain`. Default false: the cookie is also
  ///     sent to subdomains of `domain`, which is how cookies made in code behaved in
  ///     GTMSessionFetcher.
  ///   - sameSite: The SameSite attribute. Default nil.
  ///   - creationDate: The creation date; now by default.
  public init(
    name: String,
    value: String,
    domain: String,
    path: String = "/",
    expiresDate: Date? = nil,
    isSecure: Bool = false,
    isHTTPOnly: Bool = false,
    isHostOnly: Bool = false,
    sameSite: String? = nil,
    creationDate: Date = Date()
  ) {
    self.name = name
    self.value = value
    self.domain = CookieRules.canonicalDomain(domain)
    self.path = path
    self.expiresDate = expiresDate
    self.isSecure = isSecure
    self.isHTTPOnly = isHTTPOnly
    self.isHostOnly = isHostOnly && domain.utf8.first != UInt8(ascii: ".")
    self.sameSite = sameSite
    self.creationDate = creationDate
  }

  /// True for a cookie without an expiry date, which lives only as long as its storage.
  public var isSessionCookie: Bool { expiresDate == nil }

  /// Whether the cookie has expired at `date` (its expiry is at or before `date`).
  public func isExpired(at date: Date = Date()) -> Bool {
    guard let expiresDate else { return false }
    return expiresDate <= date
  }

  /// Whether the cookie would be sent with a request to `url`, ignoring expiry: the host
  /// domain-matches (or equals, for a host-only cookie), the path matches, and a Secure cookie
  /// needs https. Ports are ignored, as RFC 6265 says.
  public func matches(_ url: URL) -> Bool {
    guard let request = CookieRequest(url) else { return false }
    return matches(request)
  }

  /// ``matches(_:)`` with the URL's parts already extracted, for matching many cookies.
  func matches(_ request: CookieRequest) -> Bool {
    let cookieDomain = CookieRules.canonicalDomain(domain)
    if isHostOnly {
      guard request.host == cookieDomain else { return false }
    } else {
      guard CookieRules.domainMatches(host: request.host, domain: cookieDomain) else { return false }
    }
    if isSecure, !request.isSecure { return false }
    return CookieRules.pathMatches(requestPath: request.path, cookiePath: path)
  }
}

// MARK: - HTTPCookie interoperability

extension SessionCookie {
  /// Creates a cookie from a Foundation `HTTPCookie`.
  ///
  /// A domain with a leading dot becomes a domain cookie, one without becomes host-only (that is
  /// how `HTTPCookie` records the presence of a Domain attribute). Returns nil for a cookie without
  /// a domain, or with neither a name nor a value.
  public init?(_ cookie: HTTPCookie) {
    guard !cookie.domain.isEmpty, !(cookie.name.isEmpty && cookie.value.isEmpty) else { return nil }
    let properties = cookie.properties ?? [:]
    let created = (properties[HTTPCookiePropertyKey("Created")] as? Double).map {
      Date(timeIntervalSinceReferenceDate: $0)
    }
    self.init(
      name: cookie.name,
      value: cookie.value,
      domain: cookie.domain,
      path: cookie.path.isEmpty ? "/" : cookie.path,
      expiresDate: cookie.expiresDate,
      isSecure: cookie.isSecure,
      isHTTPOnly: cookie.isHTTPOnly,
      isHostOnly: cookie.domain.utf8.first != UInt8(ascii: "."),
      sameSite: properties[HTTPCookiePropertyKey("SameSite")] as? String,
      creationDate: created ?? Date())
  }

  /// The cookie as a Foundation `HTTPCookie`, for APIs that need one.
  ///
  /// A domain cookie gets a leading dot on its domain. The HttpOnly and SameSite attributes are
  /// passed along but only kept where Foundation supports them (FoundationNetworking on Linux
  /// drops SameSite). Nil if Foundation rejects the cookie.
  public var httpCookie: HTTPCookie? {
    var properties: [HTTPCookiePropertyKey: Any] = [
      .name: name,
      .value: value,
      .domain: isHostOnly ? domain : "." + domain,
      .path: path,
    ]
    if isSecure {
      properties[.secure] = "TRUE"
    }
    if isHTTPOnly {
      properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE"
    }
    if let sameSite {
      properties[HTTPCookiePropertyKey("SameSite")] = sameSite
    }
    if let expiresDate {
      properties[.expires] = expiresDate
    } else {
      properties[.discard] = "TRUE"
    }
    return HTTPCookie(properties: properties)
  }
}
