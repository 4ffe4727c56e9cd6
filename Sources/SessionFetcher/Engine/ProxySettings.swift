import Foundation

/// The proxy a fetch goes through, in place of the environment's `http_proxy`, `https_proxy` and
/// `no_proxy`.
///
/// Set on ``SessionFetcher/proxySettings`` (or a service's `proxySettings`). nil, the default,
/// keeps the environment's proxy; any value replaces the environment entirely, its
/// ``bypassHosts`` included. Honoured by the libcurl engine only: the URLSession engine refuses any
/// value at begin with ``SessionFetcherError/unsupportedByEngine(_:)`` (FoundationNetworking reads
/// only the environment).
///
/// ```swift
/// let fetcher = SessionFetcher.fetcher(urlString: "https://www.example.com/")
/// fetcher.engine = .libcurl
/// fetcher.proxySettings = ProxySettings(
///   url: URL(string: "socks5h://proxy.internal:1080"),
///   credential: URLCredential(user: "me", password: "secret", persistence: .none),
///   bypassHosts: ["internal.example", "10.0.0.0/8"])
/// ```
///
/// The credential (or the `user:password` of ``url``) goes to the proxy only, with HTTP Basic for
/// HTTP proxies (from the first request) and username/password authentication for SOCKS5. It is
/// never shown: ``description``, `debugDescription` and reflection print the URL without it.
///
/// `@unchecked Sendable`: the `URLCredential` it holds is immutable once made (every property
/// read-only), so sharing it between threads is safe; only its `Sendable` conformance differs
/// between Apple's Foundation and swift-corelibs-foundation.
public struct ProxySettings: @unchecked Sendable, Equatable {
  /// The proxy: `http://`, `https://`, `socks5://` (names resolved here) or `socks5h://` (names
  /// resolved by the proxy), with its host and port; nil to connect directly.
  public var url: URL?
  /// The proxy's credential; when nil, the `user:password` of ``url``, if any.
  public var credential: URLCredential?
  /// Hosts reached directly, as curl's `no_proxy` takes them: `"example.com"` (that host and its
  /// subdomains), `".example.com"` (the same), an address or a range (`"10.0.0.0/8"`), or `"*"`
  /// for every host.
  public var bypassHosts: [String]

  /// Settings for `url` (nil: no proxy).
  public init(url: URL?, credential: URLCredential? = nil, bypassHosts: [String] = []) {
    self.url = url
    self.credential = credential
    self.bypassHosts = bypassHosts
  }

  /// No proxy, whatever the environment says.
  public static var direct: ProxySettings { ProxySettings(url: nil) }

  /// The schemes a proxy URL may have.
  package static let supportedSchemes: Set<String> = ["http", "https", "socks5", "socks5h"]

  /// ``url`` without its `user:password`, for messages and descriptions.
  package var redactedURLString: String? {
    guard let url else { return nil }
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
      return "(unparseable proxy URL)"
    }
    components.user = nil
    components.password = nil
    return components.string ?? "(unparseable proxy URL)"
  }

  /// The user and password to give the proxy: ``credential``'s, else those of ``url``.
  package var userAndPassword: (user: String, password: String)? {
    if let credential, let user = credential.user {
      return (user, credential.password ?? "")
    }
    guard let url, let user = url.user(percentEncoded: false), !user.isEmpty else { return nil }
    return (user, url.password(percentEncoded: false) ?? "")
  }

  /// Why these settings cannot be used, or nil: an unknown scheme, a URL without a host, a bypass
  /// entry holding a comma or a space. The text never shows the credential.
  package var problem: String? {
    for entry in bypassHosts where entry.isEmpty || entry.contains(where: { $0 == "," || $0.isWhitespace }) {
      return "ProxySettings.bypassHosts entry \"\(entry)\" is empty or holds a comma or a space"
    }
    guard let url else { return nil }
    let scheme = url.scheme?.lowercased() ?? ""
    guard Self.supportedSchemes.contains(scheme) else {
      return "ProxySettings.url has the unknown proxy scheme \"\(scheme)\" "
        + "(use http, https, socks5 or socks5h)"
    }
    guard let host = url.host, !host.isEmpty else {
      return "ProxySettings.url \(redactedURLString ?? "") names no host"
    }
    return nil
  }
}

extension ProxySettings: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// The proxy URL without its credential, whether a credential is set, and the bypass list.
  public var description: String {
    var parts = [redactedURLString ?? "direct"]
    if userAndPassword != nil { parts.append("credential set") }
    if !bypassHosts.isEmpty { parts.append("bypass \(bypassHosts.joined(separator: ","))") }
    return "ProxySettings(\(parts.joined(separator: ", ")))"
  }

  /// The same as ``description``: never the credential.
  public var debugDescription: String { description }

  /// Shows ``description`` only, so that `dump` and the debugger never print the credential.
  public var customMirror: Mirror {
    Mirror(self, children: ["description": description], displayStyle: .struct)
  }
}

/// Where a fetch's connections go on the libcurl engine: its proxy settings and Unix socket.
package struct TransportRoute: Sendable, Equatable {
  /// nil: the environment's proxy.
  package var proxy: ProxySettings?
  /// Every connection goes to this Unix domain socket when set.
  package var unixSocketPath: String?

  package init(proxy: ProxySettings? = nil, unixSocketPath: String? = nil) {
    self.proxy = proxy
    self.unixSocketPath = unixSocketPath
  }

  /// Whether the route is the engine's default (the environment's proxy, TCP).
  package var isDefault: Bool { proxy == nil && unixSocketPath == nil }

  /// The longest Unix socket path the platform takes (`sun_path` less its terminating zero).
  package static let maximumSocketPathLength: Int = {
    #if os(Linux)
      return 107
    #else
      return 103
    #endif
  }()

  /// Why a Unix socket path cannot be used (empty, too long, a file that is not a socket), or nil.
  /// A missing file is not a problem here: connecting fails with `cannotConnectToHost`.
  package static func socketPathProblem(_ path: String) -> String? {
    if path.isEmpty { return "unixSocketPath is empty" }
    let length = path.utf8.count
    if length > maximumSocketPathLength {
      return "unixSocketPath \(path) is \(length) bytes, longer than the \(maximumSocketPathLength) "
        + "a Unix socket address holds here"
    }
    if path.utf8.contains(0) { return "unixSocketPath holds a NUL byte" }
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    if (status.st_mode & S_IFMT) != S_IFSOCK {
      return "unixSocketPath \(path) exists but is not a socket"
    }
    return nil
  }
}
