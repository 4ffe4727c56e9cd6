import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A chunked response that ends with trailer fields ends a process that uses a bare URLSession,
/// inside FoundationNetworking 6.3: libcurl hands the trailer lines to its header callback after the
/// body, its parser takes them for a new head, and the transfer ends with that head incomplete
/// ("Transfer completed, but there's no response"). The URLSession engine keeps trailer lines from
/// that parser (see `ResponseHeadGuard`): the fetch succeeds with its body, trailers ignored, as on
/// the libcurl engine. Each case runs in a child process, `content-length-probe`, whose death would
/// otherwise end the test run.
@Suite("Trailer fields after a chunked body")
struct TrailerTrapTests {
  /// The probe's chunked replies with trailers, and the body each delivers.
  static let replies: [(name: String, body: String)] = [
    ("trailer", "hello"), ("trailers", "hello"), ("trailer-empty-body", ""), ("trailer-status-line", "hello"),
    ("trailer-redirect", "hello"),
  ]

  #if os(Linux)
    @Test("kill a process that uses a bare URLSession (FoundationNetworking's trap)")
    func bareURLSessionTraps() async throws {
      let (exit, lines) = try await ContentLengthTrapTests.runProbe(["urlsession", "trailer"])
      #expect(
        ContentLengthTrapTests.trapped(exit, lines),
        "FoundationNetworking no longer traps on trailers (\(exit): \(lines)): the Linux notes can say so")
    }

    @Test(
      "are ignored and the body delivered, in a process of its own, on each engine",
      arguments: ["urlSession", "libcurl"], replies.map(\.name))
    func fetchSurvivesInAChild(engine: String, reply: String) async throws {
      if engine == "libcurl", let reason = FetcherEngine.libcurl.unavailableReason {
        Issue.record("libcurl engine unavailable: \(reason)")
        return
      }
      let body = Self.replies.first { $0.name == reply }?.body ?? ""
      let (exit, lines) = try await ContentLengthTrapTests.runProbe(["fetcher", engine, reply])
      #expect(exit.exitCode == 0, "\(exit): \(lines)")
      #expect(lines.last == "survived", "\(lines)")
      #expect(lines.contains("ended: status 200 body \(body)"), "\(lines)")
      if engine == "urlSession" {
        // One gate per task (the redirect's target is fetched by a second task), each freed when
        // its task completed.
        let tasks = reply == "trailer-redirect" ? 2 : 1
        #expect(lines.contains("gates in place 0 of \(tasks)"), "\(lines)")
      }
    }
  #endif

  /// In this process, on the libcurl engine (which never trapped): the body arrives whole, with the
  /// response's own headers and none of the trailers.
  @Test("are ignored by the libcurl engine, in this process", arguments: replies.map(\.name))
  func libcurlEngineIgnoresTrailers(reply: String) async throws {
    if let reason = FetcherEngine.libcurl.unavailableReason {
      Issue.record("libcurl engine unavailable: \(reason)")
      return
    }
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    let bodies = [
      "trailer": "5\r\nhello\r\n0\r\nX-Trailer: yes\r\n\r\n",
      "trailers": "5\r\nhello\r\n0\r\nX-One: 1\r\nX-Two: 2\r\nServer-Timing: db;dur=53\r\n\r\n",
      "trailer-empty-body": "0\r\nX-Trailer: yes\r\n\r\n",
      "trailer-status-line": "5\r\nhello\r\n0\r\nHTTP/1.1 200 OK: yes\r\n\r\n",
      "trailer-redirect": "5\r\nhello\r\n0\r\nX-Trailer: yes\r\n\r\n",
    ]
    let wire = Data((head + (bodies[reply] ?? "")).utf8)
    let redirect = Data(
      ("HTTP/1.1 302 Found\r\nLocation: /next\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + "3\r\nbye\r\n0\r\nX-Redirect-Trailer: yes\r\n\r\n").utf8)
    let server = try HostileServer { head in
      let first =
        reply == "trailer-redirect" && String(decoding: head, as: UTF8.self).hasPrefix("GET /trailers ")
      return .bytes(first ? redirect : wire)
    }
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/trailers"))
    fetcher.engine = .libcurl
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let result = await fetcher.fetchResult(timeout: 30)
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(fetcher.statusCode == 200)
    let expected = Self.replies.first { $0.name == reply }?.body ?? ""
    #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == expected)
    let headers = fetcher.responseHeaders ?? [:]
    #expect(headers.keys.contains { $0.lowercased() == "transfer-encoding" }, "\(headers)")
    #expect(
      !headers.keys.contains { $0.lowercased().hasPrefix("x-") || $0.lowercased() == "server-timing" },
      "\(headers)")
  }
}
