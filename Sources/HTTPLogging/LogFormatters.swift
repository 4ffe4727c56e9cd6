import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The names of the body files of one fetch in its run folder, per exchange.
struct BodyFileNames: Sendable, Equatable {
  var request: [Int: String] = [:]
  var response: [Int: String] = [:]

  /// The largest body, in bytes, that gets no file of its own (see ``needsFile(_:kind:isRequest:)``).
  static let inlineLimit = 256

  /// `fetch_N_request.json`, `fetch_N_response.png`, `fetch_N_response.xml.txt`…; exchanges before
  /// the last one get `fetch_N_K_response.txt` (K from 1). Bodies that need no file have no name.
  /// Every name ends in one of ``BodyKind/inertExtensions`` (see ``inertExtension(_:)``).
  static func make(number: Int, prepared: PreparedRecord) -> BodyFileNames {
    var names = BodyFileNames()
    let exchanges = prepared.record.exchanges
    for (index, exchange) in exchanges.enumerated() {
      let infix = index == exchanges.count - 1 ? "" : "_\(index + 1)"
      if let kind = prepared.requestKinds[index], let body = exchange.requestBody,
        needsFile(body, kind: kind, isRequest: true)
      {
        let ext = inertExtension(kind.fileExtension(contentType: exchange.requestContentType))
        names.request[index] = "fetch_\(number)\(infix)_request.\(ext)"
      }
      if let kind = prepared.responseKinds[index],
        needsFile(exchange.responseBody, kind: kind, isRequest: false)
      {
        let ext = inertExtension(kind.fileExtension(contentType: exchange.responseContentType))
        names.response[index] = "fetch_\(number)\(infix)_response.\(ext)"
      }
    }
    return names
  }

  /// `ext`, or `ext.txt` when its last part is not one of ``BodyKind/inertExtensions``: a name
  /// that a browser would run (`.html`, `.xml`, `.svg`, `.js`…) never reaches the folder.
  static func inertExtension(_ ext: String) -> String {
    let last = ext.split(separator: ".").last.map(String.init) ?? ""
    return BodyKind.inertExtensions.contains(last) ? ext : ext + ".txt"
  }

  /// Whether a prepared fetch has a body that gets a file of its own.
  static func hasFiles(_ prepared: PreparedRecord) -> Bool {
    !make(number: 0, prepared: prepared).isEmpty
  }

  var isEmpty: Bool { request.isEmpty && response.isEmpty }

  /// Whether a kept body gets a file of its own: every body longer than ``inlineLimit`` bytes or
  /// truncated, and a binary request body of any size.
  ///
  /// A shorter text body is whole in the text log and the HAR file already, and a shorter binary
  /// response body is in the HAR file as base64 (`content.encoding`): a file of its own would repeat
  /// it, and creating a file is most of what logging a small fetch to files costs. (HAR 1.2 has no
  /// encoding for `postData`, so a binary request body keeps its file.)
  static func needsFile(_ body: LoggedBody, kind: BodyKind, isRequest: Bool) -> Bool {
    guard body.source == .data, !body.isTruncated, body.data.count <= inlineLimit else { return true }
    if kind == .binary || body.text == nil { return isRequest }
    return false
  }
}

enum LogDates {
  /// Local time, `yyyy-MM-dd HH:mm:ss.SSS`.
  static func display(_ date: Date) -> String {
    let time = CivilTime(date, utc: false)
    return "\(time.day) \(time.clock(":")).\(pad(time.milliseconds, 3))"
  }

  /// ISO 8601 in UTC with milliseconds, as HAR wants: `2026-11-23T06:12:34.567Z`.
  static func iso8601(_ date: Date) -> String {
    let time = CivilTime(date, utc: true)
    return "\(time.day)T\(time.clock(":")).\(pad(time.milliseconds, 3))Z"
  }

  /// The run folder's stamp: `yyyy-MM-dd_HH-mm-ss` in local time (sorts by time).
  static func runStamp(_ date: Date) -> String {
    let time = CivilTime(date, utc: false)
    return "\(time.day)_\(time.clock("-"))"
  }

  /// Seconds with three decimals, as `String(format: "%.3f", value)` writes them, without
  /// Foundation's formatter, which is costly on Linux.
  static func seconds(_ value: TimeInterval) -> String {
    guard value.isFinite, abs(value) < 1e12 else { return String(format: "%.3f", value) }
    let milliseconds = Int((abs(value) * 1000).rounded())
    return "\(value.sign == .minus ? "-" : "")\(milliseconds / 1000).\(pad(milliseconds % 1000, 3))"
  }

  /// `value` in decimal with leading zeros to `width` digits.
  static func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// A date broken down into calendar fields by the C library: a `DateFormatter` or
  /// `ISO8601DateFormatter` made per call cost more than the rest of a fetch's HAR entry.
  struct CivilTime {
    var fields = tm()
    /// Milliseconds within the second, rounded to the nearest.
    var milliseconds: Int

    init(_ date: Date, utc: Bool) {
      // To the nearest millisecond first, as the ICU formatters do (0.9996 s is 1.000).
      let total = Int64((date.timeIntervalSince1970 * 1000).rounded())
      let (quotient, remainder) = total.quotientAndRemainder(dividingBy: 1000)
      var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)
      milliseconds = Int(remainder < 0 ? remainder + 1000 : remainder)
      if utc {
        gmtime_r(&seconds, &fields)
      } else {
        localtime_r(&seconds, &fields)
      }
    }

    /// `yyyy-MM-dd`.
    var day: String {
      "\(LogDates.pad(Int(fields.tm_year) + 1900, 4))-\(LogDates.pad(Int(fields.tm_mon) + 1, 2))-"
        + LogDates.pad(Int(fields.tm_mday), 2)
    }

    /// `HH:mm:ss` with `separator` between the fields.
    func clock(_ separator: String) -> String {
      LogDates.pad(Int(fields.tm_hour), 2) + separator + LogDates.pad(Int(fields.tm_min), 2) + separator
        + LogDates.pad(Int(fields.tm_sec), 2)
    }
  }
}

// MARK: - Text

/// The per-fetch text log (``SessionFetcher/log`` and `fetch_N.txt`), in the original's format.
enum TextLogFormatter {
  static func format(_ prepared: PreparedRecord, files: BodyFileNames? = nil) -> String {
    let record = prepared.record
    var lines: [String] = []
    lines.append(record.comment ?? "(No fetcher comment set)")
    lines.append(
      "\(LogDates.display(record.startDate))  elapsed: \(LogDates.seconds(record.elapsed))sec")
    if record.exchanges.isEmpty {
      lines.append("")
      lines.append("Request: \(record.method) \(record.url)")
    }
    for (index, exchange) in record.exchanges.enumerated() {
      lines.append("")
      switch exchange.kind {
      case .first: break
      case .redirect: lines.append("Redirected to: \(exchange.url)")
      case .retry(let number): lines.append("Retry \(number):")
      case .continuation:
        let range = exchange.requestHeaders.first { $0.name.lowercased() == "range" }?.value ?? ""
        lines.append("Continued: \(range)")
      }
      lines.append("Request: \(exchange.method) \(exchange.url)")
      lines.append("Request headers:")
      for header in exchange.requestHeaders { lines.append("  \(header.name): \(header.value)") }
      if let body = exchange.requestBody {
        lines.append(
          contentsOf: bodyLines(
            "Request body", body, kind: prepared.requestKinds[index], file: files?.request[index]))
      }
      lines.append("")
      if let status = exchange.statusCode {
        lines.append("Response: status \(status)")
        lines.append("Response headers:")
        for header in exchange.responseHeaders { lines.append("  \(header.name): \(header.value)") }
        lines.append(
          contentsOf: bodyLines(
            "Response body", exchange.responseBody, kind: prepared.responseKinds[index],
            file: files?.response[index]))
      } else {
        lines.append("Response: none")
      }
      if let metrics = exchange.metrics { lines.append("Timing: \(metrics)") }
      if let target = exchange.redirectedTo { lines.append("Redirects to: \(target)") }
      if let delay = exchange.retryDelay {
        lines.append("Retrying after \(LogDates.seconds(delay))sec: \(exchange.errorText ?? "")")
      }
    }
    if let error = record.errorText {
      lines.append("")
      lines.append("Error: \(error)")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func bodyLines(_ title: String, _ body: LoggedBody, kind: BodyKind?, file: String?) -> [String] {
    let saved = file.map { ", saved as \($0)" } ?? ""
    switch body.source {
    case .file(let path):
      return ["\(title): (file: \(path), \(body.totalLength.map { "\($0) bytes" } ?? "size unknown"))"]
    case .stream:
      return ["\(title): (stream, \(body.totalLength.map { "\($0) bytes" } ?? "size unknown"))"]
    case .delivered(let path):
      let target = path.map { "written to file: \($0)" } ?? "delivered in chunks"
      return ["\(title): (\(body.length) bytes, \(target))"]
    case .data:
      break
    }
    if body.length == 0 { return ["\(title): (0 bytes)"] }
    let truncated = body.isTruncated ? "; truncated to the first \(body.data.count) bytes" : ""
    guard kind != .binary, let text = body.text else {
      return ["\(title): <<\(body.length) bytes, binary\(truncated)\(saved)>>"]
    }
    return ["\(title): (\(body.length) bytes\(truncated)\(saved))", text]
  }
}

// MARK: - HTML

/// HTML escaping for the run's page (see ``ViewerPage``).
enum HTMLLogFormatter {
  /// `text` with `&`, `<`, `>`, `"` and `'` as HTML entities. By bytes: these ASCII bytes never
  /// occur inside a multi-byte UTF-8 sequence, and most header names and values have none of them.
  static func escape(_ text: String) -> String {
    guard text.utf8.contains(where: { entity(for: $0) != nil }) else { return text }
    var output: [UInt8] = []
    output.reserveCapacity(text.utf8.count + 16)
    for byte in text.utf8 {
      if let entity = entity(for: byte) {
        output.append(contentsOf: entity.utf8)
      } else {
        output.append(byte)
      }
    }
    return String(decoding: output, as: UTF8.self)
  }

  private static func entity(for byte: UInt8) -> String? {
    switch byte {
    case UInt8(ascii: "&"): "&amp;"
    case UInt8(ascii: "<"): "&lt;"
    case UInt8(ascii: ">"): "&gt;"
    case UInt8(ascii: "\""): "&quot;"
    case UInt8(ascii: "'"): "&#39;"
    default: nil
    }
  }
}

// MARK: - HAR

/// HAR 1.2 entries (one per exchange: each attempt and each redirect hop).
enum HARFormatter {
  static let prefix = """
    {
      "log" : {
        "version" : "1.2",
        "creator" : { "name" : "SessionFetcher HTTPLogging", "version" : "1.0" },
        "pages" : [],
        "entries" : [

    """
  static let suffix = "\n    ]\n  }\n}\n"

  /// Where a fetch's entries belong in its run: its number and text log.
  struct RunPlace {
    var number: Int
    var textLog: String
  }

  /// The JSON of each exchange's entry. In a run (`place` given), the entries carry the custom
  /// fields of the run's viewer page, and a fetch that ended before sending anything gets one entry
  /// of status 0 with its error, so that every fetch of the run has at least one.
  static func entries(_ prepared: PreparedRecord, files: BodyFileNames?, place: RunPlace? = nil) -> [Data] {
    let record = prepared.record
    var result: [Data] = []
    let summary = place.map { place in
      HAREntry.FetchSummary(
        startedTime: epochMilliseconds(record.startDate), time: milliseconds(record.elapsed),
        throttled: record.throttleEndDate.map { milliseconds($0.timeIntervalSince(record.startDate)) },
        log: place.textLog, error: record.errorText, cancelled: record.isCancelled,
        status: record.callerStatus, entries: max(1, record.exchanges.count))
    }
    if record.exchanges.isEmpty, let place {
      let entry = HAREntry(
        startedDateTime: LogDates.iso8601(record.startDate), time: milliseconds(record.elapsed),
        request: HAREntry.Request(
          method: record.method, url: record.url, cookies: [], headers: [], queryString: [], bodySize: 0),
        response: HAREntry.Response(
          status: 0, statusText: "", cookies: [], headers: [],
          content: HAREntry.Content(size: 0, mimeType: ""),
          redirectURL: "", bodySize: -1),
        timings: HAREntry.Timings(send: 0, wait: 0, receive: 0), comment: record.comment,
        error: record.errorText,
        viewer: HAREntry.Viewer(
          fetch: place.number, kind: "none", startedTime: epochMilliseconds(record.startDate),
          summary: summary))
      return [entry.jsonData]
    }
    for (index, exchange) in record.exchanges.enumerated() {
      let isLast = index == record.exchanges.count - 1
      let end = exchange.endDate ?? record.endDate
      // Without the engine's phases: sending lasts until the body's last bytes went out, when the
      // fetcher was told of them; waiting, from then until the response head.
      let sent = min(exchange.bodySentDate ?? exchange.sentDate, exchange.responseDate ?? end)
      let send = max(0, sent.timeIntervalSince(exchange.sentDate))
      let wait = (exchange.responseDate ?? end).timeIntervalSince(sent)
      let receive = exchange.responseDate.map { end.timeIntervalSince($0) } ?? 0
      var timings =
        exchange.metrics.map {
          Self.timings(
            $0, bodySent: exchange.bodySentDate?.timeIntervalSince(exchange.sentDate),
            responseHead: exchange.responseDate?.timeIntervalSince(exchange.sentDate))
        }
        ?? HAREntry.Timings(
          send: milliseconds(send), wait: milliseconds(wait), receive: milliseconds(receive))
      if index == 0, let slot = record.throttleEndDate {
        timings.blocked = milliseconds(slot.timeIntervalSince(record.startDate))
      }
      var request = request(exchange, kind: prepared.requestKinds[index], file: files?.request[index])
      var response = response(exchange, kind: prepared.responseKinds[index], file: files?.response[index])
      if let version = exchange.metrics?.httpVersion {
        request.httpVersion = version
        response.httpVersion = version
      }
      var entry = HAREntry(
        startedDateTime: LogDates.iso8601(exchange.sentDate),
        time: milliseconds(end.timeIntervalSince(exchange.sentDate)), request: request, response: response,
        timings: timings, comment: record.comment,
        error: isLast ? (record.errorText ?? exchange.errorText) : exchange.errorText)
      entry.serverIPAddress = exchange.metrics?.remoteAddress
      if let place {
        entry.viewer = HAREntry.Viewer(
          fetch: place.number, kind: kindName(exchange.kind),
          startedTime: epochMilliseconds(exchange.sentDate),
          retryDelay: exchange.retryDelay.map(milliseconds), summary: index == 0 ? summary : nil)
      }
      result.append(entry.jsonData)
    }
    return result
  }

  static func kindName(_ kind: LoggedExchange.Kind) -> String {
    switch kind {
    case .first: "first"
    case .redirect: "redirect"
    case .retry: "retry"
    case .continuation: "continuation"
    }
  }

  /// Milliseconds since 1970, to the microsecond.
  static func epochMilliseconds(_ date: Date) -> Double {
    (date.timeIntervalSince1970 * 1_000_000).rounded() / 1000
  }

  /// HAR timings from an engine's phases: `dns`, `connect` (TLS included, as HAR 1.2 counts it) and
  /// `ssl` are -1 for a phase the exchange did not go through (a reused connection). libcurl does
  /// not time the request's writing apart from the wait: `send` runs from the request's start to
  /// `bodySent` (seconds after the exchange began, when its body's last bytes went out; nil: no
  /// body, `send` is 0), and `wait` from there to the first byte.
  ///
  /// libcurl marks its first byte (`CURLINFO_STARTTRANSFER_TIME_T`) when an upload's body starts
  /// to go out, not when the response's first byte comes: when that mark is before the body's last
  /// bytes went out, the first byte is when the fetcher saw the response head (`responseHead`, in
  /// the same frame as `bodySent`), else all of the upload would count as receiving.
  static func timings(
    _ metrics: TransferMetrics, bodySent: TimeInterval? = nil, responseHead: TimeInterval? = nil
  ) -> HAREntry.Timings {
    let lookupEnd = metrics.nameLookup ?? 0
    let connectEnd = metrics.secureConnection ?? metrics.connect
    let requestStart = metrics.requestStart ?? connectEnd ?? lookupEnd
    var firstByte = metrics.firstByte ?? metrics.total
    if let bodySent, let responseHead, bodySent > firstByte, responseHead >= bodySent {
      firstByte = min(responseHead, metrics.total)
    }
    let sent = bodySent.map { min(max($0, requestStart), firstByte) } ?? requestStart
    return HAREntry.Timings(
      dns: metrics.nameLookup.map(milliseconds) ?? -1,
      connect: connectEnd.map { milliseconds($0 - lookupEnd) } ?? -1,
      ssl: metrics.secureConnection.map { milliseconds($0 - (metrics.connect ?? lookupEnd)) } ?? -1,
      send: milliseconds(sent - requestStart), wait: milliseconds(firstByte - sent),
      receive: milliseconds(metrics.total - firstByte))
  }

  /// Seconds as milliseconds to the microsecond; never negative, and 0 when not finite (JSON has no
  /// infinity).
  static func milliseconds(_ seconds: TimeInterval) -> Double {
    guard seconds.isFinite else { return 0 }
    return (max(0, seconds) * 1000 * 1000).rounded() / 1000
  }

  static func nameValues(_ headers: HeaderList) -> [HAREntry.NameValue] {
    headers.map { HAREntry.NameValue(name: $0.name, value: $0.value) }
  }

  /// The cookies of every header called `name` (`Cookie` or `Set-Cookie`), parsed by `parse`.
  static func cookies(
    _ headers: HeaderList, named name: String, _ parse: (String) -> [HAREntry.Cookie]
  ) -> [HAREntry.Cookie] {
    headers.filter { $0.name.equalsIgnoringASCIICase(name) }.flatMap { parse($0.value) }
  }

  static func request(_ exchange: LoggedExchange, kind: BodyKind?, file: String?) -> HAREntry.Request {
    var queryString: [HAREntry.NameValue] = []
    // Parsing the URL costs more than the rest of the request's entry: only when it has a query.
    if exchange.url.utf8.contains(UInt8(ascii: "?")),
      let items = URLComponents(string: exchange.url)?.queryItems
    {
      queryString = items.map { HAREntry.NameValue(name: $0.name, value: $0.value ?? "") }
    }
    var request = HAREntry.Request(
      method: exchange.method, url: exchange.url,
      cookies: cookies(exchange.requestHeaders, named: "Cookie", HAREntry.Cookie.fromCookieHeader),
      headers: nameValues(exchange.requestHeaders), queryString: queryString,
      bodySize: exchange.requestBody.map { Int($0.length) } ?? 0)
    if let body = exchange.requestBody {
      var postData = HAREntry.PostData(mimeType: exchange.requestContentType ?? "", text: "")
      if body.source == .data, kind != .binary, let text = body.text {
        postData.text = text
      } else {
        postData.comment = note(body, file: file)
      }
      postData.file = file
      request.postData = postData
    }
    return request
  }

  static func response(_ exchange: LoggedExchange, kind: BodyKind?, file: String?) -> HAREntry.Response {
    let body = exchange.responseBody
    var content = HAREntry.Content(
      size: Int(body.length), mimeType: exchange.responseContentType ?? "x-unknown")
    if body.source == .data, kind != .binary, let text = body.text, !text.isEmpty {
      content.text = text
      if body.isTruncated { content.comment = "truncated to \(body.data.count) bytes" }
    } else if body.source == .data, file == nil, kind != nil, !body.data.isEmpty {
      // A short binary body without a file of its own (BodyFileNames.needsFile).
      content.text = body.data.base64EncodedString()
      content.encoding = "base64"
      content.comment = "binary"
    } else if !body.isEmpty {
      content.comment = note(body, file: file)
    }
    content.file = file
    let status = exchange.statusCode ?? 0
    return HAREntry.Response(
      status: status,
      statusText: status == 0 ? "" : HTTPURLResponse.localizedString(forStatusCode: status),
      cookies: cookies(exchange.responseHeaders, named: "Set-Cookie", HAREntry.Cookie.fromSetCookieHeader),
      headers: nameValues(exchange.responseHeaders), content: content,
      redirectURL: exchange.redirectedTo ?? "", bodySize: exchange.statusCode == nil ? -1 : Int(body.length))
  }

  static func note(_ body: LoggedBody, file: String?) -> String {
    switch body.source {
    case .file(let path): return "file: \(path)"
    case .stream: return "stream"
    case .delivered(let path): return path.map { "written to file: \($0)" } ?? "delivered in chunks"
    case .data: return file.map { "binary, saved as \($0)" } ?? "binary"
    }
  }
}
