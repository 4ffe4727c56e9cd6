import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A per-test serial callback queue, so tests do not depend on the main queue.
func makeCallbackQueue() -> DispatchQueue {
  DispatchQueue(label: "test.callbacks")
}

extension TestServer {
  /// A fetcher for a path on this server, allowed to reach localhost.
  func fetcher(_ pathAndQuery: String, queue: DispatchQueue? = nil) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url(pathAndQuery))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = queue ?? makeCallbackQueue()
    // Suites run in parallel in one process: a private jar keeps one test's cookies out of another's
    // requests (SessionCookieStorage.shared is process-wide).
    fetcher.cookieStorage = SessionCookieStorage()
    return fetcher
  }
}

/// A fresh empty folder under the temporary directory.
func makeTemporaryFolder() throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "sessionfetcher-tests-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

struct PortUnavailable: Error, CustomStringConvertible {
  var description: String
}

/// A TCP socket bound to an ephemeral port on 127.0.0.1, listening when `backlog` is given; the
/// caller owns `descriptor`.
func bindLoopbackSocket(backlog: Int32? = nil) throws -> (descriptor: Int32, port: UInt16) {
  #if canImport(Glibc)
    let streamType = Int32(SOCK_STREAM.rawValue)
  #else
    let streamType = SOCK_STREAM
  #endif
  let descriptor = socket(AF_INET, streamType, 0)
  guard descriptor >= 0 else { throw PortUnavailable(description: "socket: errno \(errno)") }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
      bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
    }
  }
  guard bound, backlog.map({ listen(descriptor, $0) == 0 }) ?? true else {
    let code = errno
    close(descriptor)
    throw PortUnavailable(description: "bind or listen on 127.0.0.1: errno \(code)")
  }
  return (descriptor, UInt16(bigEndian: address.sin_port))
}

/// A port on 127.0.0.1 with nothing listening: bound and never listened on, for the life of the
/// process. (A port bound and closed again could be taken at once by another suite's server running
/// in parallel, and the "refused" connection would reach it.)
func closedPort() throws -> UInt16 {
  // Deliberately never closed: the port stays reserved, and refuses connections.
  try bindLoopbackSocket().port
}

/// Begins and stops each fetcher from two threads at once (`concurrentPerform`), recording each
/// completion's error: the begin/stop race of the stop tests, on a socket or the scripted engine.
func raceBeginAgainstStop(_ fetchers: [SessionFetcher], completions: Recorder<SessionFetcherError?>) {
  DispatchQueue.concurrentPerform(iterations: fetchers.count * 2) { index in
    let fetcher = fetchers[index / 2]
    if index % 2 == 0 {
      fetcher.beginFetch { _, error in completions.append(error as? SessionFetcherError) }
    } else {
      fetcher.stopFetching()
    }
  }
}
