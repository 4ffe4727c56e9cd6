import Foundation

/// Splits bytes that arrive in pieces into lines ended by CRLF, LF or CR, none longer than a limit.
///
/// A CR at the end of one piece and an LF at the start of the next make one line end. Line ends are
/// ASCII bytes, which never occur inside a multi-byte UTF-8 sequence, so a character split across
/// pieces stays whole in its line. A line (without its line end) may be `maximumLineLength` bytes
/// long; one byte more throws ``LineTooLong`` as soon as that byte arrives, without waiting for the
/// line's end, so an endless line never holds more than the limit.
struct ByteLineSplitter: Sendable {
  /// A line grew past the splitter's limit.
  struct LineTooLong: Error, Equatable {
    var limit: Int
  }

  let maximumLineLength: Int
  private var pending: [UInt8] = []
  private var skipsLeadingLineFeed = false

  init(maximumLineLength: Int = .max) {
    self.maximumLineLength = max(1, maximumLineLength)
  }

  /// The lines completed by `bytes`, without their line ends.
  ///
  /// - Throws: ``LineTooLong`` when the line in progress grows past the limit; the splitter is
  ///   then left as it was before the offending bytes were counted and must not be used further.
  mutating func append(_ bytes: some DataProtocol) throws -> [[UInt8]] {
    var lines: [[UInt8]] = []
    for region in bytes.regions {
      try region.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
        try split(raw, into: &lines)
      }
    }
    return lines
  }

  private mutating func split(_ raw: UnsafeRawBufferPointer, into lines: inout [[UInt8]]) throws {
    var start = 0
    let count = raw.count
    if skipsLeadingLineFeed, count > 0 {
      skipsLeadingLineFeed = false
      if raw[0] == 0x0A { start = 1 }
    }
    while start < count {
      var end = start
      while end < count, raw[end] != 0x0A, raw[end] != 0x0D { end += 1 }
      let length = end - start
      guard length <= maximumLineLength - pending.count else {
        throw LineTooLong(limit: maximumLineLength)
      }
      if end == count {
        pending.append(contentsOf: raw[start..<end])
        return
      }
      if pending.isEmpty {
        lines.append(Array(raw[start..<end]))
      } else {
        pending.append(contentsOf: raw[start..<end])
        lines.append(pending)
        pending.removeAll(keepingCapacity: false)
      }
      if raw[end] == 0x0D {
        if end + 1 < count {
          if raw[end + 1] == 0x0A { end += 1 }
        } else {
          skipsLeadingLineFeed = true
        }
      }
      start = end + 1
    }
  }

  /// The unterminated last line, if any bytes are left.
  mutating func finish() -> [UInt8]? {
    defer { pending = [] }
    return pending.isEmpty ? nil : pending
  }
}

/// The lines of a body stream as `String`s, decoded as UTF-8 (invalid bytes become U+FFFD).
///
/// Lines end with CRLF, LF or CR, which are not part of the line; an unterminated last line is
/// still given. Obtain one with ``FetcherStream/lines``.
///
/// A line may be ``SessionFetcher/maximumLineLength`` bytes long (1 MiB by default, without its
/// line end). A longer one ends the sequence with ``SessionFetcherError/responseTooLarge(limit:)``
/// as soon as its bytes pass the limit (it never waits for the line's end), and stops the fetch:
/// the rest of the body is not read.
///
/// ```swift
/// for try await line in try await fetcher.beginStreaming().lines {
///   let record = try JSONDecoder().decode(Record.self, from: Data(line.utf8))
/// }
/// ```
public struct StreamLines<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable
where Base.Element == Data {
  /// A line, without its line end.
  public typealias Element = String

  let base: Base
  let maximumLineLength: Int

  init(_ base: Base, maximumLineLength: Int) {
    self.base = base
    self.maximumLineLength = maximumLineLength
  }

  /// Iterates the lines.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      base: base.makeAsyncIterator(), splitter: ByteLineSplitter(maximumLineLength: maximumLineLength))
  }

  /// Gives the lines in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: Base.AsyncIterator
    var splitter: ByteLineSplitter
    var ready: [[UInt8]] = []
    var isBaseDone = false

    /// The next line, or nil at the end.
    ///
    /// - Throws: what the body stream throws, or ``SessionFetcherError/responseTooLarge(limit:)``
    ///   (once; the fetch is stopped) for a line longer than ``SessionFetcher/maximumLineLength``.
    public mutating func next() async throws -> String? {
      while ready.isEmpty {
        if isBaseDone { return nil }
        if let chunk = try await base.next() {
          do {
            ready = try splitter.append(chunk).reversed()
          } catch {
            isBaseDone = true
            stopStreamTransfer(&base)
            throw SessionFetcherError.responseTooLarge(limit: Int64(splitter.maximumLineLength))
          }
        } else {
          isBaseDone = true
          if let last = splitter.finish() { ready = [last] }
        }
      }
      return String(decoding: ready.removeLast(), as: UTF8.self)
    }
  }
}

/// A body stream's iterator whose fetch can be stopped: a line or event past its limit ends the
/// transfer at once instead of reading the rest of the body.
protocol StreamTransferStopping {
  func stopTransfer()
}

/// Stops the fetch behind `iterator` when it is one of the library's body streams.
func stopStreamTransfer<Iterator>(_ iterator: inout Iterator) {
  (iterator as? any StreamTransferStopping)?.stopTransfer()
}
