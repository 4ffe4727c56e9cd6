import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// The line and event limits as pure logic: where exactly a line or an event becomes too long,
/// however the bytes are cut into pieces.
@Suite("Stream bounds: splitter and parser")
struct StreamBoundsUnitTests {
  struct LineRow: Sendable, CustomTestStringConvertible {
    var name: String
    var limit: Int
    var pieces: [String]
    /// The lines given before the end (nil when the splitter throws).
    var lines: [String]?
    var testDescription: String { name }
  }

  static let lineRows: [LineRow] = [
    LineRow(name: "a line at the limit", limit: 4, pieces: ["abcd\n"], lines: ["abcd"]),
    LineRow(name: "a line one byte over", limit: 4, pieces: ["abcde\n"], lines: nil),
    LineRow(name: "at the limit across pieces", limit: 4, pieces: ["ab", "c", "d\r\n"], lines: ["abcd"]),
    LineRow(name: "over the limit across pieces", limit: 4, pieces: ["ab", "cd", "e"], lines: nil),
    LineRow(name: "over the limit without a line end", limit: 4, pieces: ["abcde"], lines: nil),
    LineRow(
      name: "the line end is not counted", limit: 2, pieces: ["ab\r", "\ncd\r\n"], lines: ["ab", "cd"]),
    LineRow(
      name: "many lines at the limit in one piece", limit: 3, pieces: ["abc\ndef\rghi\r\n\n"],
      lines: ["abc", "def", "ghi", ""]),
    LineRow(
      name: "a CR split from its LF", limit: 3, pieces: ["abc\r", "\n", "def\n"], lines: ["abc", "def"]),
    LineRow(name: "a later line over the limit", limit: 3, pieces: ["abc\n", "defg\n"], lines: nil),
    LineRow(name: "limit 1", limit: 1, pieces: ["a\nb\n\n"], lines: ["a", "b", ""]),
  ]

  @Test(arguments: lineRows)
  func splitterBoundsEachLine(_ row: LineRow) {
    var splitter = ByteLineSplitter(maximumLineLength: row.limit)
    var lines: [String]? = []
    for piece in row.pieces {
      do {
        lines? += try splitter.append(Data(piece.utf8)).map { String(decoding: $0, as: UTF8.self) }
      } catch {
        #expect(error as? ByteLineSplitter.LineTooLong == ByteLineSplitter.LineTooLong(limit: row.limit))
        lines = nil
        break
      }
    }
    #expect(lines == row.lines)
  }

  /// Every way of cutting the input into two pieces gives the same lines (or the same failure).
  @Test(arguments: lineRows)
  func splitterDoesNotDependOnPieces(_ row: LineRow) {
    let bytes = Array(row.pieces.joined().utf8)
    for cut in 0...bytes.count {
      var splitter = ByteLineSplitter(maximumLineLength: row.limit)
      var lines: [String]? = []
      do {
        for piece in [bytes[..<cut], bytes[cut...]] {
          lines? += try splitter.append(Data(piece)).map { String(decoding: $0, as: UTF8.self) }
        }
      } catch {
        lines = nil
      }
      #expect(lines == row.lines, "cut at \(cut)")
    }
  }

  struct EventRow: Sendable, CustomTestStringConvertible {
    var name: String
    var limit: Int
    var input: String
    /// The events' data (nil when the parser throws).
    var data: [String]?
    var testDescription: String { name }
  }

  static let eventRows: [EventRow] = [
    EventRow(name: "data at the limit", limit: 4, input: "data: abcd\n\n", data: ["abcd"]),
    EventRow(name: "data one byte over", limit: 4, input: "data: abcde\n\n", data: nil),
    EventRow(
      name: "lines joined with LF at the limit", limit: 5, input: "data: ab\ndata: cd\n\n", data: ["ab\ncd"]),
    EventRow(name: "lines joined with LF one over", limit: 4, input: "data: ab\ndata: cd\n\n", data: nil),
    EventRow(
      name: "the limit is per event", limit: 4, input: "data: abcd\n\ndata: efgh\n\n", data: ["abcd", "efgh"]),
    EventRow(
      name: "data lines that never end an event", limit: 8, input: String(repeating: "data: x\n", count: 5),
      data: nil),
    EventRow(
      name: "an endless line", limit: 8, input: "data: " + String(repeating: "x", count: 40), data: nil),
    EventRow(name: "an endless comment", limit: 8, input: ":" + String(repeating: "x", count: 40), data: nil),
    EventRow(
      name: "comments are not event data", limit: 4, input: ": 123456\n: 123456\ndata: abcd\n\n",
      data: ["abcd"]),
    EventRow(name: "retry at the limit", limit: 4, input: "retry: 1234\ndata: a\n\n", data: ["a"]),
    EventRow(
      name: "empty data lines count their LF", limit: 2, input: "data\ndata\ndata\n\n", data: ["\n\n"]),
    EventRow(
      name: "empty data lines past the limit", limit: 2, input: "data\ndata\ndata\ndata\n\n", data: nil),
  ]

  @Test(arguments: eventRows)
  func parserBoundsEachEvent(_ row: EventRow) {
    let bytes = Array(row.input.utf8)
    // Whole, byte by byte, and cut in two everywhere: the same events or the same failure.
    var feeds: [[ArraySlice<UInt8>]] = [[bytes[...]], bytes.indices.map { bytes[$0...$0] }]
    for cut in 0...bytes.count { feeds.append([bytes[..<cut], bytes[cut...]]) }
    for pieces in feeds {
      var parser = ServerSentEventParser(maximumEventLength: row.limit)
      var data: [String]? = []
      do {
        for piece in pieces { data? += try parser.parse(Data(piece)).map(\.data) }
      } catch {
        #expect(error as? SessionFetcherError == .responseTooLarge(limit: Int64(row.limit)))
        data = nil
      }
      #expect(data == row.data, "\(pieces.count) pieces")
    }
  }

  @Test func parserThrowsAgainAfterTheLimit() throws {
    var parser = ServerSentEventParser(maximumEventLength: 2)
    #expect(throws: SessionFetcherError.responseTooLarge(limit: 2)) {
      try parser.parse(Data("data: abcdefghij".utf8))
    }
    #expect(throws: SessionFetcherError.responseTooLarge(limit: 2)) {
      try parser.parse(Data("\n\ndata: a\n\n".utf8))
    }
  }

  @Test func defaults() {
    #expect(SessionFetcher.defaultMaximumLineLength == 1_048_576)
    #expect(SessionFetcher.defaultMaximumEventLength == 16 * 1_048_576)
    #expect(ServerSentEventParser().maximumEventLength == 16 * 1_048_576)
    let fetcher = SessionFetcher(request: URLRequest(url: URL(string: "http://127.0.0.1/")!))
    #expect(fetcher.maximumLineLength == 1_048_576)
    #expect(fetcher.maximumEventLength == 16_777_216)
  }
}

/// The limits against a raw-socket server that sends an endless line or an endless event: the
/// server stops sending once the fetcher gives up. Where a line or an event becomes too long, an
/// event source's end and the limits checked at begin are in `ScriptedStreamBoundsTests`.
@Suite("Stream bounds: hostile servers", .serialized)
struct StreamBoundsTests {
  static let limit = 64 * 1024
  /// What the server may send in all: far more than the limit, so that a client that reads to the
  /// end (or keeps everything) is caught.
  static let budget: Int64 = 64 * 1024 * 1024

  static func head(_ contentType: String) -> Data {
    Data("HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nConnection: close\r\n\r\n".utf8)
  }

  func fetcher(_ server: HostileServer) -> SessionFetcher {
    let fetcher = SessionFetcher(request: URLRequest(url: server.url("/stream")))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.maximumLineLength = Self.limit
    fetcher.maximumEventLength = Self.limit
    // Not charged for streamed bytes: the stream would otherwise fail at 1 MiB.
    fetcher.maximumResponseBodyLength = 1024 * 1024
    return fetcher
  }

  /// The fetch stopped at once. On the libcurl engine the server also stopped sending well before
  /// its budget: the transfer was cancelled, not read on. FoundationNetworking cancels through a
  /// work queue that falls seconds behind while other transfers run at loopback speed, reading on
  /// meanwhile (what it reads is dropped): there only the stop is checked.
  func expectTransferCancelled(_ server: HostileServer, _ recorder: NotificationRecorder) async {
    #expect(await eventually { recorder.count(.sessionFetcherStopped) == 1 })
    guard FetcherEngine.default == .libcurl else { return }
    var last = server.bytesSent
    let settled = await eventually {
      let now = server.bytesSent
      defer { last = now }
      return now == last && now < Self.budget
    }
    #expect(settled)
    #expect(server.bytesSent < 32 * 1024 * 1024, "the server sent \(server.bytesSent) bytes")
  }

  @Test func anEndlessLineEndsTheLines() async throws {
    let server = try HostileServer { _ in
      .repeating(
        head: Self.head("text/plain"), chunk: Data(repeating: 0x61, count: 16_384), totalBytes: Self.budget)
    }
    defer { server.stop() }
    let fetcher = fetcher(server)
    let recorder = NotificationRecorder([fetcher])
    let outcome = try await bounded(60) { () -> (Int, (any Error)?) in
      var count = 0
      do {
        for try await _ in try await fetcher.beginStreaming().lines { count += 1 }
      } catch {
        return (count, error)
      }
      return (count, nil)
    }
    #expect(outcome.0 == 0)
    #expect(outcome.1 as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    await expectTransferCancelled(server, recorder)
  }

  @Test func endlessDataLinesEndTheEvents() async throws {
    let server = try HostileServer { _ in
      .repeating(
        head: Self.head("text/event-stream"), chunk: Data(String(repeating: "data: x\n", count: 512).utf8),
        totalBytes: Self.budget)
    }
    defer { server.stop() }
    let fetcher = fetcher(server)
    let recorder = NotificationRecorder([fetcher])
    let error = try await bounded(60) { () -> (any Error)? in
      do {
        for try await _ in fetcher.events() {}
      } catch {
        return error
      }
      return nil
    }
    #expect(error as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    await expectTransferCancelled(server, recorder)
  }

  @Test func anEndlessLineEndsTheEvents() async throws {
    let server = try HostileServer { _ in
      .repeating(
        head: Self.head("text/event-stream") + Data("data: ".utf8),
        chunk: Data(repeating: 0x78, count: 16_384),
        totalBytes: Self.budget)
    }
    defer { server.stop() }
    let fetcher = fetcher(server)
    let recorder = NotificationRecorder([fetcher])
    let error = try await bounded(60) { () -> (any Error)? in
      do {
        for try await _ in try await fetcher.beginStreaming().events {}
      } catch {
        return error
      }
      return nil
    }
    #expect(error as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    await expectTransferCancelled(server, recorder)
  }
}
