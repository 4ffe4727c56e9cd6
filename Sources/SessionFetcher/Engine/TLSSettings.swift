import Foundation

/// How a fetch's TLS connections are verified and authenticated: extra trust roots, mutual TLS,
/// public-key pinning and the lowest protocol version.
///
/// The default (`TLSSettings()`) is the platform's: the system's trust store, no client
/// certificate, no pins, TLS 1.2 or later. The libcurl engine honours every field; the URLSession
/// engine honours only the default on Linux (FoundationNetworking has no TLS configuration), and a
/// fetch whose settings it cannot honour fails at begin with
/// ``SessionFetcherError/unsupportedByEngine(_:)`` — never a silent fetch without the pin or the
/// client certificate.
///
/// ```swift
/// var tls = TLSSettings()
/// tls.additionalTrustRoots = [URL(fileURLWithPath: "/etc/myapp/internal-ca.pem")]
/// tls.clientCertificate = URL(fileURLWithPath: "/etc/myapp/client.pem")
/// tls.clientKey = URL(fileURLWithPath: "/etc/myapp/client.key")
/// service.engine = .libcurl
/// service.tlsSettings = tls
/// ```
///
/// Files are read when a fetch begins, on every engine; a missing or unreadable file, one that is
/// not a regular file (a directory, a FIFO) or is over 10 MiB, or PEM that does not parse or whose
/// certificate or key is damaged, fails the fetch at begin with
/// ``SessionFetcherError/invalidTLSSettings(_:)`` naming the file, before any connection.
/// ``clientKeyPassword`` never appears in ``description``, logs or HAR.
public struct TLSSettings: Sendable, Equatable, CustomStringConvertible {
  /// PEM files of certificates to trust as roots, each holding one or more certificates, in
  /// addition to the system's (or instead of them, see ``trustsSystemRoots``).
  public var additionalTrustRoots: [URL] = [] {
    didSet { additionalTrustRootPaths = additionalTrustRoots.map(Self.filePath) }
  }
  /// Whether the system's trust store is trusted too (default true). False trusts only
  /// ``additionalTrustRoots``.
  public var trustsSystemRoots = true
  /// A PEM file with the client certificate (and any intermediates after it) for mutual TLS.
  public var clientCertificate: URL?
  /// A PEM file with the client certificate's private key (nil: the key is in
  /// ``clientCertificate``'s file).
  public var clientKey: URL?
  /// The password of an encrypted ``clientKey``.
  public var clientKeyPassword: String?
  /// Public keys the server's certificate must have one of, each `"sha256//<base64>"`: the
  /// base64 of the SHA-256 of the key's DER SubjectPublicKeyInfo. Print one with
  /// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der |
  /// openssl dgst -sha256 -binary | openssl enc -base64`. Empty (the default): no pinning.
  public var pinnedPublicKeys: [String] = []
  /// The lowest TLS version accepted (default ``TLSVersion/tls12``).
  public var minimumVersion = TLSVersion.tls12
  /// Whether to offer HTTP/2 to servers (by ALPN): `true` offers it, `false` speaks HTTP/1.1 only.
  /// `nil` (the default) offers it where libcurl reports every HTTP/2 body cut short as an error
  /// (libcurl 8.13.0 and later) and speaks HTTP/1.1 with older ones: libcurl 7.x can deliver an
  /// HTTP/2 body that a stream reset or a protocol error cut short, when the response has no
  /// `Content-Length`, as a complete one (see the TLS article). The URLSession engine follows the
  /// default on Linux; set `true` or `false` on the libcurl engine.
  public var offersHTTP2: Bool?

  /// The file path of each of ``additionalTrustRoots`` (nil for a URL that is not a file URL),
  /// decoded once when they are set: `URL.path` decodes the URL at every call, and every fetch that begins with these settings looks its roots up by path, at
  /// begin and again in the libcurl engine. Derived from ``additionalTrustRoots`` alone, so the
  /// synthesized equality is unchanged.
  private(set) var additionalTrustRootPaths: [String?] = []

  /// The platform's defaults: the system's trust store, no client certificate, no pins, TLS 1.2 or
  /// later.
  public init() {}

  /// The path of a file URL, nil for any other.
  static func filePath(_ url: URL) -> String? {
    url.isFileURL ? url.path : nil
  }

  /// Whether these are the defaults (what every engine honours).
  public var isDefault: Bool { self == TLSSettings() }

  /// The settings in one line, without the key password.
  public var description: String {
    var parts: [String] = []
    if !additionalTrustRoots.isEmpty {
      parts.append("trust roots \(additionalTrustRoots.map(\.path).joined(separator: ", "))")
    }
    parts.append(trustsSystemRoots ? "system roots" : "no system roots")
    if let clientCertificate { parts.append("client certificate \(clientCertificate.path)") }
    if let clientKey { parts.append("client key \(clientKey.path)") }
    if clientKeyPassword != nil { parts.append("key password set") }
    if !pinnedPublicKeys.isEmpty { parts.append("\(pinnedPublicKeys.count) pinned key(s)") }
    parts.append("minimum \(minimumVersion)")
    if let offersHTTP2 { parts.append(offersHTTP2 ? "offers HTTP/2" : "HTTP/1.1 only") }
    return "TLSSettings(" + parts.joined(separator: "; ") + ")"
  }

  /// The settings that an engine without TLS configuration cannot honour, by name; empty for the
  /// defaults.
  package var nonDefaultSettingNames: [String] {
    var names: [String] = []
    if !additionalTrustRoots.isEmpty { names.append("additionalTrustRoots") }
    if !trustsSystemRoots { names.append("trustsSystemRoots = false") }
    if clientCertificate != nil { names.append("clientCertificate") }
    if clientKey != nil { names.append("clientKey") }
    if clientKeyPassword != nil { names.append("clientKeyPassword") }
    if !pinnedPublicKeys.isEmpty { names.append("pinnedPublicKeys") }
    if minimumVersion != .tls12 { names.append("minimumVersion = \(minimumVersion)") }
    if let offersHTTP2 { names.append("offersHTTP2 = \(offersHTTP2)") }
    return names
  }
}

/// A TLS protocol version.
public enum TLSVersion: Sendable, Equatable, Comparable, CustomStringConvertible {
  /// TLS 1.2.
  case tls12
  /// TLS 1.3.
  case tls13

  /// `TLS 1.2` or `TLS 1.3`.
  public var description: String {
    switch self {
    case .tls12: return "TLS 1.2"
    case .tls13: return "TLS 1.3"
    }
  }
}
