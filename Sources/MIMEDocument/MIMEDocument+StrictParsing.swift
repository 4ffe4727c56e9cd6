import Foundation

extension MIMEDocument {
  /// Splits a multipart body into its parts by RFC 2046 (§5.1.1), or throws why it is not one.
  ///
  /// - A delimiter is `--` and the boundary at the start of a line (the start of the data, or after
  ///   CRLF), followed by optional spaces or tabs and CRLF; the close delimiter has `--` after the
  ///   boundary. A line that only begins with the delimiter (`--boundaryX`) is content.
  /// - What comes before the first delimiter (the preamble) and after the close delimiter (the
  ///   epilogue) is ignored. No delimiter at all throws ``MIMEDocumentError/noDelimiter``; data that
  ///   ends before the close delimiter throws ``MIMEDocumentError/missingCloseDelimiter``.
  /// - A part is its header lines, an empty line, and its body (which may be empty); a part that
  ///   begins with the empty line has no headers. Each header line is `Name: value`, the name one or
  ///   more printable US-ASCII characters other than the colon; a line that begins with a space or a
  ///   tab continues the one before (RFC 5322 folding, unfolded here). Any other line, a bare CR or
  ///   LF, or a header block that is not UTF-8 throws ``MIMEDocumentError/malformedHeader(_:)``.
  ///   A name given twice keeps its values joined with `, `.
  ///
  /// Time and memory are linear in `data.count`: delimiters are found by one search over the bytes
  /// and each header line is read once.
  ///
  /// ``parts(boundary:data:)`` keeps GTMSessionFetcher's own rules (lenient: a missing close
  /// delimiter or a malformed header line yields what could be read); use this method for data
  /// from a server you do not control.
  ///
  /// ```swift
  /// do {
  ///   for part in try MIMEDocument.parse(boundary: boundary, data: body) {
  ///     print(part.headers["Content-Type"] ?? "-", part.body.count)
  ///   }
  /// } catch let error as MIMEDocumentError {
  ///   print("not a multipart body: \(error.localizedDescription)")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - boundary: the `boundary` parameter of the body's `Content-Type`.
  ///   - data: the body.
  ///   - sharingInput: each body a slice of `data` instead of a copy (see
  ///     ``parts(boundary:data:sharingInput:)`` for what that means).
  public static func parse(boundary: String, data: Data, sharingInput: Bool = false) throws -> [Part] {
    guard !boundary.isEmpty, !boundary.utf8.contains(where: HeaderBlock.isLineBreak) else {
      throw MIMEDocumentError.invalidBoundary(boundary)
    }
    let ranges = try data.withUnsafeBytes { document -> [(headers: [String: String], body: Range<Int>)] in
      try StrictMultipart(boundary: Array(boundary.utf8)).parts(document)
    }
    return ranges.map { part in
      let lower = data.startIndex + part.body.lowerBound
      let upper = data.startIndex + part.body.upperBound
      return Part(headers: part.headers, body: sharingInput ? data[lower..<upper] : Data(data[lower..<upper]))
    }
  }
}

/// RFC 2046's multipart framing over raw bytes.
struct StrictMultipart {
  /// `--` and the boundary.
  let dashBoundary: [UInt8]
  /// CRLF, `--` and the boundary: a delimiter anywhere but at the very start.
  let lineDelimiter: [UInt8]

  init(boundary: [UInt8]) {
    dashBoundary = Array("--".utf8) + boundary
    lineDelimiter = Array("\r\n--".utf8) + boundary
  }

  private static let cr = UInt8(ascii: "\r")
  private static let lf = UInt8(ascii: "\n")

  /// Space or tab: transport padding after a delimiter, folding and the space around a value.
  private static func isBlank(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
  }

  /// What follows a dash-boundary at `end` (just past it) in `document`.
  enum Follower {
    /// A delimiter line: the next part begins at the offset.
    case delimiter(nextLine: Int)
    /// The close delimiter.
    case close
    /// Neither: the dash-boundary is content.
    case content
  }

  static func follower(at end: Int, in document: UnsafeRawBufferPointer) -> Follower {
    if end + 1 < document.count, document[end] == UInt8(ascii: "-"), document[end + 1] == UInt8(ascii: "-") {
      return .close
    }
    var index = end
    while index < document.count, isBlank(document[index]) { index += 1 }
    guard index + 1 < document.count, document[index] == cr, document[index + 1] == lf else {
      return .content
    }
    return .delimiter(nextLine: index + 2)
  }

  /// The parts of `document`: each one's headers and its body's offsets.
  func parts(_ document: UnsafeRawBufferPointer) throws -> [(headers: [String: String], body: Range<Int>)] {
    // Candidate delimiters: the very start, and every CRLF-dash-boundary (the offset of its "--").
    var candidates = ByteSearch.offsets(of: lineDelimiter, in: document).map { $0 + 2 }
    if document.count >= dashBoundary.count,
      dashBoundary.withUnsafeBytes({
        $0.elementsEqual(UnsafeRawBufferPointer(rebasing: document[0..<dashBoundary.count]))
      })
    {
      candidates.insert(0, at: 0)
    }
    var parts: [(headers: [String: String], body: Range<Int>)] = []
    var partStart: Int?
    for candidate in candidates {
      switch Self.follower(at: candidate + dashBoundary.count, in: document) {
      case .content:
        continue
      case .delimiter(let nextLine):
        // The CRLF before a delimiter belongs to it, not to the part (candidate 0 has none).
        if let start = partStart { parts.append(try part(document, start..<max(start, candidate - 2))) }
        partStart = nextLine
      case .close:
        guard let start = partStart else { throw MIMEDocumentError.missingCloseDelimiter }
        parts.append(try part(document, start..<max(start, candidate - 2)))
        return parts
      }
    }
    throw partStart == nil ? MIMEDocumentError.noDelimiter : MIMEDocumentError.missingCloseDelimiter
  }

  /// One body part, `document[range]`: header lines, an empty line, the body.
  private func part(_ document: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> (
    headers: [String: String], body: Range<Int>
  ) {
    // Values per name, joined once at the end: joining as they come would copy a repeated
    // header's value once per line (quadratic in the number of lines).
    var values: [String: [String]] = [:]
    var lastName: String?
    func headers() -> [String: String] { values.mapValues { $0.joined(separator: ", ") } }
    var line = range.lowerBound
    while line < range.upperBound {
      // The end of this line: the next CR, which must start a CRLF.
      var end = line
      while end < range.upperBound, document[end] != Self.cr, document[end] != Self.lf { end += 1 }
      if end == line {
        // The empty line (a CRLF, as `line` is inside the part): the body follows it.
        guard end + 1 < range.upperBound, document[end] == Self.cr, document[end + 1] == Self.lf else {
          throw malformed(document, line..<end + 1)
        }
        return (headers(), (end + 2)..<range.upperBound)
      }
      let atEnd = end == range.upperBound
      guard atEnd || (end + 1 < range.upperBound && document[end] == Self.cr && document[end + 1] == Self.lf)
      else {
        throw malformed(document, line..<min(end + 1, range.upperBound))
      }
      let text = UnsafeRawBufferPointer(rebasing: document[line..<end])
      if Self.isBlank(text[0]) {
        guard let name = lastName, let string = String(validating: text, as: UTF8.self) else {
          throw malformed(document, line..<end)
        }
        values[name]![values[name]!.count - 1] += string
      } else {
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")), colon > 0,
          text[..<colon].allSatisfy({ (33...126).contains($0) })
        else { throw malformed(document, line..<end) }
        // The value without the spaces and tabs around it.
        var first = colon + 1
        var last = text.count
        while first < last, Self.isBlank(text[first]) { first += 1 }
        while last > first, Self.isBlank(text[last - 1]) { last -= 1 }
        guard
          let value = String(validating: UnsafeRawBufferPointer(rebasing: text[first..<last]), as: UTF8.self)
        else { throw malformed(document, line..<end) }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: text[..<colon]), as: UTF8.self)
        values[name, default: []].append(value)
        lastName = name
      }
      if atEnd { return (headers(), range.upperBound..<range.upperBound) }
      line = end + 2
    }
    return (headers(), range.upperBound..<range.upperBound)
  }

  private func malformed(_ document: UnsafeRawBufferPointer, _ range: Range<Int>) -> MIMEDocumentError {
    let shown = UnsafeRawBufferPointer(
      rebasing: document[range.lowerBound..<min(range.upperBound, range.lowerBound + 80)])
    return .malformedHeader(String(decoding: shown, as: UTF8.self))
  }
}
