import Foundation

/// The parts of a request URL that decide which cookies it gets.
struct CookieRequest {
  /// The canonical host (see ``CookieRules/canonicalHost(of:)``).
  var host: String
  /// The percent-encoded path, "/" when empty.
  var path: String
  /// Whether the scheme is https, the only one that gets Secure cookies.
  var isSecure: Bool

  /// Nil for a URL without a host.
  init?(_ url: URL) {
    guard let host = CookieRules.canonicalHost(of: url) else { return nil }
    self.host = host
    self.path = CookieRules.requestPath(of: url)
    self.isSecure = url.scheme?.lowercased() == "https"
  }
}

/// The host, domain and path rules of RFC 6265 (§5.1.2–§5.1.4), shared by the parser and the jar.
enum CookieRules {
  /// The canonical host of a URL: lowercased, without the brackets of an IPv6 literal, without a
  /// port. Nil when the URL has no host.
  static func canonicalHost(of url: URL) -> String? {
    guard let host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
    return canonicalHost(host)
  }

  /// Lowercases a host name and strips the brackets of an IPv6 literal (URL APIs give "[::1]" or
  /// "::1" depending on the platform and the call).
  static func canonicalHost(_ host: String) -> String {
    let result = host.lowercased()
    let bytes = result.utf8
    guard bytes.count >= 2, bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else {
      return result
    }
    return String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
  }

  /// A cookie's domain in its stored form: lowercased, one leading dot removed, brackets removed.
  static func canonicalDomain(_ domain: String) -> String {
    guard domain.utf8.first == UInt8(ascii: ".") else { return canonicalHost(domain) }
    return canonicalHost(String(decoding: domain.utf8.dropFirst(), as: UTF8.self))
  }

  /// True for an IPv4 or IPv6 address literal (canonical form, without brackets).
  ///
  /// Any host with a colon is taken as IPv6, and any host whose last label is all digits as IPv4
  /// (no top-level domain is numeric). That also covers the short and octal IPv4 spellings that
  /// URL parsers accept, which must never be treated as domain names either.
  static func isIPAddress(_ host: String) -> Bool {
    let bytes = host.utf8
    if bytes.contains(UInt8(ascii: ":")) { return true }
    let lastLabel = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).last ?? []
    return !lastLabel.isEmpty && lastLabel.allSatisfy { (0x30...0x39).contains($0) }
  }

  /// Domain matching (§5.1.3): identical, or `host` ends with "." + `domain` and is not an IP
  /// address. Both strings must be canonical.
  static func domainMatches(host: String, domain: String) -> Bool {
    let hostBytes = host.utf8
    let domainBytes = domain.utf8
    if hostBytes.elementsEqual(domainBytes) { return true }
    guard !domainBytes.isEmpty, hostBytes.count > domainBytes.count, !isIPAddress(host) else {
      return false
    }
    let dotIndex = hostBytes.index(hostBytes.endIndex, offsetBy: -(domainBytes.count + 1))
    return hostBytes[dotIndex] == UInt8(ascii: ".")
      && hostBytes[hostBytes.index(after: dotIndex)...].elementsEqual(domainBytes)
  }

  /// The default path of a cookie set by a URL without a usable Path attribute (§5.1.4): the URL's
  /// path up to, but not including, its last "/"; "/" when that would be empty.
  static func defaultPath(of url: URL) -> String {
    let path = requestPath(of: url).utf8
    guard let lastSlash = path.lastIndex(of: UInt8(ascii: "/")), lastSlash != path.startIndex else {
      return "/"
    }
    return String(decoding: path[..<lastSlash], as: UTF8.self)
  }

  /// The path of a request as cookies see it: percent-encoded, "/" when empty.
  static func requestPath(of url: URL) -> String {
    let path = url.path(percentEncoded: true)
    return path.utf8.first == UInt8(ascii: "/") ? path : "/"
  }

  /// Path matching (§5.1.4): "/docs" matches "/docs", "/docs/" and "/docs/web", not "/docsets".
  static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
    let requestBytes = requestPath.utf8
    let cookieBytes = cookiePath.utf8
    guard requestBytes.starts(with: cookieBytes) else { return false }
    if requestBytes.count == cookieBytes.count || cookieBytes.last == UInt8(ascii: "/") { return true }
    return requestBytes[requestBytes.index(requestBytes.startIndex, offsetBy: cookieBytes.count)]
      == UInt8(ascii: "/")
  }

  /// True when a `Domain` attribute that domain-matches `host` names no single site: the host's
  /// public suffix under `list` or a name above it, as `amazonaws.com` and `s3.amazonaws.com` are
  /// for `b1.s3.amazonaws.com` (`s3.amazonaws.com` is a listed suffix), and every domain is for a
  /// host that is itself a public suffix. Such a domain may only be the host itself, and the
  /// cookie is then host-only (RFC 6265 §5.3 step 5); libpsl's `psl_is_cookie_domain_acceptable`
  /// draws the same line.
  ///
  /// Both names must be canonical and `host` not an IP address.
  static func isPublicSuffix(_ domain: String, forHost host: String, in list: PublicSuffixList = .current)
    -> Bool
  {
    guard let registrable = list.registrableDomain(host) else { return true }
    return !domainMatches(host: domain, domain: registrable)
  }

  /// The part of a host that a site owns: its registrable domain under `list` (the public suffix
  /// plus one label); a host that is itself a public suffix, or an IP address, is its own. Used to
  /// bound the cookies per site and for the `onlyFromMainDocumentDomain` policy.
  static func registrableDomain(of host: String, in list: PublicSuffixList = .current) -> String {
    if isIPAddress(host) { return host }
    return list.registrableDomain(host) ?? host
  }
}
