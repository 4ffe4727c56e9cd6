import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

/// A `multipart/form-data` body of `parts` (name, content) with boundary `b0undary`.
func multipartBody(_ parts: [(name: String, content: String)], closed: Bool = true) -> Data {
  var text = ""
  for part in parts {
    text += "--b0undary\r\nContent-Disposition: form-data; name=\"\(part.name)\"\r\n\r\n\(part.content)\r\n"
  }
  if closed { text += "--b0undary--\r\n" }
  return Data(text.utf8)
}

@Suite("LogRedactor: multipart parts and XML elements named like secrets")
struct StructuredRedactionTests {
  let redactor = LogRedactor()

  @Test(
    "the boundary of a multipart content type",
    arguments: [
      ("multipart/form-data; boundary=abc", "abc"),
      ("multipart/form-data; boundary=\"a b;c\"", "a b;c"),
      ("Multipart/Mixed; charset=utf-8; BOUNDARY=xyz", "xyz"),
      ("multipart/form-data", nil),
      ("multipart/form-data; boundary=", nil),
      ("application/json; boundary=abc", nil),
      ("multipart/form-data; boundary=" + String(repeating: "x", count: 71), nil),
    ] as [(String, String?)])
  func boundary(_ contentType: String, _ expected: String?) {
    #expect(LogRedactor.multipartBoundary(contentType: contentType) == expected)
  }

  @Test(
    "multipart: a part named like a secret has its content replaced and collected",
    arguments: [
      // (parts, names whose content is replaced)
      ([("user", "alice"), ("password", "hunter2-secret")], ["password"]),
      ([("api_key", "K-123456"), ("note", "hello")], ["api_key"]),
      ([("accessToken", "line one\r\nline two")], ["accessToken"]),
      ([("monkey", "banana"), ("passage", "text")], []),
      ([("client_secret", "")], []),
      // A form-data token request: the flows' names, exact or contained.
      (
        [("code", "AuthCode-1"), ("country_code", "FR"), ("SAMLResponse", "PHNhbWw-1")],
        ["code", "SAMLResponse"]
      ),
    ] as [([(String, String)], [String])])
  func multipart(_ parts: [(String, String)], _ redactedNames: [String]) {
    let body = multipartBody(parts.map { (name: $0.0, content: $0.1) })
    var secrets = SecretSet()
    let output = String(
      decoding: redactor.redactMultipart(body, boundary: "b0undary", secrets: &secrets), as: UTF8.self)
    let expected = multipartBody(
      parts.map { (name: $0.0, content: redactedNames.contains($0.0) ? "_snip_" : $0.1) })
    #expect(output == String(decoding: expected, as: UTF8.self))
    let expectedSecrets = Set(parts.filter { redactedNames.contains($0.0) }.map(\.1))
    #expect(secrets.values == expectedSecrets)
  }

  @Test("multipart: a binary file part, a nested multipart part, a quoted name, a cut-off body")
  func multipartShapes() {
    var secrets = SecretSet()
    // A binary part (zero bytes, not UTF-8) beside a secret field: the field is still found.
    var body = Data(
      "--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n".utf8)
    body += Data("Content-Type: application/octet-stream\r\n\r\n".utf8) + Data([0, 0xFF, 0xFE, 1])
    body += Data(
      "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nBinPass-1\r\n".utf8)
    body += Data("--b0undary--\r\n".utf8)
    let output = redactor.redactMultipart(body, boundary: "b0undary", secrets: &secrets)
    #expect(output.range(of: Data("BinPass-1".utf8)) == nil)
    #expect(output.range(of: Data([0, 0xFF, 0xFE, 1])) != nil)
    #expect(secrets.values == ["BinPass-1"])

    // A nested multipart/mixed part.
    secrets = SecretSet()
    let inner = "--in\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nNested-7\r\n--in--\r\n"
    let nested = Data(
      ("--b0undary\r\nContent-Disposition: form-data; name=\"files\"\r\n"
        + "Content-Type: multipart/mixed; boundary=in\r\n\r\n\(inner)\r\n--b0undary--\r\n").utf8)
    let nestedOutput = String(
      decoding: redactor.redactMultipart(nested, boundary: "b0undary", secrets: &secrets), as: UTF8.self)
    #expect(!nestedOutput.contains("Nested-7"))
    #expect(nestedOutput.contains("name=\"token\"\r\n\r\n_snip_\r\n--in--"))
    #expect(secrets.values == ["Nested-7"])

    // `;` inside the quoted name, and a name without quotes.
    secrets = SecretSet()
    let quoted = Data(
      ("--b0undary\r\nContent-Disposition: form-data; filename=\"x;y\"; name=secret\r\n\r\nQuoted-9\r\n"
        + "--b0undary--").utf8)
    let quotedOutput = String(
      decoding: redactor.redactMultipart(quoted, boundary: "b0undary", secrets: &secrets), as: UTF8.self)
    #expect(!quotedOutput.contains("Quoted-9"))

    // Cut off by the body size cap inside the secret part: replaced to the end.
    secrets = SecretSet()
    let cut = multipartBody([("password", "CutOff-12345")], closed: false).prefix(70)
    let cutOutput = String(
      decoding: redactor.redactMultipart(cut, boundary: "b0undary", secrets: &secrets), as: UTF8.self)
    #expect(!cutOutput.contains("CutOff"))
    #expect(cutOutput.hasSuffix("_snip_"))

    // No delimiter at all: unchanged.
    let plain = Data("password=x".utf8)
    #expect(redactor.redactMultipart(plain, boundary: "b0undary", secrets: &secrets) == plain)
  }

  @Test(
    "XML: elements and attributes named like secrets",
    arguments: [
      (
        "<a><password>hunter2</password><user>bob</user></a>",
        "<a><password>_snip_</password><user>bob</user></a>"
      ),
      ("<wsse:Password Type=\"t\">Pw-1</wsse:Password>", "<wsse:Password Type=\"t\">_snip_</wsse:Password>"),
      (
        "<r><api_key>K1</api_key><apiKey>K2</apiKey></r>",
        "<r><api_key>_snip_</api_key><apiKey>_snip_</apiKey></r>"
      ),
      ("<token><![CDATA[abc<def]]></token>", "<token>_snip_</token>"),
      ("<auth><user>u</user><secret>s</secret></auth>", "<auth>_snip_</auth>"),
      ("<c token=\"T-1\" id='7' secret='S-2'/>", "<c token=\"_snip_\" id='7' secret='_snip_'/>"),
      ("<x xmlns:key=\"urn:k\" key:id=\"1\"/>", "<x xmlns:key=\"urn:k\" key:id=\"1\"/>"),
      ("<!-- <password>c</password> --><p>1</p>", "<!-- <password>c</password> --><p>1</p>"),
      (
        "<?xml version=\"1.0\"?><monkey>m</monkey><passage>p</passage>",
        "<?xml version=\"1.0\"?><monkey>m</monkey><passage>p</passage>"
      ),
      ("<token>T<b>unclosed", "<token>_snip_"),
      ("<password></password><pwd/>", "<password></password><pwd/>"),
      ("a < b and <token>z</token>", "a < b and <token>_snip_</token>"),
      ("<a><token>left open</a><b>1</b>", "<a><token>_snip_</a><b>1</b>"),
      ("<r></x><token>t</token></r>", "<r></x><token>_snip_</token></r>"),
      ("<token attr=\"unterminated>x</token>", "<token attr=\"unterminated>_snip_</token>"),
    ])
  func xml(_ input: String, _ expected: String) {
    var secrets = SecretSet()
    #expect(redactor.redactXML(input, secrets: &secrets) == expected)
  }

  @Test("XML: deep nesting and end tags that match nothing are scanned in one pass")
  func xmlBadMarkup() {
    let depth = 20_000
    let xml =
      String(repeating: "<a>", count: depth) + "<token>Deep-1</token>"
      + String(repeating: "</b>", count: depth)
    var secrets = SecretSet()
    let output = redactor.redactXML(xml, secrets: &secrets)
    #expect(!output.contains("Deep-1"))
    #expect(output.contains("<token>_snip_</token>"))
    #expect(secrets.values == ["Deep-1"])
    // A secret element whose content is deeper than the end-tag window is replaced to the end.
    let deep = "<token>" + String(repeating: "<a>", count: 100) + "T-2</token><x>after</x>"
    #expect(redactor.redactXML(deep, secrets: &secrets) == "<token>_snip_")
  }

  @Test("XML: replaced texts become secrets, entities decoded")
  func xmlSecrets() {
    var secrets = SecretSet()
    let xml =
      "<r><token> Tok&amp;en-1 </token><auth><user>U-2</user><![CDATA[C-3]]> Tail-5</auth><k key=\"A-4\"/></r>"
    _ = redactor.redactXML(xml, secrets: &secrets)
    #expect(secrets.values == ["Tok&amp;en-1", "Tok&en-1", "U-2", "C-3", "Tail-5", "A-4"])
  }

  @Test(
    "which text bodies are read as XML",
    arguments: [
      ("text/xml", "hello", true),
      ("image/svg+xml", "<svg/>", true),
      ("application/soap+xml; charset=utf-8", "<x/>", true),
      (nil, "  <r/>", true),
      ("text/plain", "<r/>", true),
      ("text/html", "<html/>", false),
      ("text/plain", "a=b", false),
    ] as [(String?, String, Bool)])
  func isXML(_ contentType: String?, _ body: String, _ expected: Bool) {
    #expect(LogRedactor.isXML(Data(body.utf8), contentType: contentType) == expected)
  }

  @Test("a custom sensitive name applies to multipart and XML too")
  func customName() {
    var custom = LogRedactor()
    custom.sensitiveNames.insert("pin")
    var secrets = SecretSet()
    #expect(custom.redactXML("<pin>1234</pin>", secrets: &secrets) == "<pin>_snip_</pin>")
    let body = multipartBody([("pin", "9876")])
    let output = custom.redactMultipart(body, boundary: "b0undary", secrets: &secrets)
    #expect(output == multipartBody([("pin", "_snip_")]))
  }
}

extension LoggingFileTests {
  @Test("multipart fields and XML elements named like secrets appear in no log output")
  func multipartAndXMLSecretsAreRedacted() async throws {
    let secrets = [
      "MultipartPass-81111", "MultipartToken-82222", "XmlPassword-83333", "XmlApiKey-84444",
      "XmlAttrToken-85555", "BinaryPartPass-86666",
    ]
    // A server that repeats the request body as plain text, so only scrubbing can find the values.
    server.route("/reflect") { request in
      let text = String(decoding: request.body, as: UTF8.self)
        .replacingOccurrences(of: "<", with: "[").replacingOccurrences(of: "--b0undary", with: "==")
      return .text("received: " + text)
    }
    try await withLogging { folder in
      let note = String(repeating: "n", count: 300)
      let form = server.fetcher("/echo")
      form.bodyData = multipartBody([
        ("user", "me"), ("password", secrets[0]), ("access_token", secrets[1]), ("note", note),
      ])
      form.setRequestValue("multipart/form-data; boundary=b0undary", forHTTPHeaderField: "Content-Type")

      // A binary file part (not UTF-8) beside a secret field.
      var binaryBody = Data(
        "--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n".utf8)
      binaryBody += Data([0, 1, 2, 0xFF, 0xFE])
      binaryBody += Data(
        "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(secrets[5])\r\n--b0undary--\r\n"
          .utf8)
      let binary = server.fetcher("/echo")
      binary.bodyData = binaryBody
      binary.setRequestValue("multipart/form-data; boundary=b0undary", forHTTPHeaderField: "Content-Type")

      let xmlText =
        "<?xml version=\"1.0\"?><login><user>me</user><password>\(secrets[2])</password>"
        + "<api_key>\(secrets[3])</api_key><session token=\"\(secrets[4])\" id=\"s1\"/></login>"
      let xml = server.fetcher("/echo")
      xml.bodyData = Data(xmlText.utf8)
      xml.setRequestValue("text/xml; charset=utf-8", forHTTPHeaderField: "Content-Type")

      let reflectedForm = server.fetcher("/reflect")
      reflectedForm.bodyData = form.bodyData
      reflectedForm.setRequestValue(
        "multipart/form-data; boundary=b0undary", forHTTPHeaderField: "Content-Type")
      let reflectedXML = server.fetcher("/reflect")
      reflectedXML.bodyData = xml.bodyData
      reflectedXML.setRequestValue("application/xml", forHTTPHeaderField: "Content-Type")

      let fetchers = [form, binary, xml, reflectedForm, reflectedXML]
      var received = Data()
      for fetcher in fetchers {
        let result = await fetcher.fetchResult()
        #expect(result.error == nil)
        received += result.data ?? Data()
      }
      // The server did get and send back every value.
      for secret in secrets { #expect(received.range(of: Data(secret.utf8)) != nil, "\(secret)") }

      SessionFetcher.flushLogs()
      let files = allFiles(under: folder)
      #expect(files.contains { $0.0.lastPathComponent == "log.har" })
      #expect(files.contains { $0.0.lastPathComponent.hasSuffix("_request.bin") })
      for (url, data) in files {
        for secret in secrets {
          #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in \(url.lastPathComponent)")
        }
      }
      // A short binary body is in the HAR file as base64.
      for entry in try harEntries() {
        let content = harResponse(entry)["content"] as? [String: Any]
        guard content?["encoding"] as? String == "base64", let text = content?["text"] as? String else {
          continue
        }
        let decoded = try #require(Data(base64Encoded: text))
        for secret in secrets { #expect(decoded.range(of: Data(secret.utf8)) == nil, "\(secret) in base64") }
      }
      for fetcher in fetchers {
        let log = try #require(fetcher.log)
        for secret in secrets { #expect(!log.contains(secret), "\(secret) in fetcher.log") }
        // (The binary fetch's log shows its bodies by size only.)
        if fetcher !== binary { #expect(log.contains("_snip_")) }
      }
      // Only the secrets went: the other fields are still there.
      let xmlLog = try #require(xml.log)
      #expect(xmlLog.contains("<user>me</user><password>_snip_</password><api_key>_snip_</api_key>"))
      #expect(xmlLog.contains("<session token=\"_snip_\" id=\"s1\"/>"))
      let formLog = try runFile("fetch_1.txt")
      #expect(formLog.contains("saved as fetch_1_request.txt"))
      let formFile = try runFile("fetch_1_request.txt")
      #expect(formFile.contains("name=\"password\"\r\n\r\n_snip_\r\n"))
      #expect(formFile.contains("name=\"user\"\r\n\r\nme\r\n"))
      #expect(formFile.contains(note))
      // The HAR file has the redacted XML request body too.
      let posted = try harEntries().compactMap {
        (harRequest($0)["postData"] as? [String: Any])?["text"] as? String
      }
      #expect(posted.contains { $0.contains("<password>_snip_</password>") })
    }
  }
}
