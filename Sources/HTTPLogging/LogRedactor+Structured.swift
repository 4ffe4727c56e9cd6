import Foundation

// MARK: - Multipart bodies

extension LogRedactor {
  /// The `boundary` parameter of a `multipart/…` content type; nil for other types.
  static func multipartBoundary(contentType: String?) -> String? {
    guard let contentType, LowercasedASCII(contentType).contains("multipart/") else { return nil }
    for parameter in headerParameters(contentType).dropFirst() where parameter.name == "boundary" {
      let boundary = parameter.value
      // RFC 2046: 1 to 70 characters.
      return boundary.isEmpty || boundary.utf8.count > 70 ? nil : boundary
    }
    return nil
  }

  /// The value and `name=value` parameters of a header such as `Content-Type` or
  /// `Content-Disposition`: names lowercased, quoted values unquoted (`;` inside quotes kept). The
  /// first element is the header's value before any parameter, with an empty name.
  static func headerParameters(_ value: String) -> [(name: String, value: String)] {
    var fields: [String] = []
    var current = ""
    var quoted = false
    var escaped = false
    for character in value {
      if escaped {
        current.append(character)
        escaped = false
      } else if quoted && character == "\\" {
        escaped = true
      } else if character == "\"" {
        quoted.toggle()
      } else if character == ";" && !quoted {
        fields.append(current)
        current = ""
      } else {
        current.append(character)
      }
    }
    fields.append(current)
    return fields.enumerated().map { index, field in
      guard index > 0, let equals = field.firstIndex(of: "=") else {
        return ("", field.trimmingCharacters(in: .whitespaces))
      }
      return (
        field[..<equals].trimmingCharacters(in: .whitespaces).lowercased(),
        field[field.index(after: equals)...].trimmingCharacters(in: .whitespaces)
      )
    }
  }

  /// A multipart body with the content of every part whose `Content-Disposition` name looks like a
  /// secret (``isSensitiveName(_:)``, or one of ``sensitiveExactNames``: `name="password"`,
  /// `name="code"`…) replaced by ``marker``, adding each replaced value to `secrets`. Parts that are multipart themselves are redacted the
  /// same way. A part cut off by the body size cap is replaced up to the end of the bytes kept.
  func redactMultipart(_ data: Data, boundary: String, secrets: inout SecretSet) -> Data {
    redactMultipart(Array(data), boundary: boundary, secrets: &secrets, depth: 0).map { Data($0) } ?? data
  }

  /// nil when nothing was replaced.
  private func redactMultipart(_ bytes: [UInt8], boundary: String, secrets: inout SecretSet, depth: Int)
    -> [UInt8]?
  {
    let delimiter = Array("--\(boundary)".utf8)
    // Delimiters begin a line.
    var delimiters: [Int] = []
    var start = 0
    while let found = Self.firstIndex(of: delimiter, in: bytes, from: start) {
      if found == 0 || bytes[found - 1] == UInt8(ascii: "\n") { delimiters.append(found) }
      start = found + delimiter.count
    }
    var replacements: [(range: Range<Int>, bytes: [UInt8])] = []
    for (number, position) in delimiters.enumerated() {
      let afterDelimiter = position + delimiter.count
      // The closing delimiter, `--boundary--`, ends the body.
      if bytes[afterDelimiter...].starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) { break }
      guard let lineEnd = Self.firstIndex(of: [UInt8(ascii: "\n")], in: bytes, from: afterDelimiter) else {
        break
      }
      let partStart = lineEnd + 1
      var partEnd = bytes.count
      if number + 1 < delimiters.count {
        // The line break before the next delimiter belongs to the delimiter.
        partEnd = delimiters[number + 1] - 1
        if partEnd > partStart, bytes[partEnd - 1] == UInt8(ascii: "\r") { partEnd -= 1 }
      }
      guard partStart <= partEnd,
        let replacement = redactPart(
          Array(bytes[partStart..<partEnd]), secrets: &secrets, depth: depth)
      else { continue }
      replacements.append((partStart..<partEnd, replacement))
    }
    guard !replacements.isEmpty else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    var copied = 0
    for replacement in replacements {
      output += bytes[copied..<replacement.range.lowerBound]
      output += replacement.bytes
      copied = replacement.range.upperBound
    }
    output += bytes[copied...]
    return output
  }

  /// One part (headers, blank line, content) with its content redacted; nil when nothing changed.
  private func redactPart(_ part: [UInt8], secrets: inout SecretSet, depth: Int) -> [UInt8]? {
    let blankLine =
      Self.firstIndex(of: Array("\r\n\r\n".utf8), in: part, from: 0).map { ($0, 4) }
      ?? Self.firstIndex(of: Array("\n\n".utf8), in: part, from: 0).map { ($0, 2) }
    guard let (headersEnd, separatorLength) = blankLine else { return nil }
    let headers = String(decoding: part[..<headersEnd], as: UTF8.self)
    let contentStart = headersEnd + separatorLength
    var name: String?
    var contentType: String?
    for line in headers.split(whereSeparator: \.isNewline) {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
      let value = String(line[line.index(after: colon)...])
      if field == "content-disposition" {
        name = Self.headerParameters(value).dropFirst().first { $0.name == "name" }?.value
      } else if field == "content-type" {
        contentType = value
      }
    }
    let content = Array(part[contentStart...])
    if let name, isSensitiveParameter(name) {
      guard !content.isEmpty else { return nil }
      if let text = String(bytes: content, encoding: .utf8) {
        secrets.insert(text.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      return Array(part[..<contentStart]) + Array(marker.utf8)
    }
    guard depth < 4, let boundary = Self.multipartBoundary(contentType: contentType),
      let redacted = redactMultipart(content, boundary: boundary, secrets: &secrets, depth: depth + 1)
    else { return nil }
    return Array(part[..<contentStart]) + redacted
  }

  /// Where `needle` (not empty) first occurs in `haystack` at or after `start`.
  static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    firstIndex(of: needle, in: haystack[...], from: start)
  }

  /// Where `needle` (not empty) first occurs in `haystack` at or after `start` (indices of the
  /// slice's base).
  static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>, from start: Int) -> Int? {
    guard let first = needle.first, start >= haystack.startIndex, haystack.endIndex - start >= needle.count
    else { return nil }
    return haystack.withUnsafeBufferPointer { buffer -> Int? in
      let base = buffer.baseAddress!
      var position = start - haystack.startIndex
      let last = buffer.count - needle.count
      while position <= last {
        guard let hit = memchr(base + position, Int32(first), last - position + 1) else { return nil }
        let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        if needle.withUnsafeBufferPointer({ memcmp(base + index, $0.baseAddress!, needle.count) }) == 0 {
          return index + haystack.startIndex
        }
        position = index + 1
      }
      return nil
    }
  }
}

// MARK: - XML bodies

extension LogRedactor {
  /// Whether a text body is redacted as XML: its content type says XML (`text/xml`,
  /// `application/soap+xml`, `image/svg+xml`…), or it has no HTML type and begins with `<`.
  static func isXML(_ data: Data, contentType: String?) -> Bool {
    let type = LowercasedASCII(contentType)
    if type.contains("xml") { return true }
    return !type.contains("html") && data.firstNonWhitespace == UInt8(ascii: "<")
  }

  /// XML with the content of every element whose name looks like a secret (``isSensitiveName(_:)``
  /// of its local name: `<password>`, `<wsse:Password>`, `<api_key>`…) and the value of every such
  /// attribute (`token="…"`) replaced by ``marker``, adding each replaced text to `secrets`.
  ///
  /// A scanner, not a parser: comments, CDATA sections, processing instructions and declarations
  /// are skipped, and bad markup never fails (at worst, less is recognized). An element that is
  /// never closed (a body cut off by the size cap) is replaced up to the end.
  func redactXML(_ text: String, secrets: inout SecretSet) -> String {
    let bytes = Array(text.utf8)
    var ranges: [Range<Int>] = []
    var open: [(name: ArraySlice<UInt8>, contentStart: Int, isSecret: Bool)] = []
    /// The index in `open` of the outermost secret element open: what it holds is replaced whole.
    var outermostSecret: Int?
    var index = 0
    let count = bytes.count
    func find(_ pattern: String, from start: Int) -> Int? {
      Self.firstIndex(of: Array(pattern.utf8), in: bytes, from: start)
    }
    while let tag = Self.firstIndex(of: [UInt8(ascii: "<")], in: bytes, from: index) {
      let next = tag + 1 < count ? bytes[tag + 1] : 0
      if bytes[tag...].starts(with: "<!--".utf8) {
        index = find("-->", from: tag + 4).map { $0 + 3 } ?? count
      } else if bytes[tag...].starts(with: "<![CDATA[".utf8) {
        index = find("]]>", from: tag + 9).map { $0 + 3 } ?? count
      } else if next == UInt8(ascii: "?") {
        index = find("?>", from: tag + 2).map { $0 + 2 } ?? count
      } else if next == UInt8(ascii: "!") {
        index = find(">", from: tag + 2).map { $0 + 1 } ?? count
      } else if next == UInt8(ascii: "/") {
        let nameEnd = Self.xmlNameEnd(bytes, from: tag + 2)
        let name = bytes[(tag + 2)..<nameEnd]
        // Among the innermost open elements only: bad markup (end tags that match nothing, deep
        // nesting) must not cost a walk of every open element per tag.
        let window = open.indices.suffix(Self.xmlEndTagWindow)
        if let opened = window.last(where: { open[$0].name == name }) {
          // The secret element ends here, or is left unclosed inside the element that does.
          if let secret = outermostSecret, secret >= opened {
            ranges.append(open[secret].contentStart..<tag)
            outermostSecret = nil
          }
          open.removeSubrange(opened...)
        }
        index = find(">", from: nameEnd).map { $0 + 1 } ?? count
      } else {
        let nameEnd = Self.xmlNameEnd(bytes, from: tag + 1)
        guard nameEnd > tag + 1, Self.isXMLNameStart(next) else {
          index = tag + 1
          continue
        }
        let name = bytes[(tag + 1)..<nameEnd]
        // A quote that never closes: the tag ends at the next `>`, so that the element's content
        // is still recognized.
        guard
          let (end, selfClosing) = scanAttributes(bytes, from: nameEnd, ranges: &ranges)
            ?? find(">", from: nameEnd).map({ ($0 + 1, false) })
        else {
          index = count
          break
        }
        if !selfClosing {
          let isSecret = isSensitiveName(Self.localName(name))
          if isSecret, outermostSecret == nil { outermostSecret = open.count }
          open.append((name, end, isSecret))
        }
        index = end
      }
    }
    // An element still open at the end: the rest is its content.
    if let unclosed = outermostSecret, open[unclosed].contentStart < count {
      ranges.append(open[unclosed].contentStart..<count)
    }
    guard !ranges.isEmpty else { return text }
    var output: [UInt8] = []
    output.reserveCapacity(count)
    var copied = 0
    let markerBytes = Array(marker.utf8)
    for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.lowerBound >= copied {
      // Attribute values inside an element already replaced are covered by it.
      for text in Self.xmlTexts(bytes[range]) { secrets.insert(text) }
      output += bytes[copied..<range.lowerBound]
      if !range.isEmpty { output += markerBytes }
      copied = range.upperBound
    }
    output += bytes[copied...]
    return String(decoding: output, as: UTF8.self)
  }

  /// How many of the innermost open elements an end tag is matched against.
  static let xmlEndTagWindow = 64

  /// Scans a start tag's attributes from `start`; adds the value ranges of secret-looking ones to
  /// `ranges`. Returns the index after the tag's `>` and whether it ended with `/>`; nil when the
  /// tag or a quoted value in it never ends.
  private func scanAttributes(
    _ bytes: [UInt8], from start: Int, ranges: inout [Range<Int>]
  ) -> (end: Int, selfClosing: Bool)? {
    var index = start
    let count = bytes.count
    while index < count {
      let byte = bytes[index]
      if byte == UInt8(ascii: ">") { return (index + 1, false) }
      if byte == UInt8(ascii: "/"), index + 1 < count, bytes[index + 1] == UInt8(ascii: ">") {
        return (index + 2, true)
      }
      if Self.isXMLSpace(byte) || byte == UInt8(ascii: "/") {
        index += 1
        continue
      }
      let nameEnd = max(Self.xmlNameEnd(bytes, from: index), index + 1)
      let name = bytes[index..<nameEnd]
      index = nameEnd
      while index < count, Self.isXMLSpace(bytes[index]) { index += 1 }
      guard index < count, bytes[index] == UInt8(ascii: "=") else { continue }
      index += 1
      while index < count, Self.isXMLSpace(bytes[index]) { index += 1 }
      guard index < count else { return nil }
      let value: Range<Int>
      let quote = bytes[index]
      if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
        guard let close = Self.firstIndex(of: [quote], in: bytes, from: index + 1) else { return nil }
        value = (index + 1)..<close
        index = close + 1
      } else {
        var end = index
        while end < count, !Self.isXMLSpace(bytes[end]), bytes[end] != UInt8(ascii: ">") { end += 1 }
        value = index..<end
        index = end
      }
      let isNamespace = name.starts(with: "xmlns".utf8)
      if !isNamespace, !value.isEmpty, isSensitiveName(Self.localName(name)) { ranges.append(value) }
    }
    return nil
  }

  /// The texts of replaced XML: character data between tags and CDATA contents, each trimmed, and
  /// each also with its entities decoded.
  static func xmlTexts(_ bytes: ArraySlice<UInt8>) -> [String] {
    var texts: [ArraySlice<UInt8>] = []
    var index = bytes.startIndex
    var textStart = index
    while let tag = firstIndex(of: [UInt8(ascii: "<")], in: bytes, from: index) {
      texts.append(bytes[textStart..<tag])
      if bytes[tag...].starts(with: "<![CDATA[".utf8) {
        let start = tag + 9
        let end = firstIndex(of: Array("]]>".utf8), in: bytes, from: start) ?? bytes.endIndex
        texts.append(bytes[start..<end])
        index = min(end + 3, bytes.endIndex)
      } else {
        index = firstIndex(of: [UInt8(ascii: ">")], in: bytes, from: tag + 1).map { $0 + 1 } ?? bytes.endIndex
      }
      textStart = index
    }
    texts.append(bytes[textStart...])
    var result: [String] = []
    for text in texts {
      let trimmed = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      guard !trimmed.isEmpty else { continue }
      result.append(trimmed)
      let decoded = xmlDecoded(trimmed)
      if decoded != trimmed { result.append(decoded) }
    }
    return result
  }

  /// `text` with XML's predefined and numeric character references replaced.
  static func xmlDecoded(_ text: String) -> String {
    guard text.contains("&") else { return text }
    return text.replacing(/&(#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6}|amp|lt|gt|quot|apos);/) { match in
      let reference = match.output.1
      switch reference {
      case "amp": return "&"
      case "lt": return "<"
      case "gt": return ">"
      case "quot": return "\""
      case "apos": return "'"
      default:
        let number =
          reference.hasPrefix("#x")
          ? UInt32(reference.dropFirst(2), radix: 16) : UInt32(reference.dropFirst())
        return number.flatMap(Unicode.Scalar.init).map { String(Character($0)) } ?? String(match.output.0)
      }
    }
  }

  /// The name without its namespace prefix (`wsse:Password` → `Password`).
  static func localName(_ name: ArraySlice<UInt8>) -> String {
    let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[($0 + 1)...] } ?? name
    return String(decoding: local, as: UTF8.self)
  }

  /// Where the XML name that begins at `start` ends: at white space, `/`, `>`, `=` or the end.
  static func xmlNameEnd(_ bytes: [UInt8], from start: Int) -> Int {
    var index = start
    while index < bytes.count {
      let byte = bytes[index]
      if isXMLSpace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">")
        || byte == UInt8(ascii: "=")
      {
        break
      }
      index += 1
    }
    return index
  }

  static func isXMLSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  /// A letter, `_`, `:` or a byte of a non-ASCII character.
  static func isXMLNameStart(_ byte: UInt8) -> Bool {
    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_")
      || byte == UInt8(ascii: ":") || byte >= 0x80
  }
}
