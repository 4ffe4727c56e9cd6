import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// One GET answered with `Content-Length: VALUE` and three body bytes, in a process of its own:
/// FoundationNetworking (swift-corelibs-foundation 6.3.1) traps in its libcurl header callback
/// when VALUE rounds to 2^63 as a Double (`Int64(Double)` of `CURLINFO_CONTENT_LENGTH_DOWNLOAD`),
/// which ends the process. Run by `ContentLengthTrapTests`.
///
///     content-length-probe urlsession VALUE            (a bare URLSession, no library code)
///     content-length-probe fetcher ENGINE VALUE        (a SessionFetcher; ENGINE: urlSession or libcurl)
///
/// Prints `ended: <error or status>` then `survived` and exits 0 when the process lives through it.
@main
enum ContentLengthProbe {
  static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    switch arguments.first {
    case "urlsession" where arguments.count == 2:
      let server = hostileServer(contentLength: arguments[1])
      print("ended: \(bareURLSession(server.url("/huge")))")
    case "fetcher" where arguments.count == 3:
      guard let engine = FetcherEngine.parse(arguments[1]) else { usage() }
      let server = hostileServer(contentLength: arguments[2])
      print("ended: \(fetch(server.url("/huge"), engine: engine))")
    default:
      usage()
    }
    print("survived")
    finish(0)
  }

  static func hostileServer(contentLength: String) -> HostileServer {
    let reply = Data("HTTP/1.1 200 OK\r\nContent-Length: \(contentLength)\r\n\r\nabc".utf8)
    guard let server = try? HostileServer(reply: { _ in .bytes(reply) }) else {
      print("failed: no loopback server")
      finish(1)
    }
    return server
  }

  static func bareURLSession(_ url: URL) -> String {
    let session = URLSession(configuration: .ephemeral)
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    session.dataTask(with: url) { _, response, error in
      let status = (response as? HTTPURLResponse)?.statusCode ?? 0
      outcome.set(error.map { "error \(($0 as? URLError)?.code.rawValue ?? 0)" } ?? "status \(status)")
      done.signal()
    }.resume()
    if done.wait(timeout: .now() + 60) == .timedOut { outcome.set("timed out") }
    session.invalidateAndCancel()
    return outcome.get()
  }

  static func fetch(_ url: URL, engine: FetcherEngine) -> String {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.engine = engine
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "content-length-probe")
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    fetcher.beginFetch { _, error in
      outcome.set(error.map { "error \($0)" } ?? "status \(fetcher.statusCode)")
      done.signal()
    }
    if done.wait(timeout: .now() + 60) == .timedOut {
      fetcher.stopFetching()
      outcome.set("timed out")
    }
    return outcome.get()
  }

  static func usage() -> Never {
    print("usage: content-length-probe urlsession VALUE | fetcher urlSession|libcurl VALUE")
    finish(2)
  }

  static func finish(_ status: Int32) -> Never {
    fflush(nil)
    _exit(status)
  }
}

final class Outcome: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = "nothing"

  func set(_ text: String) { lock.withLock { value = text } }
  func get() -> String { lock.withLock { value } }
}
