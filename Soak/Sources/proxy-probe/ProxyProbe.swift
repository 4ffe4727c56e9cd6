import Foundation
import SessionFetcher

/// Fetches URLs through the proxy named by this process's `http_proxy` environment variable
/// (FoundationNetworking on Linux takes proxies from the environment only, process-wide), and
/// prints one line per fetch: `<status> <bytes> <error>`. Run by the interop suite in a child
/// process whose environment has `http_proxy` (and for fetches over TLS in a mount namespace of
/// its own). `PROXY_PROBE_CREDENTIAL=user:password` sets each fetcher's `proxyCredential`, which
/// answers the proxy's 407 challenge. `PROXY_PROBE_DIRECT=1` sets each fetcher's `proxySettings` to
/// `.direct` (no proxy whatever the environment says; the libcurl engine only).
///
///     http_proxy=http://user:pass@127.0.0.1:3128 proxy-probe URL...
@main
enum ProxyProbe {
  static func main() {
    let urls = CommandLine.arguments.dropFirst().compactMap(URL.init(string:))
    guard !urls.isEmpty else {
      print("usage: http_proxy=http://[user:pass@]host:port proxy-probe URL...")
      exit(2)
    }
    let queue = DispatchQueue(label: "proxy-probe")
    let proxyCredential = ProcessInfo.processInfo.environment["PROXY_PROBE_CREDENTIAL"].map { text in
      let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
      return URLCredential(user: parts[0], password: parts.count > 1 ? parts[1] : "", persistence: .none)
    }
    let direct = ProcessInfo.processInfo.environment["PROXY_PROBE_DIRECT"] == "1"
    var failures = 0
    for url in urls {
      let fetcher = SessionFetcher.fetcher(url: url)
      fetcher.allowedInsecureSchemes = ["http"]
      fetcher.callbackQueue = queue
      fetcher.proxyCredential = proxyCredential
      if direct { fetcher.proxySettings = .direct }
      let done = DispatchSemaphore(value: 0)
      let line = LockedLine()
      fetcher.beginFetch { data, error in
        let status = fetcher.statusCode
        let detail = error.map { "\($0)" } ?? "-"
        line.set("\(status) \(data?.count ?? 0) \(detail)")
        done.signal()
      }
      if done.wait(timeout: .now() + 30) == .timedOut {
        fetcher.stopFetching()
        line.set("0 0 timed out")
        failures += 1
      }
      print(line.get())
    }
    exit(failures == 0 ? 0 : 1)
  }
}

/// One line of output, written on the callback queue and read on the main thread.
final class LockedLine: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = ""

  func set(_ text: String) {
    lock.lock()
    value = text
    lock.unlock()
  }

  func get() -> String {
    lock.lock()
    defer { lock.unlock() }
    return value
  }
}
