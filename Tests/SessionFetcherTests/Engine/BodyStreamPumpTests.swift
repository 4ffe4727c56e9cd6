import Foundation
import Testing

@testable import SessionFetcher

#if canImport(Darwin)
  import FetcherTesting
#endif

/// The copy that feeds a bound stream pair for Apple's URLSession (`BodyStreamPump`), over a sink
/// of the test's own: every byte in order, both streams closed, and a stream of exact length that
/// is not that length left incomplete with the error the libcurl engine gives.
@Suite("Body stream pump")
struct BodyStreamPumpTests {
  /// Records what is written to it, and whether it was opened and closed; takes at most `limit`
  /// bytes in all (then refuses, as a bound pair does once URLSession closed its half).
  final class RecordingSink: BodyStreamSink {
    var bytes: [UInt8] = []
    var opened = false
    var closed = false
    var limit = Int.max

    func open() { opened = true }
    func close() { closed = true }
    func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
      let count = min(length, limit - bytes.count, 4_000)
      guard count > 0 else { return -1 }
      bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
      return count
    }
  }

  /// Hands out `bytes` at most `piece` at a time, then fails with `failure` when one is given.
  final class TricklingSource: InputStream {
    let bytes: [UInt8]
    let piece: Int
    let failure: (any Error)?
    var offset = 0
    var closed = false
    private var failed = false

    init(_ bytes: [UInt8], piece: Int, failure: (any Error)? = nil) {
      self.bytes = bytes
      self.piece = piece
      self.failure = failure
      super.init(data: Data())
    }

    override func open() {}
    override func close() { closed = true }
    override var hasBytesAvailable: Bool { true }
    override var streamError: (any Error)? { failed ? failure : nil }
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
      let count = min(length, piece, bytes.count - offset)
      if count == 0, failure != nil {
        failed = true
        return -1
      }
      for index in 0..<count { buffer[index] = bytes[offset + index] }
      offset += count
      return count
    }
  }

  static func pattern(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 251) }
  }

  @Test(
    arguments: [
      (0, nil), (1, nil), (200_000, nil), (0, 0), (1, 1), (65_535, 65_535), (65_536, 65_536),
      (65_537, 65_537),
      (200_000, 200_000),
    ] as [(Int, Int64?)])
  func everyByteArrivesInOrderAndBothStreamsClose(count: Int, length: Int64?) {
    for piece in [7, 100_000] {
      let source = TricklingSource(Self.pattern(count), piece: piece)
      let sink = RecordingSink()
      #expect(BodyStreamPump.pump(source, into: sink, length: length) == nil)
      #expect(sink.bytes == Self.pattern(count), "piece \(piece)")
      #expect(sink.opened && sink.closed && source.closed)
    }
  }

  @Test(
    arguments: [
      (99, 100, "The request body stream ended after 99 of its 100 bytes"),
      (0, 1, "The request body stream ended after 0 of its 1 bytes"),
      (101, 100, "The request body stream ran past its 100 bytes"),
      (70_000, 65_536, "The request body stream ran past its 65536 bytes"),
    ] as [(Int, Int64, String)])
  func aStreamNotOfItsLengthStaysIncomplete(count: Int, length: Int64, message: String) throws {
    for piece in [1, 7, 100_000] {
      let source = TricklingSource(Self.pattern(count), piece: piece)
      let sink = RecordingSink()
      var reportedWhileOpen = false
      let failure = try #require(
        BodyStreamPump.pump(source, into: sink, length: length) { reported in
          reportedWhileOpen = reported != nil && !sink.closed && !source.closed
        })
      #expect(failure.code == .requestBodyStreamExhausted)
      #expect(failure.localizedDescription == message)
      // The task's error is in place before URLSession can see the body end.
      #expect(reportedWhileOpen)
      // Never the whole length: the request is never complete with a body not its own.
      #expect(sink.bytes.count < Int(length))
      #expect(sink.bytes == Array(Self.pattern(count).prefix(sink.bytes.count)))
      #expect(sink.closed && source.closed)
    }
  }

  @Test(arguments: [nil, 50] as [Int64?])
  func aFailingSourceFailsWithItsError(length: Int64?) throws {
    let cause = NSError(domain: "test", code: 7, userInfo: [NSLocalizedDescriptionKey: "disk gone"])
    let source = TricklingSource(Self.pattern(20), piece: 8, failure: cause)
    let sink = RecordingSink()
    let failure = try #require(BodyStreamPump.pump(source, into: sink, length: length))
    #expect(failure.code == .requestBodyStreamExhausted)
    #expect(failure.localizedDescription == "The request body stream failed: disk gone")
    #expect(sink.bytes == Self.pattern(20) && sink.closed && source.closed)
  }

  /// URLSession closed its half (the task ended): the copy stops there, with nothing to report.
  @Test func aSinkThatTakesNoMoreEndsTheCopy() {
    let source = TricklingSource(Self.pattern(300_000), piece: 100_000)
    let sink = RecordingSink()
    sink.limit = 10_000
    #expect(BodyStreamPump.pump(source, into: sink, length: nil) == nil)
    #expect(sink.bytes == Self.pattern(10_000) && sink.closed && source.closed)
    #expect(source.offset < 300_000)
  }

  #if canImport(Darwin)
    /// The bound pair URLSession reads: every byte in order, then its end, with the failure of a
    /// source not of its length reported.
    @Test(arguments: [nil, 150_000, 150_001] as [Int64?])
    func theBoundPairDeliversTheSource(length: Int64?) async {
      let failures = Recorder<URLError>()
      let input = BodyStreamPump.boundStream(
        reading: TricklingSource(Self.pattern(150_000), piece: 9_000), length: length
      ) { failures.append($0) }
      input.open()
      defer { input.close() }
      var received: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 10_000)
      while true {
        let count = input.read(&buffer, maxLength: buffer.count)
        guard count > 0 else { break }
        received += buffer.prefix(count)
      }
      let whole = length == nil || length == 150_000
      #expect(whole ? received == Self.pattern(150_000) : received.count < Int(length ?? 0))
      if whole {
        #expect(failures.values.isEmpty)
      } else {
        #expect(await eventually(timeout: 10) { failures.count == 1 })
      }
    }
  #endif
}
