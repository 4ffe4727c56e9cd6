import Foundation

/// Decides whether a URL may be fetched, before any traffic: https always; another scheme only
/// when allowed explicitly; a localhost URL when localhost requests are allowed.
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

  /// Whether `url` passes the insecure-scheme gate.
  package static func allows(
    _ url: URL, allowedInsecureSchemes: [String], allowLocalhostRequest: Bool
  ) -> Bool {
    guard let scheme = url.scheme else { return false }
    if scheme.equalsIgnoringASCIICase("https") || scheme.equalsIgnoringASCIICase("data") { return true }
    if allowedInsecureSchemes.contains(where: { $0.equalsIgnoringASCIICase(scheme) }) { return true }
    return allowLocalhostRequest && isLocalhost(url)
  }
}
