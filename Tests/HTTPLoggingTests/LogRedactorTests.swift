import Foundation
import TestTraits
import Testing

@testable import HTTPLogging

@Suite("LogRedactor: pure redaction rules")
struct LogRedactorTests {
  let redactor = LogRedactor()

  @Test(
    "the original's snipSubstringOfString",
    arguments: [
      ("abcdefg", "abcd", "fg", "abcd_snip_fg"),
      ("abcdefg", "abcd", "xyz", "abcd_snip_"),
      ("abcdefg", "xyz", "fg", "abcdefg"),
      ("abcdefg", "abcd", nil, "abcd_snip_"),
      ("Bearer abc.def", "Bearer ", nil, "Bearer _snip_"),
      ("client_secret=abc&x=1", "client_secret=", "&", "client_secret=_snip_&x=1"),
      ("a&Passwd=hunter2&b=2", "&Passwd=", "&", "a&Passwd=_snip_&b=2"),
    ] as [(String, String, String?, String)])
  func snipSubstring(input: String, start: String, end: String?, expected: String) {
    #expect(LogRedactor.snipSubstring(of: input, between: start, and: end, marker: "_snip_") == expected)
  }

  @Test(
    "secret-looking names",
    arguments: [
      ("token", true), ("access_token", true), ("refresh_token", true), ("idToken", true),
      ("client_secret", true), ("password", true), ("passwd", true), ("Passwd", true), ("api_key", true),
      ("apiKey", true), ("key", true), ("X-Api-Key", true), ("auth", true), ("signature", true),
      ("oauth_signature", true), ("sig", true), ("Authorization", true), ("monkey", false),
      ("keyboard", false), ("author", false), ("name", false), ("page", false), ("code", false),
      ("message", false), ("Content-Type", false), ("passenger", false), ("TOKEN", true),
      ("apiKEY", true), ("x.api-key2", true), ("my key", true), ("clé_secret", true), ("Schlüssel", false),
      ("пароль_token", true), ("ключ", false), ("", false), ("__", false),
    ])
  func sensitiveNames(name: String, sensitive: Bool) {
    #expect(redactor.isSensitiveName(name) == sensitive)
  }

  /// Entries are measured in characters: a 4-letter Cyrillic entry (8 UTF-8 bytes) is a short one,
  /// which must be a whole word.
  @Test func shortNonASCIIEntriesMatchWholeWords() {
    var custom = LogRedactor()
    custom.sensitiveNames = ["ключ", "пароль"]
    #expect(custom.isSensitiveName("мой_ключ"))
    #expect(!custom.isSensitiveName("мойключ"))
    #expect(custom.isSensitiveName("новыйпароль"))
  }

  @Test(
    "the ASCII word split agrees with the Character one, and leaves other names to it",
    arguments: [
      "access_token", "idToken", "X-Api-Key", "apiKEY", "ABCDef", "a1B2c3", "v2Token", "--x--", "", "9Lives",
      "oauth_signature", "HTTPHeaderName", "x.api-key2",
    ])
  func asciiWords(name: String) {
    #expect(LogRedactor.asciiWords(of: name) == LogRedactor.words(of: name).map { Array($0.utf8) })
    #expect(LogRedactor.asciiWords(of: name + "é") == nil)
  }

  @Test(
    "sensitive headers keep their scheme or cookie names",
    arguments: [
      ("Authorization", "Bearer abc123XYZ", "Bearer _snip_", ["abc123XYZ"]),
      (
        "authorization", "OAuth oauth_token=\"tok1234\", oauth_signature=\"sig5678\"", "OAuth _snip_",
        ["tok1234", "sig5678"]
      ),
      ("Authorization", "GoogleLogin auth=goog9876", "GoogleLogin _snip_", ["goog9876"]),
      (
        "Authorization", "Basic dXNlcjpodW50ZXIy", "Basic _snip_",
        ["dXNlcjpodW50ZXIy", "hunter2", "user:hunter2"]
      ),
      ("Proxy-Authorization", "Basic cHJveHk6cHc=", "Basic _snip_", ["cHJveHk6cHc="]),
      ("Authorization", "rawtoken123", "_snip_", ["rawtoken123"]),
      ("Cookie", "sid=abcd1234; theme=dark", "sid=_snip_; theme=_snip_", ["abcd1234", "dark"]),
      (
        "Set-Cookie", "sid=abcd1234; Path=/; Expires=Wed, 21 Oct 2035 07:28:00 GMT; HttpOnly",
        "sid=_snip_; Path=/; Expires=Wed, 21 Oct 2035 07:28:00 GMT; HttpOnly", ["abcd1234"]
      ),
      ("Set-Cookie", "a=one1; Path=/, b=two2", "a=_snip_; Path=/, b=_snip_", ["one1", "two2"]),
      ("X-Api-Key", "k-998877", "_snip_", ["k-998877"]),
      ("X-Auth-Token", "t-445566", "_snip_", ["t-445566"]),
      ("X-Custom-Secret", "shh-1111", "_snip_", ["shh-1111"]),
      ("Accept", "application/json", "application/json", []),
      (
        "Location", "https://h/cb?x=1&access_token=tok777", "https://h/cb?x=1&access_token=_snip_",
        ["tok777"]
      ),
    ] as [(String, String, String, [String])])
  func headers(name: String, value: String, expected: String, expectedSecrets: [String]) {
    var secrets = SecretSet()
    #expect(redactor.redactHeader(name: name, value: value, secrets: &secrets) == expected)
    for secret in expectedSecrets { #expect(secrets.values.contains(secret), "\(secret)") }
  }

  @Test(
    "query items and URL passwords",
    arguments: [
      ("https://h/p?a=1&token=abcd", "https://h/p?a=1&token=_snip_", ["abcd"]),
      ("https://h/p?api_key=k%2Fz9&q=cats", "https://h/p?api_key=_snip_&q=cats", ["k/z9", "k%2Fz9"]),
      ("https://u:pw12@h/p", "https://u:_snip_@h/p", ["pw12"]),
      ("https://h/p#access_token=frag99&x=1", "https://h/p#access_token=_snip_&x=1", ["frag99"]),
      ("https://h/p?q=1", "https://h/p?q=1", []),
    ] as [(String, String, [String])])
  func urls(url: String, expected: String, expectedSecrets: [String]) {
    var secrets = SecretSet()
    #expect(redactor.redactURLString(url, secrets: &secrets) == expected)
    #expect(Set(expectedSecrets).isSubset(of: secrets.values))
  }

  @Test(
    "form fields",
    arguments: [
      (
        "grant_type=refresh&refresh_token=rt-1&client_secret=cs-2",
        "grant_type=refresh&refresh_token=_snip_&client_secret=_snip_"
      ),
      ("Email=a%40b.c&Passwd=hunter2&service=x", "Email=a%40b.c&Passwd=_snip_&service=x"),
      ("a=1&b=2", "a=1&b=2"),
      ("token=", "token="),
    ])
  func forms(body: String, expected: String) {
    var secrets = SecretSet()
    #expect(redactor.redactFormEncoded(body, secrets: &secrets) == expected)
  }

  @Test("JSON keys at any depth; booleans and null kept")
  func json() throws {
    let input = """
      {"access_token":"at-123","user":{"name":"n","password":"pw-456","keys":[{"api_key":"ak-789"}]},
       "token_expired":true,"refresh_token":null,"list":[{"client_secret":{"v":"deep-1"}}],"pin":{"otp":123456}}
      """
    var secrets = SecretSet()
    let object = try JSONSerialization.jsonObject(with: Data(input.utf8))
    let redacted = try #require(redactor.redactJSON(object, secrets: &secrets) as? [String: Any])
    #expect(redacted["access_token"] as? String == "_snip_")
    let user = try #require(redacted["user"] as? [String: Any])
    #expect(user["name"] as? String == "n")
    #expect(user["password"] as? String == "_snip_")
    let keys = try #require(user["keys"] as? [[String: Any]])
    #expect(keys.first?["api_key"] as? String == "_snip_")
    #expect(redacted["token_expired"] as? Bool == true)
    #expect(redacted["refresh_token"] is NSNull)
    for secret in ["at-123", "pw-456", "ak-789", "deep-1", "123456"] {
      #expect(secrets.values.contains(secret), "\(secret)")
    }
    #expect(!secrets.values.contains("n"))
  }

  @Test(
    "free text: key=value, quoted pairs, Bearer",
    arguments: [
      ("error: bad refresh_token=rt-0001 given", "rt-0001"),
      ("{\"password\": \"pw-7777\", broken", "pw-7777"),
      ("header was Bearer tok.en-5555 here", "tok.en-5555"),
    ])
  func freeText(text: String, secret: String) {
    var secrets = SecretSet()
    let output = redactor.redactFreeText(text, secrets: &secrets)
    #expect(!output.contains(secret))
    #expect(output.contains("_snip_"))
  }

  @Test("scrubbing replaces every form of a secret, longest first, and skips short values")
  func scrubbing() {
    var secrets = SecretSet()
    secrets.insert("s3cr/t value")
    secrets.insert("s3cr")
    secrets.insert("ab")
    let text = "raw s3cr/t value, pct s3cr%2Ft%20value, json s3cr\\/t value, form s3cr/t+value, ab stays"
    let output = redactor.scrub(text, secrets: secrets)
    #expect(!output.contains("s3cr"))
    #expect(output.contains("ab stays"))
  }

  @Test("byte scrubbing of binary data, including a secret cut by truncation")
  func dataScrubbing() {
    var secrets = SecretSet()
    secrets.insert("topsecret")
    let patterns = redactor.scrubPatterns(secrets)
    let data = Data([0, 1, 2]) + Data("topsecret".utf8) + Data([0xFF]) + Data("tops".utf8)
    let output = redactor.scrub(data, patterns: patterns, truncated: true)
    #expect(output.range(of: Data("topsecret".utf8)) == nil)
    #expect(output.range(of: Data("tops".utf8)) == nil)
    #expect(output.starts(with: [0, 1, 2]))
  }

  @Test("a whole record: a secret from one place is scrubbed from all others")
  func wholeRecord() {
    let now = Date()
    var exchange = LoggedExchange(
      kind: .first, method: "POST", url: "http://h/p?access_token=QTOKEN-1&q=1",
      requestHeaders: [
        ("Authorization", "Bearer HDRTOKEN-2"), ("Cookie", "sid=COOKIE-3"), ("X-Echo", "COOKIE-3"),
      ],
      requestBody: LoggedBody(
        source: .data, data: Data("password=FORMPW-4&x=HDRTOKEN-2".utf8), totalLength: 30),
      sentDate: now)
    exchange.statusCode = 200
    exchange.responseHeaders = [("Content-Type", "application/json"), ("X-Seen", "QTOKEN-1")]
    let body =
      #"{"headers":{"Authorization":"Bearer HDRTOKEN-2"},"note":"FORMPW-4 and COOKIE-3","secret":"JSON-5"}"#
    exchange.responseBody = LoggedBody(
      source: .data, data: Data(body.utf8), totalLength: Int64(body.utf8.count))
    let record = FetchRecord(
      comment: "uses JSON-5", startDate: now, endDate: now, method: "POST", url: exchange.url,
      exchanges: [exchange],
      errorText: "server said HDRTOKEN-2")
    let prepared = RecordPreparer(redactor: redactor).prepare(record)
    let text = TextLogFormatter.format(prepared)
    let entries = HARFormatter.entries(
      prepared, files: BodyFileNames(), place: HARFormatter.RunPlace(number: 1, textLog: "fetch_1.txt"))
    // The viewer page's data element: the same entries, so the same redaction.
    let html = String(decoding: ViewerPage.dataElement(entries), as: UTF8.self)
    let har = HARFormatter.entries(prepared, files: nil).map { String(decoding: $0, as: UTF8.self) }.joined()
    for output in [text, html, har] {
      for secret in ["QTOKEN-1", "HDRTOKEN-2", "COOKIE-3", "FORMPW-4", "JSON-5"] {
        #expect(!output.contains(secret), "\(secret) leaked")
      }
    }
    #expect(text.contains("Bearer _snip_"))
    #expect(text.contains("\"note\" : \"_snip_ and _snip_\""))

    let unredacted = RecordPreparer(redactor: nil).prepare(record)
    #expect(TextLogFormatter.format(unredacted).contains("HDRTOKEN-2"))
  }

  @Test("release-build gating")
  func gating() {
    #expect(LoggingSettings.isActive(enabled: true, allowedInReleaseBuilds: false, isDebugBuild: true))
    #expect(!LoggingSettings.isActive(enabled: true, allowedInReleaseBuilds: false, isDebugBuild: false))
    #expect(LoggingSettings.isActive(enabled: true, allowedInReleaseBuilds: true, isDebugBuild: false))
    #expect(!LoggingSettings.isActive(enabled: false, allowedInReleaseBuilds: true, isDebugBuild: false))
    #expect(!LoggingSettings.isActive(enabled: false, allowedInReleaseBuilds: true, isDebugBuild: true))
  }

  @Test(
    "default logging directory",
    .disabled(if: isMacOS, "macOS logs to ~/Desktop/SessionFetcherLogs, not to the XDG state folder"),
    arguments: [
      (["HOME": "/home/u", "XDG_STATE_HOME": "/state"], "/state/SessionFetcherLogs"),
      (["HOME": "/home/u", "XDG_STATE_HOME": "relative"], "/home/u/.local/state/SessionFetcherLogs"),
      (["HOME": "/home/u"], "/home/u/.local/state/SessionFetcherLogs"),
      ([:], "/tmpdir/SessionFetcherLogs"),
    ])
  func defaultDirectory(environment: [String: String], expected: String) {
    #if !os(macOS)
      let url = LoggingSettings.defaultDirectory(
        environment: environment, temporaryDirectory: URL(fileURLWithPath: "/tmpdir", isDirectory: true))
      #expect(url.path == expected)
    #endif
  }
}
