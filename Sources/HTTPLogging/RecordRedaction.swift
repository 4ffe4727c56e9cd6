import Foundation

/// What a logged body holds, decided from its content type and bytes.
enum BodyKind: Sendable, Equatable {
  case json
  case form
  case text
  case binary

  /// The extension of the body's file in the run folder: always one that no browser runs.
  ///
  /// A body file opened from the viewer page, or straight from the folder, must show its bytes, not
  /// run them: HTML, XML, SVG and XHTML can all carry scripts. So a text body is `.txt` (with the
  /// kind of text before it: `.html.txt`, `.xml.txt`, `.svg.txt`), JSON is `.json`, and a binary body
  /// is one of a few image and archive extensions or `.bin`. Whatever the content type says, the
  /// name ends in one of ``inertExtensions``.
  func fileExtension(contentType: String?) -> String {
    let type = LowercasedASCII(contentType)
    switch self {
    case .json: return "json"
    case .form: return "txt"
    case .text:
      if type.contains("svg") { return "svg.txt" }
      if type.contains("html") { return "html.txt" }
      if type.contains("xml") { return "xml.txt" }
      return "txt"
    case .binary:
      if type.contains("image/png") { return "png" }
      if type.contains("image/jpeg") { return "jpg" }
      if type.contains("image/gif") { return "gif" }
      if type.contains("image/webp") { return "webp" }
      if type.contains("application/pdf") { return "pdf" }
      if type.contains("application/zip") { return "zip" }
      if type.contains("application/gzip") { return "gz" }
      return "bin"
    }
  }

  /// The only last extensions a body file may have: browsers show these files (text, JSON, images)
  /// or offer to save them; none runs a script from them.
  static let inertExtensions: Set<String> = [
    "txt", "json", "png", "jpg", "gif", "webp", "pdf", "zip", "gz", "bin",
  ]

  static func classify(_ data: Data, contentType: String?) -> BodyKind {
    let type = LowercasedASCII(contentType)
    if type.contains("x-www-form-urlencoded") { return .form }
    if (type.contains("image/") && !type.contains("xml")) || type.contains("audio/")
      || type.contains("video/")
      || type.contains("octet-stream") || type.contains("application/pdf") || type.contains("zip")
      || type.contains("gzip") || type.contains("protobuf")
    {
      return .binary
    }
    guard !data.containsZeroByte, let text = String(data: data, encoding: .utf8) else { return .binary }
    if type.contains("json") || [UInt8(ascii: "{"), UInt8(ascii: "[")].contains(data.firstNonWhitespace) {
      if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil { return .json }
    }
    if type.bytes.isEmpty
      && LogRedactor.looksFormEncoded(text.trimmingCharacters(in: .whitespacesAndNewlines))
    {
      return .form
    }
    return .text
  }
}

/// A content type with its ASCII letters lowercased, searched by bytes: `String.contains` and
/// `lowercased()` from Foundation are costly on Linux, and a logged fetch asks about a dozen times
/// per body.
struct LowercasedASCII {
  let bytes: [UInt8]

  init(_ text: String?) {
    bytes = (text ?? "").utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
  }

  /// Whether `needle` (lowercase ASCII, not empty) occurs.
  func contains(_ needle: StaticString) -> Bool {
    let count = needle.utf8CodeUnitCount
    guard count > 0, count <= bytes.count else { return false }
    return needle.withUTF8Buffer { needle in
      bytes.withUnsafeBufferPointer { haystack in
        for start in 0...(haystack.count - count) where haystack[start] == needle[0] {
          if memcmp(haystack.baseAddress! + start, needle.baseAddress!, count) == 0 { return true }
        }
        return false
      }
    }
  }
}

extension Data {
  /// Whether a 0 byte occurs (`memchr`; `contains(0)` goes through `Data`'s iterator byte by byte).
  var containsZeroByte: Bool {
    withUnsafeBytes { $0.count > 0 && memchr($0.baseAddress!, 0, $0.count) != nil }
  }

  /// The first byte that is not ASCII white space, if any.
  var firstNonWhitespace: UInt8? {
    withUnsafeBytes { raw in
      raw.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 && $0 != 0x0C && $0 != 0x0B }
    }
  }
}

extension LoggedBody {
  /// The kept bytes as text, when they are text.
  var text: String? { String(data: data, encoding: .utf8) }
}

/// Prepares a fetch record for output: classifies and pretty-prints bodies and, when a redactor is
/// given, redacts secrets everywhere.
struct RecordPreparer {
  var redactor: LogRedactor?

  /// The record with bodies rendered (`kinds` per exchange: request, response) and secrets redacted.
  func prepare(_ record: FetchRecord) -> PreparedRecord {
    var secrets = SecretSet()
    var record = record
    // Pass 1: replace by name everywhere, collecting secrets.
    for index in record.exchanges.indices {
      var exchange = record.exchanges[index]
      if let redactor {
        exchange.url = redactor.redactURLString(exchange.url, secrets: &secrets)
        if let responseURL = exchange.responseURL {
          exchange.responseURL = redactor.redactURLString(responseURL, secrets: &secrets)
        }
        if let target = exchange.redirectedTo {
          exchange.redirectedTo = redactor.redactURLString(target, secrets: &secrets)
        }
        exchange.requestHeaders = exchange.requestHeaders.map {
          ($0.name, redactor.redactHeader(name: $0.name, value: $0.value, secrets: &secrets))
        }
        exchange.responseHeaders = exchange.responseHeaders.map {
          ($0.name, redactor.redactHeader(name: $0.name, value: $0.value, secrets: &secrets))
        }
      }
      record.exchanges[index] = exchange
    }
    if let redactor {
      record.url = redactor.redactURLString(record.url, secrets: &secrets)
      // Error texts are only scrubbed, but a token quoted in one is found by its shape.
      let texts = [record.comment, record.errorText] + record.exchanges.map(\.errorText)
      for case let text? in texts { redactor.collectTokens(in: text, secrets: &secrets) }
    }
    var requestKinds: [BodyKind?] = []
    var responseKinds: [BodyKind?] = []
    for index in record.exchanges.indices {
      var exchange = record.exchanges[index]
      var requestKind: BodyKind?
      if var body = exchange.requestBody, body.source == .data, !body.data.isEmpty {
        requestKind = render(&body, contentType: exchange.requestContentType, secrets: &secrets)
        exchange.requestBody = body
      }
      var responseKind: BodyKind?
      if exchange.responseBody.source == .data, !exchange.responseBody.data.isEmpty {
        responseKind = render(
          &exchange.responseBody, contentType: exchange.responseContentType, secrets: &secrets)
      }
      requestKinds.append(requestKind)
      responseKinds.append(responseKind)
      record.exchanges[index] = exchange
    }
    guard let redactor else {
      return PreparedRecord(record: record, requestKinds: requestKinds, responseKinds: responseKinds)
    }
    // Pass 2: scrub every secret found from everything.
    let patterns = redactor.scrubPatterns(secrets)
    if !patterns.isEmpty {
      let scrub = { (text: String) in redactor.scrub(text, patterns: patterns) }
      record.url = scrub(record.url)
      record.comment = record.comment.map(scrub)
      record.errorText = record.errorText.map(scrub)
      for index in record.exchanges.indices {
        var exchange = record.exchanges[index]
        exchange.url = scrub(exchange.url)
        exchange.responseURL = exchange.responseURL.map(scrub)
        exchange.redirectedTo = exchange.redirectedTo.map(scrub)
        exchange.errorText = exchange.errorText.map(scrub)
        exchange.requestHeaders = exchange.requestHeaders.map { ($0.name, scrub($0.value)) }
        exchange.responseHeaders = exchange.responseHeaders.map { ($0.name, scrub($0.value)) }
        if var body = exchange.requestBody {
          body = scrubbed(body, redactor: redactor, patterns: patterns)
          exchange.requestBody = body
        }
        exchange.responseBody = scrubbed(exchange.responseBody, redactor: redactor, patterns: patterns)
        record.exchanges[index] = exchange
      }
    }
    return PreparedRecord(record: record, requestKinds: requestKinds, responseKinds: responseKinds)
  }

  private func scrubbed(_ body: LoggedBody, redactor: LogRedactor, patterns: [String]) -> LoggedBody {
    var body = body
    switch body.source {
    case .data:
      body.data = redactor.scrub(body.data, patterns: patterns, truncated: body.isTruncated)
    case .file(let path):
      body.source = .file(path: redactor.scrub(path, patterns: patterns))
    case .delivered(let path):
      body.source = .delivered(path: path.map { redactor.scrub($0, patterns: patterns) })
    case .stream:
      break
    }
    return body
  }

  /// Classifies the body, redacts it by name and pretty-prints JSON.
  private func render(_ body: inout LoggedBody, contentType: String?, secrets: inout SecretSet) -> BodyKind {
    if let redactor, let boundary = LogRedactor.multipartBoundary(contentType: contentType) {
      // By bytes: a multipart body with a file part is binary, and its secret fields still are not.
      body.data = redactor.redactMultipart(body.data, boundary: boundary, secrets: &secrets)
    }
    let kind =
      body.isTruncated
      ? BodyKind.classifyTruncated(body.data, contentType: contentType)
      : .classify(body.data, contentType: contentType)
    switch kind {
    case .json:
      guard var object = try? JSONSerialization.jsonObject(with: body.data, options: [.fragmentsAllowed])
      else {
        break
      }
      if let redactor {
        object = redactor.redactJSON(object, secrets: &secrets)
        // Credentials quoted under harmless keys (`"note": "Bearer …"`) are found as free text.
        if let text = body.text { _ = redactor.redactFreeText(text, secrets: &secrets) }
      }
      if body.data.count > 5,
        let pretty = try? JSONSerialization.data(
          withJSONObject: object,
          options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
      {
        body.data = pretty
      } else if redactor != nil,
        let compact = try? JSONSerialization.data(
          withJSONObject: object, options: [.fragmentsAllowed, .sortedKeys])
      {
        body.data = compact
      }
    case .form:
      if let redactor, let text = body.text {
        body.data = Data(redactor.redactFormEncoded(text, secrets: &secrets).utf8)
      }
    case .text:
      if let redactor, var text = body.text {
        if LogRedactor.isXML(body.data, contentType: contentType) {
          text = redactor.redactXML(text, secrets: &secrets)
        }
        body.data = Data(redactor.redactFreeText(text, secrets: &secrets).utf8)
      }
    case .binary:
      break
    }
    return kind
  }
}

extension BodyKind {
  /// A capped body is not parseable JSON: it is treated as text (still redacted as free text).
  static func classifyTruncated(_ data: Data, contentType: String?) -> BodyKind {
    let kind = classify(data, contentType: contentType)
    if kind == .json { return .text }
    if kind == .binary, String(data: data.prefix(max(0, data.count - 4)), encoding: .utf8) != nil,
      !data.containsZeroByte, !LowercasedASCII(contentType).contains("octet")
    {
      return .text
    }
    return kind
  }
}

/// A record ready for output, with the kind of each exchange's bodies (nil: no body bytes).
struct PreparedRecord: Sendable {
  var record: FetchRecord
  var requestKinds: [BodyKind?]
  var responseKinds: [BodyKind?]
}
