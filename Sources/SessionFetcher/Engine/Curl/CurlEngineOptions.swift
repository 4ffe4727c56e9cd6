import Foundation

/// What a ``CurlEngine`` takes from its `URLSessionConfiguration`, read once when the engine is made.
package struct CurlEngineOptions: Sendable, Equatable {
  /// `httpMaximumConnectionsPerHost`; 0 or less means no cap.
  package var maximumConnectionsPerHost: Int
  /// The proxy (`host:port`) for plain http requests, from `connectionProxyDictionary`.
  package var httpProxy: String?
  /// The proxy (`host:port`) for https requests, from `connectionProxyDictionary`.
  package var httpsProxy: String?

  package init(maximumConnectionsPerHost: Int = 0, httpProxy: String? = nil, httpsProxy: String? = nil) {
    self.maximumConnectionsPerHost = maximumConnectionsPerHost
    self.httpProxy = httpProxy
    self.httpsProxy = httpsProxy
  }

  package init(configuration: URLSessionConfiguration) {
    let proxies = configuration.connectionProxyDictionary ?? [:]
    self.init(
      maximumConnectionsPerHost: configuration.httpMaximumConnectionsPerHost,
      httpProxy: Self.proxy(in: proxies, enable: "HTTPEnable", host: "HTTPProxy", port: "HTTPPort"),
      httpsProxy: Self.proxy(in: proxies, enable: "HTTPSEnable", host: "HTTPSProxy", port: "HTTPSPort"))
  }

  /// libcurl's connection cache: large enough that every connection the per-host cap allows, for a
  /// few hosts, stays open between fetches (16 in flight to one host keep their 16 connections).
  package var connectionCacheSize: Int {
    max(64, 4 * max(0, maximumConnectionsPerHost))
  }

  /// The connection cache for `transfers` attached at once, when the cache is `current`: it grows
  /// to hold a connection for every transfer, and never shrinks (libcurl closes what it no longer
  /// needs after `CURLOPT_MAXAGE_CONN`). Without it, 256 fetches in flight over 16 hosts closed
  /// every connection past the 64th as its transfer ended and opened a new one for the next (1,339
  /// connections for 5,376 requests). Returns nil when the cache is large enough already, or at
  /// ``connectionCacheLimit``.
  package static func connectionCacheSize(current: Int, transfers: Int) -> Int? {
    guard transfers > current else { return nil }
    let size = min(max(transfers, 2 * current), connectionCacheLimit)
    return size > current ? size : nil
  }

  /// The most connections the cache keeps, however many transfers run at once: each is a file
  /// descriptor, open until libcurl's connection age (118 s) after its last use.
  package static let connectionCacheLimit = 4096

  /// The `CURLOPT_PROXY` value for a request with `scheme`, or nil to let libcurl decide (it reads
  /// `http_proxy`, `https_proxy` and `no_proxy` itself).
  package func proxyURL(forScheme scheme: String?) -> String? {
    switch scheme?.lowercased() {
    case "http": return httpProxy.map { "http://" + $0 }
    case "https": return httpsProxy.map { "http://" + $0 }
    default: return nil
    }
  }

  /// `host:port` when the dictionary enables that proxy and names its host.
  static func proxy(in dictionary: [AnyHashable: Any], enable: String, host: String, port: String) -> String?
  {
    guard isTrue(dictionary[enable]), let hostName = dictionary[host] as? String, !hostName.isEmpty else {
      return nil
    }
    let bracketed = hostName.contains(":") && !hostName.hasPrefix("[") ? "[\(hostName)]" : hostName
    guard let portNumber = integer(dictionary[port]), portNumber > 0 else { return bracketed }
    return "\(bracketed):\(portNumber)"
  }

  private static func isTrue(_ value: Any?) -> Bool {
    switch value {
    case let bool as Bool: return bool
    case let number as NSNumber: return number.boolValue
    case let int as Int: return int != 0
    case let string as String: return string == "1" || string.lowercased() == "true"
    default: return false
    }
  }

  private static func integer(_ value: Any?) -> Int? {
    switch value {
    case let int as Int: return int
    case let number as NSNumber: return number.intValue
    case let string as String: return Int(string)
    default: return nil
    }
  }
}
