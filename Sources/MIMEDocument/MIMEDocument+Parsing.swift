import Foundation

extension MIMEDocument {
  /// One part of a parsed multipart document.
  ///
  /// ```swift
  /// let part = MIMEDocument.Part(headers: ["Content-Type": "text/plain"], body: Data("Hi".utf8))
  /// ```
  public struct Part: Sendable, Hashable {
    /// The part's headers, names as written; empty when the part has none or they are not UTF-8.
    public var headers: [String: String]
    /// The part's body.
    public var body: Data

    /// Creates a part.
    public init(headers: [String: String] = [:], body: Data) {
      self.headers = headers
      self.body = body
    }
  }

  /// Splits a multipart document into its parts, following the original's rules.
  ///
  /// - Everything before the first boundary (the preamble) and after the last (the epilogue) is
  ///   ignored; fewer than two occurrences of `boundary` mean the data is not a multipart document
  ///   and the result is `nil`.
  /// - A part's bytes run from two bytes after one boundary (its CRLF) to four bytes before the next
  ///   (the CRLF and `--` of the delimiter); a part shorter than two bytes is dropped. If no part is
  ///   left, the result is `nil`.
  /// - A part that starts with CRLF has no headers; its body follows the CRLF. Otherwise the headers
  ///   end at the first CRLFCRLF and the body follows it; a part without CRLFCRLF is malformed and
  ///   yields no headers and an empty body.
  /// - Header lines are read as the original's `NSScanner` loop does: `Name: value` with whitespace
  ///   around the name skipped before it and after the colon, the value up to the end of its line;
  ///   reading stops at the first line without a colon or with an empty value. A header block that
  ///   is not UTF-8 gives no headers.
  ///
  /// Memory and time are proportional to `data.count`: boundaries and header ends are found with a
  /// search over the raw bytes, each body is one copy of its bytes, indexed from 0, and malformed
  /// input (truncated documents, missing closing delimiters, boundaries inside headers, huge header
  /// blocks) yields fewer parts or `nil`, never a crash. To parse without copying the bodies, see
  /// ``parts(boundary:data:sharingInput:)``.
  ///
  /// ```swift
  /// let (data, boundary) = try document.generateData()
  /// if let parts = MIMEDocument.parts(boundary: boundary, data: data) {
  ///   for part in parts { print(part.headers["Content-Type"] ?? "-", part.body.count) }
  /// }
  /// ```
  public static func parts(boundary: String, data: Data) -> [Part]? {
    parts(boundary: boundary, data: data, sharingInput: false)
  }

  /// Splits a multipart document into its parts, by the rules of ``parts(boundary:data:)``, with
  /// bodies that are either copies or slices of `data`.
  ///
  /// With `sharingInput: false` the result is exactly that of ``parts(boundary:data:)``: each body
  /// is a copy of its bytes, indexed from 0.
  ///
  /// With `sharingInput: true` each body is a slice of `data` (`data[range]`), which shares the
  /// input's storage instead of copying it: a large document parses in about its own size and at
  /// the speed of the boundary search. The headers are the same either way. Two things differ from
  /// the copies:
  ///
  /// - A body keeps the input's indices: `body.startIndex` is its offset in `data` (plus
  ///   `data.startIndex`), not 0. Index it from `body.startIndex`, read it with `withUnsafeBytes`,
  ///   or rebase it with `Data(body)` (a copy).
  /// - The input's storage stays alive while any part holds a body of it, so keeping one small part
  ///   of a large document keeps the whole document in memory; copy that body with `Data(body)` to
  ///   let the rest go.
  ///
  /// A body is still a value of its own: `Data` slices copy on write, so changing a part's body
  /// copies its bytes first and never changes `data` or the other parts. One exception comes from
  /// Foundation: a `Data` that maps a file read-only (`.alwaysMapped`) is changed in place when
  /// nothing else holds its storage, which crashes, whether it is `data` itself or a slice of it.
  /// So once such an input and the other parts are gone, copy a body (`Data(body)`) before
  /// changing it.
  ///
  /// ```swift
  /// import MIMEDocument
  ///
  /// let document = MIMEDocument()
  /// document.appendPart(headers: ["Content-Type": "text/plain"], body: Data("Hello".utf8))
  /// let (data, boundary) = try document.generateData()
  /// if let parts = MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true) {
  ///   let body = parts[0].body
  ///   print(body.startIndex > 0)  // true: the body's offset in `data`
  ///   print(body[body.startIndex])  // 72, the "H"
  ///   print(String(decoding: body, as: UTF8.self))  // "Hello"
  ///   let rebased = Data(body)  // a copy indexed from 0
  ///   print(rebased[0])  // 72
  /// }
  /// ```
  public static func parts(boundary: String, data: Data, sharingInput: Bool) -> [Part]? {
    let boundaryBytes = Array(boundary.utf8)
    return data.withUnsafeBytes { document -> [Part]? in
      let offsets = ByteSearch.offsets(of: boundaryBytes, in: document)
      guard offsets.count >= 2 else { return nil }
      var parts: [Part] = []
      for (previous, current) in zip(offsets, offsets.dropFirst()) {
        let start = previous + boundaryBytes.count + 2
        let end = current - 4
        guard end - start >= 2 else { continue }
        let (headers, bodyRange) = split(document, start..<end)
        let body =
          sharingInput
          ? data[(data.startIndex + bodyRange.lowerBound)..<(data.startIndex + bodyRange.upperBound)]
          : Data(UnsafeRawBufferPointer(rebasing: document[bodyRange]))
        parts.append(Part(headers: headers, body: body))
      }
      return parts.isEmpty ? nil : parts
    }
  }

  private static let headerTerminator: [UInt8] = Array("\r\n\r\n".utf8)

  /// Splits one part's bytes, `document[part]` (at least two), into its headers and its body's
  /// offsets in `document`.
  private static func split(
    _ document: UnsafeRawBufferPointer, _ part: Range<Int>
  ) -> ([String: String], Range<Int>) {
    let bytes = UnsafeRawBufferPointer(rebasing: document[part])
    if bytes[0] == UInt8(ascii: "\r") && bytes[1] == UInt8(ascii: "\n") {
      return ([:], (part.lowerBound + 2)..<part.upperBound)
    }
    let separator = headerTerminator.withUnsafeBytes { ByteSearch.firstOffset(of: $0, in: bytes) }
    guard let separator else { return ([:], part.lowerBound..<part.lowerBound) }
    return (
      HeaderScanner.headers(in: UnsafeRawBufferPointer(rebasing: bytes[..<separator])),
      (part.lowerBound + separator + 4)..<part.upperBound
    )
  }
}

/// Reads `Name: value` lines the way the original's `NSScanner` loop does.
enum HeaderScanner {
  /// The headers in `bytes`, or none when `bytes` is not UTF-8.
  static func headers(in bytes: UnsafeRawBufferPointer) -> [String: String] {
    guard let text = String(bytes: bytes, encoding: .utf8) else { return [:] }
    return headers(in: text)
  }

  /// The scanner skips whitespace and newlines before each token; the name runs up to the colon
  /// (trailing spaces included); the value runs up to the next newline character. A name or value
  /// that would be empty ends the scan, as a failed `scanUpTo…` does.
  static func headers(in text: String) -> [String: String] {
    var headers: [String: String] = [:]
    let scalars = text.unicodeScalars
    var index = scalars.startIndex
    func skipWhitespaceAndNewlines() {
      while index < scalars.endIndex, isWhitespaceOrNewline(scalars[index]) {
        index = scalars.index(after: index)
      }
    }
    while true {
      skipWhitespaceAndNewlines()
      let nameStart = index
      guard let colon = scalars[index...].firstIndex(of: ":"), colon > nameStart else { break }
      let name = String(scalars[nameStart..<colon])
      index = scalars.index(after: colon)
      skipWhitespaceAndNewlines()
      let valueStart = index
      let valueEnd = scalars[index...].firstIndex(where: isNewline) ?? scalars.endIndex
      guard valueEnd > valueStart else { break }
      headers[name] = String(scalars[valueStart..<valueEnd])
      index = valueEnd
    }
    return headers
  }

  /// Foundation's `CharacterSet.newlines`: U+000A–U+000D, U+0085, U+2028, U+2029.
  static func isNewline(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
    default: return false
    }
  }

  /// Foundation's `CharacterSet.whitespacesAndNewlines`: the newlines, tab, and the space
  /// separators (general category Zs).
  static func isWhitespaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
    isNewline(scalar) || scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
  }
}
