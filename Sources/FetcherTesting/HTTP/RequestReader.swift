import Foundation

/// Where the bytes of a request body go while they are read: always counted and checksummed,
/// kept only when the route needs them (so a `/upload?discard=1` of gigabytes stays small).
struct BodySink {
  let keepsBytes: Bool
  private(set) var data = Data()
  private(set) var length = 0
  private(set) var hash = FNV1a64()

  init(keepsBytes: Bool, expectedLength: Int? = nil) {
    self.keepsBytes = keepsBytes
    if keepsBytes, let expectedLength {
      data.reserveCapacity(min(expectedLength, 64 << 20))
    }
  }

  mutating func append(_ bytes: UnsafeRawBufferPointer) {
    guard !bytes.isEmpty else { return }
    length += bytes.count
    hash.update(bytes)
    if keepsBytes { data.append(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
  }
}

/// Reads requests from one connection through a buffer: heads, `Content-Length` bodies and
/// chunked bodies.
final class RequestReader {
  /// The largest request head accepted; longer ones are answered with 400.
  static let maximumHeadSize = 64 * 1024
  /// The longest chunk-size or trailer line accepted.
  static let maximumLineSize = 8 * 1024

  private let socket: ConnectionSocket
  private var storage: [UInt8]
  /// Unconsumed input is `storage[start..<end]`.
  private var start = 0
  private var end = 0

  /// The buffer starts small, since most connections carry small requests and idle kept-alive
  /// connections should cost little, and grows up to this size for long heads and large bodies.
  static let maximumCapacity = 128 * 1024

  init(socket: ConnectionSocket, initialCapacity: Int = 8 * 1024) {
    self.socket = socket
    self.storage = [UInt8](repeating: 0, count: min(initialCapacity, RequestReader.maximumCapacity))
  }

  /// Reads the next request head, without its terminating blank line.
  ///
  /// - Returns: `nil` when the peer closed the connection between requests.
  func readHead() throws(ConnectionError) -> [UInt8]? {
    var scannedCount = 0
    while true {
      if let (headEnd, consumedEnd) = findHeadEnd(from: start + scannedCount) {
        let head = Array(storage[start..<headEnd])
        start = consumedEnd
        return head
      }
      if end - start > RequestReader.maximumHeadSize {
        throw .badRequest("request head too large")
      }
      // The last two bytes may begin a line ending that the next read completes.
      scannedCount = max(0, end - start - 2)
      let hadInput = end > start
      if try fill() == 0 {
        if hadInput { throw .peerClosed }
        return nil
      }
    }
  }

  /// Reads exactly `count` body bytes into `sink`.
  func readBody(count: Int, into sink: inout BodySink) throws(ConnectionError) {
    var remaining = count
    if remaining > storage.count { grow() }
    while remaining > 0 {
      if start == end {
        if try fill() == 0 { throw .peerClosed }
      }
      let piece = min(remaining, end - start)
      let from = start
      storage.withUnsafeBytes { all in
        sink.append(UnsafeRawBufferPointer(rebasing: all[from..<(from + piece)]))
      }
      start += piece
      remaining -= piece
    }
  }

  /// Reads a chunked body (RFC 9112 §7.1) into `sink`, including the trailer section.
  func readChunkedBody(into sink: inout BodySink) throws(ConnectionError) {
    while true {
      let line = try readLine()
      let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
        .drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
      let digits = sizeText.prefix { RequestTarget.hexValue($0) != nil }
      let rest = sizeText.dropFirst(digits.count)
      guard !digits.isEmpty, digits.count <= 15,
        rest.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
      else { throw .badRequest("malformed chunk size") }
      let size = digits.reduce(0) { $0 << 4 | Int(RequestTarget.hexValue($1)!) }
      if size == 0 { break }
      try readBody(count: size, into: &sink)
      guard try readLine().isEmpty else { throw .badRequest("chunk data not followed by CRLF") }
    }
    // Trailer fields, ignored, up to the blank line.
    var trailerBytes = 0
    while true {
      let line = try readLine()
      if line.isEmpty { return }
      trailerBytes += line.count
      if trailerBytes > RequestReader.maximumHeadSize { throw .badRequest("trailers too large") }
    }
  }

  /// Reads one line, without its CRLF (or bare LF).
  private func readLine() throws(ConnectionError) -> [UInt8] {
    var scanFrom = start
    while true {
      if let newline = storage[scanFrom..<end].firstIndex(of: UInt8(ascii: "\n")) {
        var lineEnd = newline
        if lineEnd > start && storage[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
        let line = Array(storage[start..<lineEnd])
        start = newline + 1
        return line
      }
      if end - start > RequestReader.maximumLineSize { throw .badRequest("line too long") }
      let offset = end - start
      if try fill() == 0 { throw .peerClosed }
      scanFrom = start + offset
    }
  }

  /// Finds the blank line that ends a head: returns where the head's bytes end and where the
  /// input after the blank line starts.
  private func findHeadEnd(from scanFrom: Int) -> (Int, Int)? {
    var index = max(scanFrom, start)
    while index < end {
      guard storage[index] == UInt8(ascii: "\n") else {
        index += 1
        continue
      }
      // A line that is empty apart from its ending, and not the very first bytes (leading
      // empty lines are skipped by the head parser).
      if index + 1 < end && storage[index + 1] == UInt8(ascii: "\n") {
        if hasRequestLine(before: index) { return (index, index + 2) }
      } else if index + 2 < end && storage[index + 1] == UInt8(ascii: "\r")
        && storage[index + 2] == UInt8(ascii: "\n")
      {
        if hasRequestLine(before: index) { return (index, index + 3) }
      }
      index += 1
    }
    return nil
  }

  private func hasRequestLine(before index: Int) -> Bool {
    storage[start..<index].contains { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
  }

  /// Doubles the buffer, up to ``maximumCapacity``.
  private func grow() {
    let target = min(storage.count * 2, RequestReader.maximumCapacity)
    if target > storage.count {
      storage.append(contentsOf: repeatElement(0, count: target - storage.count))
    }
  }

  /// Receives more input after `end`, first moving unconsumed bytes to the front when needed.
  ///
  /// - Returns: the number of bytes received, `0` at end of stream.
  private func fill() throws(ConnectionError) -> Int {
    if start == end {
      start = 0
      end = 0
    } else if end == storage.count {
      if start == 0 {
        // Full of one unfinished head or line: make room (the callers bound their sizes).
        grow()
      } else {
        storage.withUnsafeMutableBytes { all in
          all.baseAddress!.copyMemory(from: all.baseAddress! + start, byteCount: end - start)
        }
        end -= start
        start = 0
      }
    }
    guard end < storage.count else { throw .badRequest("input buffer full") }
    let from = end
    let outcome = storage.withUnsafeMutableBytes { all in
      Result { () throws(ConnectionError) in
        try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: all[from...]))
      }
    }
    let received = try outcome.get()
    end += received
    return received
  }
}
