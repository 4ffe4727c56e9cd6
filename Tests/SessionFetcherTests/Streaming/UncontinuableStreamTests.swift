import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// Streams that cannot be continued with a Range request (no length, no ranges: an event stream, a
/// chunked body) are paused without ending the connection on every engine: on the URLSession engine
/// on Linux through the libcurl handle inside FoundationNetworking (`ReceivePause`).
@Suite("Streams that cannot be continued", .ownThreads)
struct UncontinuableStreamTests {
  /// 64 KiB of numbered lines, sent again and again: every byte of the body says where it is.
  static let chunk: Data = {
    var text = ""
    for index in 0..<640 { text += String(format: "%08d", index) + String(repeating: "x", count: 91) + "\n" }
    return Data(text.utf8)
  }()

  static let head = Data(
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".utf8)

  /// The whole stream read, checked byte for byte against the repeated chunk.
  struct Reader {
    var total = 0
    var mismatches = 0

    mutating func add(_ data: Data) {
      let chunk = UncontinuableStreamTests.chunk
      var index = data.startIndex
      while index < data.endIndex {
        let offset = (total + (index - data.startIndex)) % chunk.count
        let length = min(data.endIndex - index, chunk.count - offset)
        let expected = chunk[(chunk.startIndex + offset)..<(chunk.startIndex + offset + length)]
        if data[index..<(index + length)] != expected { mismatches += 1 }
        index += length
      }
      total += data.count
    }
  }

  /// Waits (at most 30 s) until the server has sent nothing more for half a second; returns what it
  /// sent and whether it settled.
  static func serverSettles(_ server: HostileServer) async throws -> (sent: Int64, settled: Bool) {
    var previous: Int64 = -1
    var plateau = 0
    for _ in 0..<300 where plateau < 5 {
      try await Task.sleep(nanoseconds: 100_000_000)
      let now = server.bytesSent
      plateau = now == previous ? plateau + 1 : 0
      previous = now
    }
    return (previous, plateau >= 5)
  }

  /// Reads until the stream has given `count` bytes; false if it ended or failed first.
  static func read(
    _ iterator: inout FetcherStream.AsyncIterator, into reader: inout Reader, upTo count: Int64
  ) async throws -> Bool {
    while Int64(reader.total) < count {
      guard let chunk = try await iterator.next() else { return false }
      reader.add(chunk)
    }
    return true
  }

  /// An endless answer: 2 GiB, far more than a test reads.
  static let endless: Int64 = 2 << 30

  /// The consumer stops reading: the server's bytes stop growing (TCP makes it wait) far below what
  /// it would send, on one connection; once the consumer reads again, the stream goes on intact
  /// past what the server had sent while paused.
  ///
  /// FoundationNetworking reads ahead of its delegate, which a busy process can hold up: what it
  /// read before the pause took effect is buffered, and must stay far below the gigabytes an
  /// unpaused loopback transfer reaches.
  @Test func aSlowConsumerHoldsTheServerBack() async throws {
    let server = try HostileServer { _ in
      .repeating(head: Self.head, chunk: Self.chunk, totalBytes: Self.endless)
    }
    defer { server.stop() }
    let fetcher = SessionFetcher(request: URLRequest(url: server.url("/events")))
    fetcher.allowLocalhostRequest = true
    defer { fetcher.stopFetching() }
    let stream = try await bounded { try await fetcher.beginStreaming(highWaterMark: 1 << 20) }
    var iterator = stream.makeAsyncIterator()
    var reader = Reader()
    if let first = try await iterator.next() { reader.add(first) }
    let (sent, settled) = try await Self.serverSettles(server)
    #expect(settled, "the server kept writing: \(sent) bytes")
    #expect(sent < 1 << 30, "the server wrote \(sent) bytes while the consumer slept")
    let goesOn = try await Self.read(&iterator, into: &reader, upTo: sent + (8 << 20))
    #expect(goesOn, "the stream ended after \(reader.total) bytes")
    #expect(reader.mismatches == 0)
    #expect(server.connectionCount == 1)
    #expect(fetcher.error == nil)
  }

  /// A pause longer than the request's timeout is not a timeout: neither the fetcher's timer nor
  /// FoundationNetworking's (which a chunk restarts, and which the pause moves out of the way) ends
  /// the paused transfer, which goes on past what the server had sent while paused.
  @Test func aPauseLongerThanTheTimeoutIsNotATimeout() async throws {
    let server = try HostileServer { _ in
      .repeating(head: Self.head, chunk: Self.chunk, totalBytes: Self.endless)
    }
    defer { server.stop() }
    var request = URLRequest(url: server.url("/events"))
    request.timeoutInterval = 4
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    defer { fetcher.stopFetching() }
    let stream = try await bounded { try await fetcher.beginStreaming(highWaterMark: 256 * 1024) }
    var iterator = stream.makeAsyncIterator()
    var reader = Reader()
    if let first = try await iterator.next() { reader.add(first) }
    let (sent, settled) = try await Self.serverSettles(server)
    #expect(settled && sent < 1 << 30, "the server wrote \(sent) bytes while paused")
    // Paused: longer than both timers (the fetcher's 4 s and URLSession's backstop 2 s after it).
    try await Task.sleep(nanoseconds: 9_000_000_000)
    let goesOn = try await Self.read(&iterator, into: &reader, upTo: sent + (8 << 20))
    #expect(goesOn, "the stream ended after \(reader.total) bytes")
    #expect(reader.mismatches == 0)
    #expect(fetcher.error == nil)
  }
}
