import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// Servers that fail during the TLS handshake, on each engine: one that stalls (the request timeout
/// ends the fetch) and one that closes the connection (a lost connection, retried for idempotent
/// requests, never a certificate verdict).
@Suite(
  "TLS handshake faults", .serialized,
  .enabled(if: TLSFixtures.isAvailable, "needs openssl"))
struct TLSHandshakeFaultTests {
  static var engines: [FetcherEngine] {
    FetcherEngine.libcurl.isAvailable ? [.urlSession, .libcurl] : [.urlSession]
  }

  func fetcher(_ url: URL, engine: FetcherEngine, method: String = "GET", timeout: TimeInterval = 10)
    -> SessionFetcher
  {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.engine = engine
    fetcher.callbackQueue = DispatchQueue(label: "test.tls-handshake")
    fetcher.allowLocalhostRequest = true
    if method == "POST" { fetcher.bodyData = Data("payload".utf8) }
    return fetcher
  }

  /// A TLS server that stops answering once the client's hello is sent (a real `openssl s_server`,
  /// stopped with SIGSTOP: the kernel still accepts the connection): the fetch ends with
  /// `.timedOut` by its request timeout instead of waiting for ever.
  @Test(arguments: engines)
  func aStalledHandshakeEndsByTheRequestTimeout(engine: FetcherEngine) async throws {
    let fixtures = try await TLSFixtures.make()
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    defer { server.stop() }
    server.freeze()
    let fetcher = fetcher(server.url(), engine: engine, timeout: 1)
    let result = await fetcher.fetchResult(timeout: 30)
    #expect((result.error as? URLError)?.code == .timedOut, "\(String(describing: result.error))")
    #expect(fetcher.statusCode == 0)
  }

  /// A server that reads the client's hello and closes the connection: `.networkConnectionLost`,
  /// retried for a GET (the closer sees every attempt), not for a POST.
  @Test(arguments: engines)
  func aConnectionClosedDuringTheHandshakeIsALostConnection(engine: FetcherEngine) async throws {
    let closer = try HandshakeCloser()
    defer { closer.stop() }

    let get = fetcher(closer.url, engine: engine)
    get.isRetryEnabled = true
    // Retries stop once the next delay would reach the cap or 3 × the cap has passed: a cap of 1 s
    // leaves 3 s for the first retry (a handshake takes milliseconds, even under a sanitizer), and
    // ends the retries after about 1.5 s of delays. (When to retry is RetryDecisionTests' matter:
    // here only that the wire's error is one that retries.)
    get.minRetryInterval = 0.05
    get.maxRetryInterval = 1
    let getResult = await get.fetchResult(timeout: 90)
    #expect(
      (getResult.error as? URLError)?.code == .networkConnectionLost, "\(String(describing: getResult.error))"
    )
    #expect(get.timing.retryCount >= 1)
    #expect(closer.accepted >= get.timing.retryCount + 1)

    let acceptedBeforePost = closer.accepted
    let post = fetcher(closer.url, engine: engine, method: "POST")
    post.isRetryEnabled = true
    post.minRetryInterval = 0.05
    let postResult = await post.fetchResult(timeout: 30)
    #expect(
      (postResult.error as? URLError)?.code == .networkConnectionLost,
      "\(String(describing: postResult.error))")
    #expect(post.timing.retryCount == 0)
    #expect(closer.accepted == acceptedBeforePost + 1)
  }
}

/// A listener on 127.0.0.1 that accepts each connection, reads what the client sends first (its TLS
/// hello), sends `answer` (by default nothing) and closes it, counting the connections.
final class HandshakeCloser: @unchecked Sendable {
  // `@unchecked Sendable`: `count` and `stopped` are only touched under `lock`; `descriptor` and
  // `port` are set in init.
  let port: UInt16
  private let descriptor: Int32
  private let lock = NSLock()
  private var count = 0
  private var stopped = false
  private let finished = DispatchSemaphore(value: 0)
  private let answer: Data

  init(answer: Data = Data()) throws {
    self.answer = answer
    (descriptor, port) = try bindLoopbackSocket(backlog: 16)
    let thread = Thread { [self] in serve() }
    thread.start()
  }

  var url: URL { URL(string: "https://127.0.0.1:\(port)/")! }

  /// The connections accepted so far.
  var accepted: Int { lock.withLock { count } }

  func stop() {
    let first = lock.withLock {
      defer { stopped = true }
      return !stopped
    }
    guard first else { return }
    finished.wait()
    close(descriptor)
  }

  private func serve() {
    defer { finished.signal() }
    while !lock.withLock({ stopped }) {
      var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      guard poll(&waiting, 1, 50) > 0 else { continue }
      let connection = accept(descriptor, nil, nil)
      guard connection >= 0 else { continue }
      lock.withLock { count += 1 }
      // Wait up to 5 s for the hello, then answer (or not) and close.
      var hello = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
      if poll(&hello, 1, 5_000) > 0 {
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = recv(connection, &buffer, buffer.count, 0)
        #if canImport(Glibc)
          let flags = Int32(MSG_NOSIGNAL)
        #else
          let flags: Int32 = 0
        #endif
        _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, flags) }
      }
      close(connection)
    }
  }
}
