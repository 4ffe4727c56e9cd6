import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

/// The HAR entries, the log's date stamps and HTML escaping, without a server.
@Suite("Log formatting: HAR entries, dates and HTML escaping")
struct HARFormatterTests {
  /// Dates around the edges of the calendar (seconds since 1970), some between milliseconds.
  static let dates: [TimeInterval] = [
    0, 0.001, 0.999, 0.9996, 0.0006, -0.001, -86_400.5, 951_782_400.25, 1_704_067_199.999,
    1_795_414_326.567, 1_795_414_326.5675, 4_102_444_800.1,
  ]

  @Test("dates match DateFormatter and ISO8601DateFormatter", arguments: dates)
  func datesMatchFormatters(_ since1970: TimeInterval) {
    let date = Date(timeIntervalSince1970: since1970)
    let iso = ISO8601DateFormatter()
    iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    #expect(LogDates.iso8601(date) == iso.string(from: date))
    for (format, ours) in [
      ("yyyy-MM-dd HH:mm:ss.SSS", LogDates.display(date)), ("yyyy-MM-dd_HH-mm-ss", LogDates.runStamp(date)),
    ] {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.dateFormat = format
      #expect(ours == formatter.string(from: date), "\(format)")
    }
  }

  @Test(
    "seconds with three decimals match String(format:)",
    arguments: [
      0, -0.0, 0.0004, 0.0006, 0.001, 0.0125, 0.1, 0.999, 0.9996, 1, 1.5, 12.3456, 59.9999, 3600.25,
      86_400.001,
      -0.0004, -0.25, -12.3456, 1e11, .infinity, -.infinity, .nan,
    ] as [TimeInterval])
  func seconds(_ value: TimeInterval) {
    #expect(LogDates.seconds(value) == String(format: "%.3f", value))
  }

  @Test(
    "a request's Cookie header becomes HAR cookies",
    arguments: [
      ("a=1; b=2", [HAREntry.Cookie(name: "a", value: "1"), HAREntry.Cookie(name: "b", value: "2")]),
      (" sid = x=y ;", [HAREntry.Cookie(name: "sid", value: "x=y")]),
      ("novalue; =empty; c=", [HAREntry.Cookie(name: "c", value: "")]),
      ("", []),
    ])
  func cookieHeader(_ header: String, _ expected: [HAREntry.Cookie]) {
    #expect(HAREntry.Cookie.fromCookieHeader(header) == expected)
  }

  @Test(
    "a response's Set-Cookie header becomes HAR cookies with their attributes",
    arguments: [
      (
        "id=7; Path=/a; Domain=example.com; Secure; HttpOnly",
        [
          HAREntry.Cookie(
            name: "id", value: "7", path: "/a", domain: "example.com", httpOnly: true, secure: true)
        ]
      ),
      (
        "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT, b=2; max-age=5",
        [
          HAREntry.Cookie(name: "a", value: "1", expires: "2021-06-09T10:18:14.000Z"),
          HAREntry.Cookie(name: "b", value: "2"),
        ]
      ),
      ("c=3; Expires=never", [HAREntry.Cookie(name: "c", value: "3")]),
      ("no-equals; Path=/", []),
    ])
  func setCookieHeader(_ header: String, _ expected: [HAREntry.Cookie]) {
    #expect(HAREntry.Cookie.fromSetCookieHeader(header) == expected)
  }

  @Test("an entry is valid JSON with HAR's fields, cookies, and the error of the last exchange")
  func entryFields() throws {
    let sent = Date(timeIntervalSince1970: 1_795_414_326.5)
    var first = LoggedExchange(
      kind: .first, method: "POST", url: "http://h/p?q=1&r", requestHeaders: [("Cookie", "a=1; b=2")],
      requestBody: LoggedBody(source: .data, data: Data("x=\"y\"\n".utf8), totalLength: 6), sentDate: sent)
    first.responseDate = sent.addingTimeInterval(0.25)
    first.endDate = sent.addingTimeInterval(0.5)
    first.statusCode = 503
    first.responseHeaders = [("Set-Cookie", "s=9; Path=/"), ("Content-Type", "text/plain")]
    first.responseBody = LoggedBody(source: .data, data: Data("busy \\ now".utf8), totalLength: 10)
    first.errorText = "status 503"
    // A second exchange whose clock ran backwards: no negative times.
    var second = LoggedExchange(
      kind: .retry(number: 1), method: "POST", url: "http://h/p", requestHeaders: [], sentDate: sent)
    second.endDate = sent.addingTimeInterval(-1)
    let record = FetchRecord(
      comment: "two tries", startDate: sent, endDate: sent.addingTimeInterval(1), method: "POST",
      url: first.url, exchanges: [first, second], errorText: "gave up")
    let prepared = RecordPreparer(redactor: nil).prepare(record)
    let entries = try HARFormatter.entries(prepared, files: nil).map {
      try #require(JSONSerialization.jsonObject(with: $0) as? [String: Any])
    }
    #expect(entries.count == 2)
    let entry = entries[0]
    #expect(entry["startedDateTime"] as? String == "2026-11-23T06:12:06.500Z")
    #expect(entry["time"] as? Double == 500)
    #expect(entry["comment"] as? String == "two tries")
    #expect(entry["_error"] as? String == "status 503")
    #expect(entries[1]["_error"] as? String == "gave up")
    #expect(entries[1]["time"] as? Double == 0)
    let timings = try #require(entry["timings"] as? [String: Any])
    #expect(timings["wait"] as? Double == 250)
    #expect(timings["receive"] as? Double == 250)

    let request = try #require(entry["request"] as? [String: Any])
    #expect(request["headersSize"] as? Int == -1)
    #expect(request["bodySize"] as? Int == 6)
    let requestCookies = try #require(request["cookies"] as? [[String: Any]])
    #expect(requestCookies.compactMap { $0["name"] as? String } == ["a", "b"])
    let query = try #require(request["queryString"] as? [[String: String]])
    #expect(query == [["name": "q", "value": "1"], ["name": "r", "value": ""]])
    let postData = try #require(request["postData"] as? [String: Any])
    #expect(postData["text"] as? String == "x=\"y\"\n")

    let response = try #require(entry["response"] as? [String: Any])
    #expect(response["status"] as? Int == 503)
    #expect(response["headersSize"] as? Int == -1)
    let responseCookies = try #require(response["cookies"] as? [[String: Any]])
    #expect(responseCookies.count == 1)
    #expect(responseCookies.first?["path"] as? String == "/")
    let content = try #require(response["content"] as? [String: Any])
    #expect(content["text"] as? String == "busy \\ now")
    #expect(content["mimeType"] as? String == "text/plain")
    // Fields HAR marks optional are left out rather than written as null.
    let secondResponse = try #require(entries[1]["response"] as? [String: Any])
    let secondContent = try #require(secondResponse["content"] as? [String: Any])
    #expect(secondContent["text"] == nil && secondContent["comment"] == nil)
    #expect((entries[1]["request"] as? [String: Any])?["postData"] == nil)
  }

  @Test(
    "HTML escaping",
    arguments: [
      ("plain text/1.0", "plain text/1.0"), ("", ""), ("a&b", "a&amp;b"),
      ("<script>'x'\"y\"</script>", "&lt;script&gt;&#39;x&#39;&quot;y&quot;&lt;/script&gt;"),
      ("ünï & cödé <ok>", "ünï &amp; cödé &lt;ok&gt;"), ("&\u{301}", "&amp;\u{301}"), ("&amp;", "&amp;amp;"),
    ])
  func htmlEscaping(_ text: String, _ expected: String) {
    #expect(HTMLLogFormatter.escape(text) == expected)
  }

  /// libcurl's phases with the fetcher's own moment the body went out: sending runs from the
  /// request's start to that moment (kept inside the request's start and the first byte), waiting
  /// from there; without a body, sending is 0.
  @Test(
    arguments: [
      (nil, 0, 400), (0.3, 200, 200), (0.05, 0, 400), (0.9, 400, 0),
    ] as [(TimeInterval?, Double, Double)])
  func sendingRunsUntilTheBodyWentOut(bodySent: TimeInterval?, send: Double, wait: Double) {
    let metrics = TransferMetrics(
      nameLookup: 0.01, connect: 0.05, requestStart: 0.1, firstByte: 0.5, total: 0.6)
    let timings = HARFormatter.timings(metrics, bodySent: bodySent)
    #expect(abs(timings.send - send) < 0.001)
    #expect(abs(timings.wait - wait) < 0.001)
    #expect(abs(timings.receive - 100) < 0.001)
  }

  /// libcurl's first byte of an upload is when its body started to go out (the request's start):
  /// the response head the fetcher saw after the body's last bytes is the first byte instead. A
  /// first byte after the body went out (a download, an answer before the body ended) is kept.
  @Test(
    arguments: [
      // libcurl's mark at the request's start; the body out at 0.4, the head at 0.45.
      (0.1, 0.4, 0.45, 300, 50, 150),
      // The same, the head seen as the transfer ended: never past the total.
      (0.1, 0.4, 0.7, 300, 200, 0),
      // A first byte after the body went out is libcurl's own: kept.
      (0.5, 0.3, 0.52, 200, 200, 100),
      // No head seen (the transfer failed): libcurl's mark stands.
      (0.1, 0.4, nil, 0, 0, 500),
    ] as [(TimeInterval, TimeInterval, TimeInterval?, Double, Double, Double)])
  func anUploadsFirstByteIsTheResponseHead(
    firstByte: TimeInterval, bodySent: TimeInterval, responseHead: TimeInterval?,
    send: Double, wait: Double, receive: Double
  ) {
    let metrics = TransferMetrics(
      nameLookup: 0.01, connect: 0.05, requestStart: 0.1, firstByte: firstByte, total: 0.6)
    let timings = HARFormatter.timings(metrics, bodySent: bodySent, responseHead: responseHead)
    #expect(abs(timings.send - send) < 0.001, "\(timings)")
    #expect(abs(timings.wait - wait) < 0.001, "\(timings)")
    #expect(abs(timings.receive - receive) < 0.001, "\(timings)")
  }
}
