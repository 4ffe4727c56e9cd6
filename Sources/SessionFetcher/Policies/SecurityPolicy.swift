import Foundation

/// Decides whether a URL may be fetched, before any traffic: https always; another scheme only
/// when allowed explicitly; an http URL of localhost when localhost requests are allowed.
///
/// `allowLocalhostRequest` admits plain http to the local machine, never another scheme: an
/// `ftp:` or `file:` URL of localhost needs its scheme in `allowedInsecureSchemes` like any other.
/// A redirect may only lead to http or https (see ``allowsRedirect(to:allowedInsecureSchemes:allowLocalhostRequest:)``).
package enum SecurityPolicy {
  /// Hosts that count as the local machine.
  package static let localhostNames: Set<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]

  package static func isLocalhost(_ url: URL) -> Bool {
    guard let host = url.host?.lowercased(), !host.isEmpty else {
      // A file URL without a host names the local machine.
      return url.scheme?.lowercased() == "file"
    }
    return localhostNames.contains(host) || host.hasSuffix(".localhost")
  }

  /// Whether `scheme` is http or https, whatever its case.
  package static func isHTTP(scheme: String) -> Bool {
    scheme.equalsIgnoringASCIICase("http") || scheme.equalsIgnoringASCIICase("https")
  }

  /// Whether `url` passes the insecure-scheme gate.
  package static func allows(
    _ url: URL, allowedInsecureSchemes: [String], allowLocalhostRequest: Bool
  ) -> Bool {
    guard let scheme = url.scheme else { return false }
    if scheme.equalsIgnoringASCIICase("https") || scheme.equalsIgnoringASCIICase("data") { return true }
    if allowedInsecureSchemes.contains(where: { $0.equalsIgnoringASCIICase(scheme) }) { return true }
    return allowLocalhostRequest && scheme.equalsIgnoringASCIICase("http") && isLocalhost(url)
  }

  /// Whether a redirect (from the server, or as a `willRedirectBlock` changed it) may lead to
  /// `url`: only to http or https, and only where the gate of
  /// ``allows(_:allowedInsecureSchemes:allowLocalhostRequest:)`` lets a fetch begin. A server's
  /// `Location` never switches the fetch to another protocol (`ftp:`, `file:`, `data:`), even one
  /// listed in `allowedInsecureSchemes`: that list is for URLs the caller chose.
  package static func allowsRedirect(
    to url: URL, allowedInsecureSchemes: [String], allowLocalhostRequest: Bool
  ) -> Bool {
    guard let scheme = url.scheme, isHTTP(scheme: scheme) else { return false }
    return allows(
      url, allowedInsecureSchemes: allowedInsecureSchemes, allowLocalhostRequest: allowLocalhostRequest)
  }
}
