import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// One GET answered by a response FoundationNetworking (swift-corelibs-foundation 6.3) cannot survive,
/// in a process of its own. Run by `ContentLengthTrapTests` and `TrailerTrapTests`.
///
/// `Content-Length: VALUE` and three body bytes: FoundationNetworking traps in its libcurl header
/// callback when VALUE rounds to 2^63 as a Double (`Int64(Double)` of
/// `CURLINFO_CONTENT_LENGTH_DOWNLOAD`). A chunked body `hello` followed by a trailer field
/// (`trailer`): FoundationNetworking takes the trailer line for a new head and traps when the
/// transfer ends with that head incomplete.
///
///     content-length-probe urlsession VALUE            (a bare URLSession, no library code)
///     content-length-probe fetcher ENGINE VALUE        (a SessionFetcher; ENGINE: urlSession or libcurl)
///     content-length-probe urlsession trailer          (the chunked body with a trailer; also
///     content-length-probe fetcher ENGINE trailer       trailers, trailer-empty-body, trailer-status-line,
///                                                       trailer-redirect: a 302 with trailers first)
///
/// Prints `ended: <error or status>` (with `body <text>` after a status) then `survived` and exits 0
/// when the process lives through it.
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
      #if FOUNDATION_NETWORKING
        // Every gate is freed by the time its fetch's completion runs.
        let gates = ResponseHeadGuard.gateCounts
        print("gates in place \(gates.inPlace) of \(gates.made)")
      #endif
    default:
      usage()
    }
    print("survived")
    finish(0)
  }

  /// Chunked responses whose body is `hello` (or empty) and which end with trailer fields.
  static let trailerReplies = [
    "trailer": "\(chunkedHead)5\r\nhello\r\n0\r\nX-Trailer: yes\r\n\r\n",
    "trailers": "\(chunkedHead)5\r\nhello\r\n0\r\nX-One: 1\r\nX-Two: 2\r\nServer-Timing: db;dur=53\r\n\r\n",
    "trailer-empty-body": "\(chunkedHead)0\r\nX-Trailer: yes\r\n\r\n",
    "trailer-status-line": "\(chunkedHead)5\r\nhello\r\n0\r\nHTTP/1.1 200 OK: yes\r\n\r\n",
    "trailer-redirect": "\(chunkedHead)5\r\nhello\r\n0\r\nX-Trailer: yes\r\n\r\n",
  ]
  static let redirectReply =
    "HTTP/1.1 302 Found\r\nLocation: /next\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    + "3\r\nbye\r\n0\r\nX-Redirect-Trailer: yes\r\n\r\n"
  static let chunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"

  static func hostileServer(contentLength: String) -> HostileServer {
    let reply =
      trailerReplies[contentLength] ?? "HTTP/1.1 200 OK\r\nContent-Length: \(contentLength)\r\n\r\nabc"
    let redirected = contentLength == "trailer-redirect"
    guard
      let server = try? HostileServer(reply: { head in
        // The redirect's own chunked body ends with a trailer; so does the response it leads to
        // (fetched by a task of its own on the URLSession engine, which follows redirects itself).
        let first = redirected && String(decoding: head, as: UTF8.self).hasPrefix("GET /huge ")
        return .bytes(Data((first ? redirectReply : reply).utf8))
      })
    else {
      print("failed: no loopback server")
      finish(1)
    }
    return server
  }

  static func bareURLSession(_ url: URL) -> String {
    let session = URLSession(configuration: .ephemeral)
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    session.dataTask(with: url) { data, response, error in
      let status = (response as? HTTPURLResponse)?.statusCode ?? 0
      let body = String(decoding: data ?? Data(), as: UTF8.self)
      outcome.set(
        error.map { "error \(($0 as? URLError)?.code.rawValue ?? 0)" } ?? "status \(status) body \(body)")
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
    fetcher.beginFetch { data, error in
      let body = String(decoding: data ?? Data(), as: UTF8.self)
      outcome.set(error.map { "error \($0)" } ?? "status \(fetcher.statusCode) body \(body)")
      done.signal()
    }
    if done.wait(timeout: .now() + 60) == .timedOut {
      fetcher.stopFetching()
      outcome.set("timed out")
    }
    return outcome.get()
  }

  static func usage() -> Never {
    print("usage: content-length-probe urlsession VALUE|trailer | fetcher urlSession|libcurl VALUE|trailer")
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
