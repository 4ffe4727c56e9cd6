import Foundation
import MIMEDocument
import TestTraits
import Testing

/// `MIMEDocument.parse(boundary:data:)`: RFC 2046's multipart framing, each rule a row. The lenient
/// `parts(boundary:data:)` (GTMSessionFetcher's rules) answers the rows marked `lenientDiffers` with
/// parts instead of an error, or with other parts.
@Suite("MIME parsing by RFC 2046")
struct StrictParsingTests {
  enum Expected: Sendable, Equatable {
    case parts([[String: String]], bodies: [String])
    case error(MIMEDocumentError)
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var document: String
    var expected: Expected
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "two parts, with and without headers",
      document: "--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b\r\n\r\nworld\r\n--b--",
      expected: .parts([["Content-Type": "text/plain"], [:]], bodies: ["hello", "world"])),
    Row(
      name: "preamble and epilogue are ignored",
      document: "preamble\r\n--b\r\n\r\none\r\n--b--\r\nepilogue",
      expected: .parts([[:]], bodies: ["one"])),
    Row(
      name: "padding after a delimiter", document: "--b \t\r\n\r\none\r\n--b--  \r\n",
      expected: .parts([[:]], bodies: ["one"])),
    Row(
      name: "an empty body and a part that is only headers",
      document: "--b\r\nA: 1\r\n\r\n\r\n--b\r\nB: 2\r\n--b--",
      expected: .parts([["A": "1"], ["B": "2"]], bodies: ["", ""])),
    Row(
      name: "no close delimiter: cut short", document: "--b\r\n\r\none\r\n--b\r\n\r\ntwo",
      expected: .error(.missingCloseDelimiter)),
    Row(
      name: "the close delimiter before any part", document: "--b--\r\n",
      expected: .error(.missingCloseDelimiter)),
    Row(name: "no delimiter at all", document: "just text", expected: .error(.noDelimiter)),
    Row(
      name: "a delimiter not at the start of a line is content",
      document: "--b\r\n\r\nsee x--b and --b-- inline\r\n--b--",
      expected: .parts([[:]], bodies: ["see x--b and --b-- inline"])),
    Row(
      name: "a line beginning with the delimiter and more is content",
      document: "--b\r\n\r\none\r\n--bX\r\nstill one\r\n--b--",
      expected: .parts([[:]], bodies: ["one\r\n--bX\r\nstill one"])),
    Row(
      name: "a delimiter after a bare LF is content, so the close is missing",
      document: "--b\r\n\r\none\n--b--", expected: .error(.missingCloseDelimiter)),
    Row(
      name: "a header line without a colon", document: "--b\r\nnot a header\r\n\r\nx\r\n--b--",
      expected: .error(.malformedHeader("not a header"))),
    Row(
      name: "a header name with a space", document: "--b\r\nBad Name: v\r\n\r\nx\r\n--b--",
      expected: .error(.malformedHeader("Bad Name: v"))),
    Row(
      name: "an empty header name", document: "--b\r\n: v\r\n\r\nx\r\n--b--",
      expected: .error(.malformedHeader(": v"))),
    Row(
      name: "a bare LF inside the headers", document: "--b\r\nA: 1\nB: 2\r\n\r\nx\r\n--b--",
      expected: .error(.malformedHeader("A: 1\n"))),
    Row(
      name: "a continuation with nothing before it", document: "--b\r\n folded\r\n\r\nx\r\n--b--",
      expected: .error(.malformedHeader(" folded"))),
    Row(
      name: "a folded header is unfolded",
      document: "--b\r\nContent-Disposition: form-data;\r\n name=\"a\"\r\n\r\nx\r\n--b--",
      expected: .parts([["Content-Disposition": "form-data; name=\"a\""]], bodies: ["x"])),
    Row(
      name: "a name given twice keeps both values", document: "--b\r\nA: 1\r\nA: 2\r\n\r\nx\r\n--b--",
      expected: .parts([["A": "1, 2"]], bodies: ["x"])),
  ]

  @Test(arguments: rows)
  func parse(_ row: Row) {
    let data = Data(row.document.utf8)
    switch row.expected {
    case .parts(let headers, let bodies):
      let parts = try? MIMEDocument.parse(boundary: "b", data: data)
      #expect(parts?.map(\.headers) == headers)
      #expect(parts?.map { String(decoding: $0.body, as: UTF8.self) } == bodies)
    case .error(let error):
      #expect(throws: error) { try MIMEDocument.parse(boundary: "b", data: data) }
    }
  }

  /// The lenient parser gives parts for what the strict one refuses (the reason both exist).
  @Test func theLenientParserReadsACutDocument() throws {
    let cut = Data("--b\r\n\r\none\r\n--b\r\n\r\ntwo".utf8)
    #expect(MIMEDocument.parts(boundary: "b", data: cut)?.count == 1)
    #expect(throws: MIMEDocumentError.missingCloseDelimiter) {
      try MIMEDocument.parse(boundary: "b", data: cut)
    }
  }

  @Test func aDocumentTheLibraryGeneratesParsesBack() throws {
    let document = MIMEDocument()
    document.appendPart(headers: ["Content-Type": "text/plain"], body: Data("Hello".utf8))
    document.appendPart(headers: [:], body: Data("\r\n--almost\r\n".utf8))
    let (data, boundary) = try document.generateData()
    let parts = try MIMEDocument.parse(boundary: boundary, data: data)
    #expect(parts.map(\.body) == [Data("Hello".utf8), Data("\r\n--almost\r\n".utf8)])
    #expect(parts.first?.headers == ["Content-Type": "text/plain"])
    let shared = try MIMEDocument.parse(boundary: boundary, data: data, sharingInput: true)
    #expect(shared.map { Data($0.body) } == parts.map(\.body))
  }

  @Test(arguments: ["", "a\r\nb"])
  func aBoundaryThatCannotFrameIsRefused(_ boundary: String) {
    #expect(throws: MIMEDocumentError.invalidBoundary(boundary)) {
      try MIMEDocument.parse(boundary: boundary, data: Data("--\r\n".utf8))
    }
  }

  /// Inputs that make a naive parser quadratic finish (linear work; the time is measured in the
  /// benchmark, not here): a million header lines, and a one-character boundary whose candidate
  /// delimiters fill 10 MB of body.
  @Test(.singleThreadedSkippedUnderThreadSanitizer) func adversarialInputsFinish() throws {
    var headers = Data("--b\r\n".utf8)
    headers.append(Data(String(repeating: "X: y\r\n", count: 1_000_000).utf8))
    headers.append(Data("\r\nbody\r\n--b--".utf8))
    let parsed = try MIMEDocument.parse(boundary: "b", data: headers)
    #expect(parsed.first?.headers["X"]?.count == 1_000_000 * 3 - 2)

    var delimiters = Data("--b\r\n\r\n".utf8)
    delimiters.append(Data(String(repeating: "\r\n--bx", count: 10_000_000 / 6).utf8))
    delimiters.append(Data("\r\n--b--".utf8))
    let body = try MIMEDocument.parse(boundary: "b", data: delimiters, sharingInput: true).first?.body
    #expect(body?.count == 10_000_000 / 6 * 6)
  }
}
