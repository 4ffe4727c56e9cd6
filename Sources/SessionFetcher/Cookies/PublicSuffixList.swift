import CPublicSuffix
import Foundation

/// The Public Suffix List as cookies use it: which domains many unrelated sites share (`com`,
/// `co.uk`, `s3.amazonaws.com`, `myshopify.com`), so that no cookie may be scoped to them, and the
/// part of a host that one site owns.
///
/// ``current`` is the system's libpsl (`libpsl.so.5`, opened at run time, never linked), with the
/// list libcurl uses too: ICANN and private rules, wildcards and exceptions, the newer of libpsl's
/// built-in list and the distribution's `/usr/share/publicsuffix` file. Only when libpsl cannot be
/// loaded does it fall back to ``builtIn``, a small list of the common cases.
///
/// Both answer for canonical names (lowercased, no brackets, no trailing dot) that are not IP
/// addresses; ``CookieRules`` handles IP addresses before asking.
struct PublicSuffixList: Sendable {
  /// Whether `domain` is a public suffix: listed, or matched by a wildcard rule and not by an
  /// exception, or a single label.
  let isPublicSuffix: @Sendable (String) -> Bool
  /// The registrable domain of `host` (its public suffix plus one label), or nil when `host` is a
  /// public suffix itself.
  let registrableDomain: @Sendable (String) -> String?
  /// Where the answers come from: "libpsl 0.21.2 (+libidn2/2.3.3)" or "built-in list".
  let source: String

  /// libpsl when it loads, else ``builtIn``. Chosen once per process.
  static let current: PublicSuffixList = libpsl ?? builtIn

  /// Why libpsl is not used, or nil when it is.
  static var libpslUnavailableReason: String? {
    guard cpsl_load() != 0 else { return nil }
    return cpsl_unavailable_reason().map { String(cString: $0) } ?? "libpsl could not be loaded"
  }

  /// The list of the system's libpsl, or nil when libpsl cannot be loaded.
  static let libpsl: PublicSuffixList? = {
    guard cpsl_load() == 0 else { return nil }
    let version = cpsl_version().map { String(cString: $0) } ?? "unknown version"
    return PublicSuffixList(
      isPublicSuffix: { domain in
        // A NUL would end the C string early and ask about another name: such a name is no
        // registrable domain, so it is treated as a suffix (nothing may be scoped to it).
        guard !domain.utf8.contains(0) else { return true }
        return domain.withCString { cpsl_is_public_suffix($0) } != 0
      },
      registrableDomain: { host in
        guard !host.utf8.contains(0) else { return nil }
        return host.withCString { pointer in
          // libpsl answers with a pointer into the string it was given: a suffix of `host`.
          guard let start = cpsl_registrable_domain(pointer) else { return nil }
          return String(cString: start)
        }
      },
      source: "libpsl \(version)")
  }()

  /// The fallback when libpsl is missing: single labels and ``builtInSuffixes`` are suffixes.
  static let builtIn = PublicSuffixList(
    isPublicSuffix: isBuiltInSuffix,
    registrableDomain: { host in
      // From the left, as libpsl does: the first suffix met is the longest one.
      var registrable: Substring?
      var rest = host[...]
      while !isBuiltInSuffix(rest) {
        guard let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) else { break }
        registrable = rest
        rest = rest[rest.utf8.index(after: dot)...]
      }
      return registrable.map(String.init)
    },
    source: "built-in list")

  private static func isBuiltInSuffix(_ domain: some StringProtocol) -> Bool {
    !domain.utf8.contains(UInt8(ascii: ".")) || builtInSuffixes.contains(String(domain))
  }

  /// Multi-label public suffixes under which unrelated parties register names: country-code
  /// second-level domains in wide use and popular hosting platforms. Deliberately small: the
  /// real list comes from libpsl.
  static let builtInSuffixes: Set<String> = [
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
    "com.ve", "com.uy", "k12.ca.us",
    // Europe, Middle East, Africa
    "com.es", "org.es", "com.tr", "gen.tr", "co.il", "org.il", "ac.il", "com.ua", "com.pl",
    "net.pl", "org.pl", "co.za", "org.za", "com.eg", "com.sa", "co.ke", "com.ng",
    // Hosting platforms
    "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com", "cloudfront.net",
    "azurewebsites.net", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "web.app",
    "firebaseapp.com", "fly.dev", "onrender.com", "glitch.me", "s3.amazonaws.com",
    "readthedocs.io", "ngrok.io", "myshopify.com", "duckdns.org",
  ]
}
