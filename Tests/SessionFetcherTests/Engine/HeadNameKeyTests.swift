import Foundation
import Testing

@testable import SessionFetcher

@Suite("Response heads: lookups by a name's key")
struct HeadNameKeyTests {
  typealias Field = ParsedResponseHead.Field

  /// A head's fields as the parser and as the package initializer make them.
  static let lines = [
    "HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "content-LENGTH: 5\r\n", "Set-Cookie: a=1\r\n",
    "X-Caf\u{e9}: 1\r\n", "X-CAF\u{e9}: 2\r\n", "ETag: \"x\"\r\n", "\r\n",
  ]

  static func parsed() throws -> ParsedResponseHead {
    var parser = CurlResponseHeadParser()
    var head: ParsedResponseHead?
    for line in lines { head = parser.consume(line: line) ?? head }
    return try #require(head)
  }

  /// The lookups as a scan over every field gives them, the names compared without ASCII case.
  static func scanned(_ head: ParsedResponseHead, _ name: String) -> [String] {
    func folded(_ text: String) -> [UInt8] {
      text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
    }
    return head.fields.filter { folded($0.name) == folded(name) }.map(\.value)
  }

  @Test(arguments: [
    "Content-Length", "CONTENT-LENGTH", "content-length", "Set-Cookie", "set-cookiE", "x-caf\u{e9}",
    "X-CAF\u{e9}", "X-Caf\u{c9}", "ETag", "etag", "Location", "Content-Lengt", "", "Content-Length ",
  ])
  func keyedLookupsAnswerAsAScan(_ name: String) throws {
    let head = try Self.parsed()
    let made = ParsedResponseHead(
      statusCode: head.statusCode, httpVersion: head.httpVersion,
      fields: head.fields.map { Field(name: $0.name, value: $0.value) })
    for head in [head, made] {
      #expect(head.values(named: name) == Self.scanned(head, name))
      #expect(head.value(named: name) == Self.scanned(head, name).first)
    }
    // The parser's key is the one the initializer folds from the name.
    #expect(head.fields.map(\.nameKey) == made.fields.map(\.nameKey))
  }

  /// A name that is not valid UTF-8 is decoded with replacement characters; its key is the decoded
  /// name's, so a lookup by the name the head reports finds it.
  @Test func aNameNotValidUTF8IsFoundByItsDecodedName() throws {
    var parser = CurlResponseHeadParser()
    var head: ParsedResponseHead?
    let lines: [[UInt8]] = [
      Array("HTTP/1.1 200 OK\r\n".utf8), Array("X-".utf8) + [0xFF, 0xFE] + Array(": v\r\n".utf8),
      Array("\r\n".utf8),
    ]
    for line in lines { head = line.withUnsafeBytes { parser.consume(bytes: $0) } ?? head }
    let parsed = try #require(head)
    let field = try #require(parsed.fields.first)
    #expect(field.name == "X-\u{FFFD}\u{FFFD}")
    #expect(field.nameKey == ParsedResponseHead.nameKey(field.name).key)
    #expect(parsed.value(named: field.name) == "v")
    #expect(field == Field(name: field.name, value: "v"))
  }

  @Test func aRenamedFieldIsFoundByItsNewName() {
    var head = ParsedResponseHead(
      statusCode: 200, httpVersion: "HTTP/1.1", fields: [Field(name: "X-Old", value: "v")])
    head.fields[0].name = "Content-Encoding"
    #expect(head.value(named: "content-encoding") == "v")
    #expect(head.values(named: "X-Old").isEmpty)
    #expect(head.joinedValue(named: "CONTENT-ENCODING") == .found("v"))
  }
}
