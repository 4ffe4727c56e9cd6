import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The conformance rows whose answer no route gives: the exact bytes a server sends (framing that
/// is unusual, obsolete or invalid, interim answers, odd status lines), from a `HostileServer`,
/// on the process's engine. A self-delimited answer is followed by silence, not a close, so a
/// client that waits for a body the framing rules say is not there hangs (to the test's bound)
/// instead of passing.
@Suite("Conformance: answers on the wire", .serialized)
struct ConformanceWireTests {
  /// What the server does after the answer.
  enum Ending: Sendable {
    /// Close the connection (a close-delimited body ends there).
    case close
    /// Keep the connection open and send nothing more.
    case stall
  }

  struct Row: Sendable, CustomStringConvertible {
    var name: String
    var method = "GET"
    /// The answer's bytes: its text in UTF-8.
    var answer: String
    var ending = Ending.stall
    var outcome = ConformanceTests.Outcome.success
    var status = 200
    /// The body the caller receives; nil when the row does not check it.
    var body: String?

    var description: String { name }
  }

  static let hello = "Content-Length: 5\r\n\r\nhello"
  static let chunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

  static let rows: [Row] = [
    Row(
      name: "chunk extensions are ignored",
      answer: chunkedHead + "5;name=value\r\nhello\r\n6;a=\"b c\";d\r\n world\r\n0\r\n\r\n",
      body: "hello world"),
    Row(
      name: "trailer fields after the last chunk",
      answer: chunkedHead + "5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n", body: "hello"),
    Row(
      name: "upper-case hexadecimal chunk sizes", answer: chunkedHead + "B\r\nhello world\r\n0\r\n\r\n",
      body: "hello world"),
    Row(
      name: "a close-delimited body ends with the connection",
      answer: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello, close", ending: .close,
      body: "hello, close"),
    Row(
      name: "Connection: close with a close-delimited body",
      answer: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbye", ending: .close, body: "bye"),
    Row(
      name: "an HTTP/1.0 answer without length", answer: "HTTP/1.0 200 OK\r\n\r\nold", ending: .close,
      body: "old"),
    Row(
      name: "an HTTP/1.0 answer with Content-Length", answer: "HTTP/1.0 200 OK\r\n" + hello, ending: .close,
      body: "hello"),
    Row(
      name: "204 with a Content-Length has no body",
      answer: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
      status: 204, body: ""),
    Row(
      name: "304 with a Content-Length has no body",
      answer: "HTTP/1.1 304 Not Modified\r\nETag: \"v\"\r\nContent-Length: 5\r\n\r\n", outcome: .status(304)),
    Row(
      name: "an answer to HEAD with Content-Length has no body", method: "HEAD",
      answer: "HTTP/1.1 200 OK\r\n" + hello,
      body: ""),
    Row(
      name: "an answer to HEAD with Transfer-Encoding: chunked has no body", method: "HEAD",
      answer: chunkedHead,
      body: ""),
    Row(
      name: "100 Continue before the answer is skipped",
      answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n" + hello, body: "hello"),
    Row(
      name: "103 Early Hints before the answer is skipped",
      answer: "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n"
        + hello,
      body: "hello"),
    Row(
      name: "several interim answers before the answer are skipped",
      answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n"
        + "HTTP/1.1 200 OK\r\n" + hello,
      body: "hello"),
    Row(
      name: "an interim answer and then a close is an error", answer: "HTTP/1.1 100 Continue\r\n\r\n",
      ending: .close,
      outcome: .transport(nil)),
    Row(
      name: "conflicting Content-Length fields are rejected",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", ending: .close,
      outcome: .transport(.badServerResponse)),
    Row(
      name: "a Content-Length list of different values is rejected",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!", ending: .close,
      outcome: .transport(.badServerResponse)),
    Row(
      name: "repeated Content-Length fields of one length are accepted",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", body: "hello"),
    Row(
      name: "a non-numeric Content-Length is rejected",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\nhello",
      ending: .close, outcome: .transport(nil)),
    Row(
      name: "a negative Content-Length is rejected",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello",
      ending: .close, outcome: .transport(nil)),
    Row(
      name: "whitespace around a Content-Length value is ignored",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: \t 5 \t\r\n\r\nhello", body: "hello"),
    Row(
      name: "LF-only line endings are accepted", answer: "HTTP/1.1 200 OK\nContent-Length: 5\n\nhello",
      body: "hello"),
    Row(
      name: "a folded header line is accepted",
      answer: "HTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\n" + hello, body: "hello"),
    Row(
      name: "a chunk size that is not hexadecimal is rejected",
      answer: chunkedHead + "zz\r\nhello\r\n0\r\n\r\n",
      ending: .close, outcome: .transport(nil)),
    Row(
      name: "an overflowing chunk size is rejected",
      answer: chunkedHead + "1FFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", ending: .close,
      outcome: .transport(nil)),
    Row(
      name: "a chunked body cut off mid-chunk is an error", answer: chunkedHead + "5\r\nhel", ending: .close,
      outcome: .transport(nil)),
    Row(
      name: "a 64 KiB header line is accepted",
      answer: "HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 65_536) + "\r\n" + hello,
      body: "hello"),
    Row(
      name: "a thousand header fields are accepted",
      answer: "HTTP/1.1 200 OK\r\n" + (0..<1000).map { "X-Field-\($0): \($0)\r\n" }.joined() + hello,
      body: "hello"),
    Row(
      name: "bytes past the Content-Length are not part of the body",
      answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA", ending: .close, body: "hello"),
    Row(
      name: "Content-Length: 0 ends the body at once", answer: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
      body: ""),
    Row(
      name: "an answer without header fields and a close", answer: "HTTP/1.1 200 OK\r\n\r\n", ending: .close,
      body: ""),
    Row(
      name: "a header field with an empty value", answer: "HTTP/1.1 200 OK\r\nX-Empty:\r\n" + hello,
      body: "hello"),
    Row(
      name: "an interim answer before an error status",
      answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\ngone",
      outcome: .status(404), body: "gone"),
    Row(
      name: "101 Switching Protocols to a request that asked for no upgrade is refused",
      answer: "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
      outcome: .transport(.badServerResponse)),
    Row(name: "a status line without reason phrase", answer: "HTTP/1.1 200 \r\n" + hello, body: "hello"),
    Row(
      name: "a status code the client does not know (299)", answer: "HTTP/1.1 299 Whatever\r\n" + hello,
      status: 299, body: "hello"),
    Row(
      name: "non-ASCII bytes in a header value are accepted",
      answer: "HTTP/1.1 200 OK\r\nX-Name: caf\u{e9}\r\n" + hello,
      body: "hello"),
    Row(
      name: "Content-Encoding: identity passes through",
      answer: "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n" + hello, body: "hello"),
    Row(
      name: "an unknown Content-Encoding cannot be decoded",
      answer: "HTTP/1.1 200 OK\r\nContent-Encoding: x-unknown\r\n" + hello,
      outcome: .transport(.cannotDecodeContentData)),
  ]

  @Test(arguments: rows)
  func behaviour(_ row: Row) async throws {
    let answer = Data(row.answer.utf8)
    let ending = row.ending
    let server = try HostileServer { _ in ending == .close ? .bytes(answer) : .bytesThenStall(answer) }
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/wire"))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.request?.httpMethod = row.method
    let result = await fetcher.fetchResult(timeout: 60)
    let table = ConformanceTests.Row(
      name: row.name, path: "/wire", outcome: row.outcome, status: row.status,
      received: row.body.map { .text($0) })
    ConformanceTests.check(result, of: fetcher, against: table)
  }
}
