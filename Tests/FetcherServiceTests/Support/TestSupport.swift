import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A service for tests: its own serial callback queue, allowed to reach the loopback server.
/// A service for the test server. `connectionLimit`: the session's connections per host; nil keeps
/// the library's default configuration (4 per host on Linux).
func makeService(maxPerHost: Int = 10, connectionLimit: Int? = 64) -> FetcherService {
  let service = FetcherService()
  service.allowLocalhostRequest = true
  service.callbackQueue = DispatchQueue(label: "test.service.callbacks")
  service.maxRunningFetchersPerHost = maxPerHost
  // By default lift the per-host connection limit, so that the service's limit is the one the
  // server sees.
  if let connectionLimit {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = connectionLimit
    service.configuration = configuration
  }
  return service
}

/// Sleeps for `seconds` (for "nothing happens later" checks, never for speed).
func pause(_ seconds: Double) async {
  try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
}

extension TestServer {
  /// `pathAndQuery` on this server under the host name `localhost` instead of `127.0.0.1`: the same
  /// server, but another throttling host for a service.
  func localhostURL(_ pathAndQuery: String) -> URL {
    URL(string: "http://localhost:\(port)\(pathAndQuery)")!
  }

  /// The requests recorded for `path`.
  func requests(path: String) -> [RecordedRequest] {
    requests.filter { $0.path == path }
  }
}

/// Counts requests in flight per `Host` header on the server side, and the most seen at once.
final class ConcurrencyMeter: @unchecked Sendable {
  // `@unchecked Sendable`: both dictionaries are only touched under `lock`.
  private let lock = NSLock()
  private var inFlight: [String: Int] = [:]
  private var peaks: [String: Int] = [:]

  func enter(_ host: String) {
    lock.lock()
    inFlight[host, default: 0] += 1
    peaks[host] = max(peaks[host] ?? 0, inFlight[host] ?? 0)
    lock.unlock()
  }

  func leave(_ host: String) {
    lock.lock()
    inFlight[host, default: 0] -= 1
    lock.unlock()
  }

  /// The highest concurrency per host name (the `Host` header without the port).
  var peakByHost: [String: Int] {
    lock.lock()
    defer { lock.unlock() }
    var result: [String: Int] = [:]
    for (host, peak) in peaks {
      let name = String(host.split(separator: ":").first ?? "")
      result[name] = max(result[name] ?? 0, peak)
    }
    return result
  }
}

extension TestServer {
  /// Adds a route at `path` that measures per-host concurrency with `meter`, waits for `gate` (if
  /// any) and `delay` seconds, and answers `body <i>` for `?i=<i>`.
  func meteredRoute(_ path: String, meter: ConcurrencyMeter, gate: Gate? = nil, delay: TimeInterval = 0) {
    route(path) { request in
      let host = request.header("Host") ?? "?"
      meter.enter(host)
      defer { meter.leave(host) }
      gate?.wait()
      if delay > 0 { Thread.sleep(forTimeInterval: delay) }
      return .text("body \(request.query["i"] ?? "")")
    }
  }
}
