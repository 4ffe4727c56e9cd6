import Foundation

/// Splits bytes that arrive in pieces into lines ended by CRLF, LF or CR.
///
/// A CR at the end of one piece and an LF at the start of the next make one line end. Line ends are
/// ASCII bytes, which never occur inside a multi-byte UTF-8 sequence, so a character split across
/// pieces stays whole in its line.
struct ByteLineSplitter: Sendable {
  private var pending: [UInt8] = []
  private var skipsLeadingLineFeed = false

  /// The lines completed by `bytes`, without their line ends.
  mutating func append(_ bytes: some Sequence<UInt8>) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    for byte in bytes {
      if skipsLeadingLineFeed {
        skipsLeadingLineFeed = false
        if byte == 0x0A { continue }
      }
      switch byte {
      case 0x0A:
        lines.append(pending)
        pending.removeAll(keepingCapacity: true)
      case 0x0D:
        lines.append(pending)
        pending.removeAll(keepingCapacity: true)
        skipsLeadingLineFeed = true
      default:
        pending.append(byte)
      }
    }
    return lines
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

  init(_ base: Base) {
    self.base = base
  }

  /// Iterates the lines.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: base.makeAsyncIterator())
  }

  /// Gives the lines in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: Base.AsyncIterator
    var splitter = ByteLineSplitter()
    var ready: [[UInt8]] = []
    var isBaseDone = false

    /// The next line, or nil at the end. Throws what the body stream throws.
    public mutating func next() async throws -> String? {
      while ready.isEmpty {
        if isBaseDone { return nil }
        if let chunk = try await base.next() {
          ready = splitter.append(chunk).reversed()
        } else {
          isBaseDone = true
          if let last = splitter.finish() { ready = [last] }
        }
      }
      return String(decoding: ready.removeLast(), as: UTF8.self)
    }
  }
}
