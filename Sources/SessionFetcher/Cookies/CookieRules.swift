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

  /// True for a domain that cookies must not be scoped to because many unrelated sites share it:
  /// any single-label name ("com", "localhost") and the multi-label public suffixes of
  /// ``commonPublicSuffixes``.
  ///
  /// This is not the full Public Suffix List, which is large and changes often; it stops the
  /// common cases (`co.uk`, `com.au`, `github.io`, …). A response from the suffix itself may still
  /// set a host-only cookie for it.
  static func isPublicSuffixLike(_ domain: String) -> Bool {
    !domain.utf8.contains(UInt8(ascii: ".")) || commonPublicSuffixes.contains(domain)
  }

  /// The part of a host that a site owns: the last two labels, or the last three when the last two
  /// are a known public suffix; an IP address is its own. Used to bound the cookies per site and
  /// for the `onlyFromMainDocumentDomain` policy.
  static func registrableDomain(of host: String) -> String {
    if isIPAddress(host) { return host }
    let labels = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard labels.count > 2 else { return host }
    func lastLabels(_ count: Int) -> String {
      let start = labels[labels.count - count].startIndex
      return String(decoding: host.utf8[start...], as: UTF8.self)
    }
    return commonPublicSuffixes.contains(lastLabels(2)) ? lastLabels(3) : lastLabels(2)
  }

  /// Multi-label public suffixes under which unrelated parties register names: country-code
  /// second-level domains in wide use and popular hosting platforms. Deliberately small; see
  /// ``isPublicSuffixLike(_:)``.
  static let commonPublicSuffixes: Set<String> = [
    // United Kingdom
    "co.uk", "org.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk", "ac.uk", "gov.uk", "sch.uk",
    // Japan
    "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp", "ad.jp", "ed.jp", "gr.jp", "lg.jp",
    // Australia, New Zealand
    "com.au", "net.au", "org.au", "edu.au", "gov.au", "asn.au", "id.au",
    "co.nz", "net.nz", "org.nz", "ac.nz", "govt.nz", "geek.nz",
    // Asia
    "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn", "com.hk", "org.hk", "com.tw", "org.tw",
    "co.kr", "or.kr", "ne.kr", "co.in", "net.in", "org.in", "firm.in", "gen.in", "ind.in",
    "com.sg", "com.my", "co.id", "or.id", "com.ph", "co.th", "in.th", "com.vn", "com.pk",
    // Americas
    "com.br", "net.br", "org.br", "gov.br", "com.mx", "org.mx", "com.ar", "com.co", "com.pe",
    "com.ve", "com.uy",
    // Europe, Middle East, Africa
    "com.tr", "gen.tr", "co.il", "org.il", "ac.il", "com.ua", "com.pl", "net.pl", "org.pl",
    "co.za", "org.za", "com.eg", "com.sa", "co.ke", "com.ng",
    // Hosting platforms
    "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com", "cloudfront.net",
    "azurewebsites.net", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "web.app",
    "firebaseapp.com", "fly.dev", "onrender.com", "glitch.me", "s3.amazonaws.com",
    "readthedocs.io", "ngrok.io", "ngrok-free.app",
  ]
}
