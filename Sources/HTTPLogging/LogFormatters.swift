import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The names of the body files of one fetch in its run folder, per exchange.
struct BodyFileNames: Sendable, Equatable {
  var request: [Int: String] = [:]
  var response: [Int: String] = [:]

  /// `fetch_N_request.json`, `fetch_N_response.png`…; exchanges before the last one get
  /// `fetch_N_K_response.txt` (K from 1).
  static func make(number: Int, prepared: PreparedRecord) -> BodyFileNames {
    var names = BodyFileNames()
    let exchanges = prepared.record.exchanges
    for (index, exchange) in exchanges.enumerated() {
      let infix = index == exchanges.count - 1 ? "" : "_\(index + 1)"
      if let kind = prepared.requestKinds[index] {
        let ext = kind.fileExtension(contentType: exchange.requestContentType)
        names.request[index] = "fetch_\(number)\(infix)_request.\(ext)"
      }
      if let kind = prepared.responseKinds[index] {
        let ext = kind.fileExtension(contentType: exchange.responseContentType)
        names.response[index] = "fetch_\(number)\(infix)_response.\(ext)"
      }
    }
    return names
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

  /// `value` in decimal with leading zeros to `width` digits.
  static func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// A date broken down into calendar fields by the C library: a `DateFormatter` or
  /// `ISO8601DateFormatter` made per call cost about 600,000 instructions, more than the rest of a
  /// fetch's HAR entry.
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
      "\(LogDates.display(record.startDate))  elapsed: \(String(format: "%.3f", record.elapsed))sec")
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
        lines.append("Retrying after \(String(format: "%.3f", delay))sec: \(exchange.errorText ?? "")")
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

/// The run's HTML index: a head once, then one entry per fetch.
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

  static func head(processName: String, stamp: String) -> String {
    """
    <!DOCTYPE html>
    <html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
    <title>\(escape(processName)) HTTP fetch log \(escape(stamp))</title>
    <style>
    body { font-family: -apple-system, sans-serif; font-size: 13px; }
    code { word-break: break-all; }
    .error { color: #c0c; font-weight: bold; }
    table.headers { border-collapse: collapse; margin-left: 1em; }
    table.headers td { border: 1px solid #ddd; padding: 1px 4px; vertical-align: top; word-break: break-all; }
    </style>
    </head><body>
    <h3>\(escape(processName)) HTTP fetch log \(escape(stamp))</h3>

    """
  }

  static func entry(number: Int, prepared: PreparedRecord, textFile: String, files: BodyFileNames) -> String {
    let record = prepared.record
    var html = "<div class='fetch' id='fetch_\(number)'>\n"
    html +=
      "<b>\(number). \(escape(LogDates.display(record.startDate)))&nbsp;&nbsp;"
      + "\(escape(record.comment ?? "(No fetcher comment set)"))</b>&nbsp;&nbsp;"
      + "<a href='\(escape(textFile))'><i>request/response log</i></a><br>\n"
    html += "elapsed: \(String(format: "%5.3f", record.elapsed))sec<br>\n"
    if record.exchanges.isEmpty {
      html += "<b>request:</b> \(escape(record.method)) <code>\(escape(record.url))</code><br>\n"
    }
    for (index, exchange) in record.exchanges.enumerated() {
      switch exchange.kind {
      case .first: break
      case .redirect: html += "<i>redirected to:</i><br>\n"
      case .retry(let number): html += "<i>retry \(number):</i><br>\n"
      case .continuation: html += "<i>continued:</i><br>\n"
      }
      html += "<b>request:</b> \(escape(exchange.method)) <code>\(escape(exchange.url))</code><br>\n"
      html += headersHTML(exchange.requestHeaders, notes: requestNotes(exchange))
      if let body = exchange.requestBody {
        html += bodyHTML(body, file: files.request[index]) + "<br>\n"
      }
      if let status = exchange.statusCode {
        let isError = !(200...299).contains(status)
        let flag = status >= 400 ? " &#x2691;" : ""
        let statusHTML = isError ? "<span class='error'>status \(status)\(flag)</span>" : "status \(status)"
        html += "<b>response:</b>&nbsp;&nbsp;\(statusHTML)<br>\n"
        html += headersHTML(exchange.responseHeaders, notes: responseNotes(exchange))
        html += bodyHTML(exchange.responseBody, file: files.response[index]) + "<br>\n"
      } else {
        html += "<b>response:</b>&nbsp;&nbsp;<span class='error'>none</span><br>\n"
      }
      if let target = exchange.redirectedTo {
        html += "redirects to <code>\(escape(target))</code><br>\n"
      }
      if let delay = exchange.retryDelay {
        html +=
          "<span class='error'>retrying after \(String(format: "%.3f", delay))sec: "
          + "\(escape(exchange.errorText ?? ""))</span><br>\n"
      }
    }
    if record.retryCount > 0 || record.redirectCount > 0 {
      html += "retries: \(record.retryCount), redirects: \(record.redirectCount)<br>\n"
    }
    if let error = record.errorText {
      html += "<b>Error:</b> <span class='error'>\(escape(error))</span><br>\n"
    }
    html += "</div>\n<hr>\n"
    return html
  }

  static func requestNotes(_ exchange: LoggedExchange) -> [String] {
    var notes: [String] = []
    if exchange.header("Authorization", in: exchange.requestHeaders) != nil {
      notes.append(
        exchange.url.lowercased().hasPrefix("https:") ? "authorized" : "authorized, non-SSL &#x26A0;")
    }
    if exchange.header("Cookie", in: exchange.requestHeaders) != nil { notes.append("cookies") }
    if exchange.header("If-Match", in: exchange.requestHeaders) != nil { notes.append("if-match") }
    if exchange.header("If-None-Match", in: exchange.requestHeaders) != nil { notes.append("if-none-match") }
    return notes
  }

  static func responseNotes(_ exchange: LoggedExchange) -> [String] {
    var notes: [String] = []
    if exchange.header("Set-Cookie", in: exchange.responseHeaders) != nil { notes.append("sets cookies") }
    if exchange.header("Location", in: exchange.responseHeaders) != nil { notes.append("redirects") }
    return notes
  }

  static func headersHTML(_ headers: HeaderList, notes: [String]) -> String {
    let summary = "headers: \(headers.count)" + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))")
    guard !headers.isEmpty else { return summary + "<br>\n" }
    var html = "<details><summary>\(summary)</summary><table class='headers'>\n"
    for header in headers {
      html += "<tr><td>\(escape(header.name))</td><td>\(escape(header.value))</td></tr>\n"
    }
    return html + "</table></details>\n"
  }

  static func bodyHTML(_ body: LoggedBody, file: String?) -> String {
    switch body.source {
    case .file(let path):
      return "data: file <code>\(escape(path))</code>\(body.totalLength.map { ", \($0) bytes" } ?? "")"
    case .stream:
      return "data: stream\(body.totalLength.map { ", \($0) bytes" } ?? "")"
    case .delivered(let path):
      return "data: \(body.length) bytes" + (path.map { ", written to <code>\(escape($0))</code>" } ?? "")
    case .data:
      var html = "data: \(body.length) bytes"
      if body.isTruncated { html += " (truncated to \(body.data.count) bytes)" }
      if let file { html += " <a href='\(escape(file))'>\(escape(file))</a>" }
      return html
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

  /// The JSON of each exchange's entry.
  static func entries(_ prepared: PreparedRecord, files: BodyFileNames?) -> [Data] {
    let record = prepared.record
    var result: [Data] = []
    for (index, exchange) in record.exchanges.enumerated() {
      let isLast = index == record.exchanges.count - 1
      let end = exchange.endDate ?? record.endDate
      let wait = (exchange.responseDate ?? end).timeIntervalSince(exchange.sentDate)
      let receive = exchange.responseDate.map { end.timeIntervalSince($0) } ?? 0
      let entry = HAREntry(
        startedDateTime: LogDates.iso8601(exchange.sentDate),
        time: milliseconds(end.timeIntervalSince(exchange.sentDate)),
        request: request(exchange, kind: prepared.requestKinds[index], file: files?.request[index]),
        response: response(exchange, kind: prepared.responseKinds[index], file: files?.response[index]),
        timings: exchange.metrics.map(timings)
          ?? HAREntry.Timings(send: 0, wait: milliseconds(wait), receive: milliseconds(receive)),
        comment: record.comment,
        error: isLast ? (record.errorText ?? exchange.errorText) : exchange.errorText)
      result.append(entry.jsonData)
    }
    return result
  }

  /// HAR timings from an engine's phases: `dns`, `connect` (TLS included, as HAR 1.2 counts it) and
  /// `ssl` are -1 for a phase the exchange did not go through (a reused connection); `send` is 0
  /// (libcurl does not time the request's writing apart from the wait).
  static func timings(_ metrics: TransferMetrics) -> HAREntry.Timings {
    let lookupEnd = metrics.nameLookup ?? 0
    let connectEnd = metrics.secureConnection ?? metrics.connect
    let requestStart = metrics.requestStart ?? connectEnd ?? lookupEnd
    let firstByte = metrics.firstByte ?? metrics.total
    return HAREntry.Timings(
      dns: metrics.nameLookup.map(milliseconds) ?? -1,
      connect: connectEnd.map { milliseconds($0 - lookupEnd) } ?? -1,
      ssl: metrics.secureConnection.map { milliseconds($0 - (metrics.connect ?? lookupEnd)) } ?? -1,
      send: 0, wait: milliseconds(firstByte - requestStart),
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
    if let items = URLComponents(string: exchange.url)?.queryItems {
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
    } else if !body.isEmpty {
      content.comment = note(body, file: file)
    }
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
