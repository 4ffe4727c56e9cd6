import FetcherTesting
import Foundation
import Testing

@testable import MIMEDocument

/// The original's testPartParsing_* cases, bad input, and round trips.
@Suite("Parsing documents")
struct PartParsingTests {
  private func parse(_ text: String, boundary: String = "END_OF_PART") -> [MIMEDocument.Part]? {
    MIMEDocument.parts(boundary: boundary, data: text.utf8Data)
  }

  private let breeds = ["cat-breed": "Maine Coon", "dog-breed": "German Shepherd"]

  @Test func singlePart() {
    let parts = parse(
      "\r\n--END_OF_PART\r\ncat-breed: Maine Coon\r\ndog-breed: German Shepherd\r\n\r\n"
        + "Go Spot, go!\r\n--END_OF_PART--\r\n")
    #expect(parts == [MIMEDocument.Part(headers: breeds, body: "Go Spot, go!".utf8Data)])
  }

  @Test func singlePartWithoutHeaders() {
    let parts = parse("\r\n--END_OF_PART\r\n\r\nGo Spot, go!\r\n--END_OF_PART--\r\n")
    #expect(parts == [MIMEDocument.Part(headers: [:], body: "Go Spot, go!".utf8Data)])
  }

  @Test func singlePartEmptyBody() {
    let parts = parse(
      "\r\n--END_OF_PART\r\ncat-breed: Maine Coon\r\ndog-breed: German Shepherd\r\n\r\n"
        + "\r\n--END_OF_PART--\r\n")
    #expect(parts == [MIMEDocument.Part(headers: breeds, body: Data())])
  }

  @Test func singlePartWithoutHeadersOrBody() {
    let parts = parse("\r\n--END_OF_PART\r\n\r\n\r\n--END_OF_PART--\r\n")
    #expect(parts == [MIMEDocument.Part(headers: [:], body: Data())])
  }

  @Test func twoPartsWithPreambleAndEpilogue() {
    let parts = parse(
      "this should be ignored \r\n--END_OF_PART\r\n"
        + "cat-breed: Maine Coon\r\ndog-breed: German Shepherd\r\n\r\nGo Spot, go!"
        + "\r\n--END_OF_PART\r\nHorse-breed: Friesian\r\n\r\n"
        + "Hi ho, Silver\nAway!\r\nThat's all, folks."
        + "\r\n--END_OF_PART--\r\n this should be ignored")
    #expect(
      parts == [
        MIMEDocument.Part(headers: breeds, body: "Go Spot, go!".utf8Data),
        MIMEDocument.Part(
          headers: ["Horse-breed": "Friesian"], body: "Hi ho, Silver\nAway!\r\nThat's all, folks.".utf8Data),
      ])
  }

  @Test func invalidDocumentWithBareLineFeeds() {
    // Plain LF line breaks: one part, with no headers and an empty body, as in the original.
    let parts = parse(
      "\n--END_OF_PART\ncat-breed: Maine Coon\ndog-breed: German Shepherd\n\nGo Spot, go!\n--END_OF_PART--\n")
    #expect(parts == [MIMEDocument.Part(headers: [:], body: Data())])
  }

  @Test(arguments: [
    ("", "END_OF_PART"),
    ("plain text, no boundary at all", "END_OF_PART"),
    ("\r\n--END_OF_PART--\r\n", "END_OF_PART"),  // An empty document: one boundary.
    ("\r\n--END_OF_PART\r\nX: y\r\n\r\nbody", "END_OF_PART"),  // Truncated, no closing delimiter.
    ("END_OF_PARTEND_OF_PART", "END_OF_PART"),  // Parts shorter than two bytes are dropped.
    ("\r\n--B\r\n\r\nbody\r\n--B--\r\n", ""),  // An empty boundary never matches.
  ])
  func notMultipart(text: String, boundary: String) {
    #expect(parse(text, boundary: boundary) == nil)
  }

  @Test func truncatedAfterSecondBoundaryKeepsCompleteParts() {
    let parts = parse("\r\n--END_OF_PART\r\nA: 1\r\n\r\none\r\n--END_OF_PART\r\nB: 2\r\n\r\ntw")
    #expect(parts == [MIMEDocument.Part(headers: ["A": "1"], body: "one".utf8Data)])
  }

  @Test func boundaryInsideHeadersSplitsThere() {
    // The boundary is searched as bytes, so one inside a header ends the part early: no crash, and
    // what remains is parsed by the same rules.
    let parts = parse(
      "\r\n--END_OF_PART\r\nX-Trap: END_OF_PART\r\n\r\nbody\r\n--END_OF_PART--\r\n")
    #expect(parts == [.init(headers: [:], body: Data()), .init(headers: [:], body: "body".utf8Data)])
  }

  @Test func headerScannerFollowsTheOriginalsRules() {
    let cases: [(String, [String: String])] = [
      ("A: 1\r\nB: 2", ["A": "1", "B": "2"]),
      ("  A  :   spaced value \r\n", ["A  ": "spaced value "]),  // Name keeps trailing spaces.
      ("A:1\r\n\r\n\r\nB:2", ["A": "1", "B": "2"]),  // Blank lines are skipped.
      ("Content-ID: MyCat:fluffy", ["Content-ID": "MyCat:fluffy"]),  // Colons in values.
      ("A: 1\r\nno colon here", ["A": "1"]),  // Stops at a line without a colon.
      ("A: 1\r\n: no name\r\nB: 2", ["A": "1"]),  // Stops at an empty name.
      ("A: 1\r\nA: 2", ["A": "2"]),  // The last duplicate wins.
      ("A:\r\nB: 2", ["A": "B: 2"]),  // As NSScanner: skipping before a value crosses the line break.
      ("A: 1\u{2028}B: 2", ["A": "1", "B": "2"]),  // Unicode line separators end values too.
      ("Ünï: çödé", ["Ünï": "çödé"]),
    ]
    for (text, expected) in cases {
      #expect(HeaderScanner.headers(in: text) == expected, "\(text.debugDescription)")
    }
    // Not UTF-8: no headers.
    #expect([UInt8]([0x41, 0x3A, 0x20, 0xFF, 0xFE]).withUnsafeBytes { HeaderScanner.headers(in: $0) } == [:])
  }

  @Test func hugeHeaderBlockIsParsedWithoutBlowingUp() {
    // 4 MiB of header lines and one 1 MiB header value.
    let lines = String(repeating: "X-Filler: abcdefghijklmnopqrstuvwxyz\r\n", count: 100_000)
    let longValue = String(repeating: "v", count: 1 << 20)
    let text = "\r\n--B\r\n" + lines + "X-Long: \(longValue)\r\n\r\nbody\r\n--B--\r\n"
    let parts = parse(text, boundary: "B")
    #expect(parts?.count == 1)
    #expect(parts?.first?.headers["X-Long"]?.count == 1 << 20)
    #expect(parts?.first?.headers.count == 2)
    #expect(parts?.first?.body == "body".utf8Data)
  }

  @Test func roundTripsRandomBodies() throws {
    var generator = SeededGenerator(seed: 2024)
    for round in 0..<40 {
      let document = MIMEDocument()
      var expected: [MIMEDocument.Part] = []
      for index in 0..<Int.random(in: 0...6, using: &generator) {
        var body = generator.data(count: Int.random(in: 0...3000, using: &generator))
        if Bool.random(using: &generator) {
          // Plant the default boundary so the search has to pick another.
          body.append(contentsOf: "END_OF_PART".utf8)
        }
        let headers =
          index % 2 == 0 ? [:] : ["Content-Type": "application/octet-stream", "X-Index": "\(index)"]
        document.appendPart(headers: headers, body: body)
        expected.append(MIMEDocument.Part(headers: headers, body: body))
      }
      let (data, boundary) = try document.generateData()
      let parsed = MIMEDocument.parts(boundary: boundary, data: data)
      #expect(parsed == (expected.isEmpty ? nil : expected), "round \(round)")
    }
  }

  @Test func roundTripsWithEverySeedFallback() throws {
    // Every numbered candidate collides: the original's two-number fallback.
    let document = MIMEDocument()
    document.seedRandom(with: 1)
    let collisions = (1...9).map { "END_OF_PART_\(BoundarySelection.hex8(UInt32($0)))" }.joined(
      separator: " ")
    document.appendPart(headers: ["X": "y"], body: collisions.utf8Data)
    let (data, boundary) = try document.generateData()
    #expect(boundary == "0000000b_tedborg_0000000c")
    #expect(
      MIMEDocument.parts(boundary: boundary, data: data) == [
        .init(headers: ["X": "y"], body: collisions.utf8Data)
      ])
  }

  /// A large part parsed from a slice of a larger buffer: its body equals what was sent, is indexed
  /// from 0, and is a value of its own: changing it leaves the input and the other parts alone.
  @Test func largeBodiesAreValuesOfTheirOwn() throws {
    var generator = SeededGenerator(seed: 3)
    let large = Data((0..<(300 * 1024)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    let small = Data("a small field".utf8)
    let document = MIMEDocument()
    document.appendPart(headers: ["Content-Type": "application/octet-stream"], body: large)
    document.appendPart(headers: ["Content-Type": "text/plain"], body: small)
    let (data, boundary) = try document.generateData()
    let framed = Data("preamble".utf8) + data + Data("epilogue".utf8)
    let input = framed[8..<(8 + data.count)]
    var parts = try #require(MIMEDocument.parts(boundary: boundary, data: input))
    let again = try #require(MIMEDocument.parts(boundary: boundary, data: input))
    #expect(parts.count == 2)
    #expect(parts[0].body == large)
    #expect(parts[0].body.startIndex == 0)
    #expect(parts[0].body[0] == large[0])
    #expect(parts[1].body == small)
    parts[0].body[0] ^= 0xFF
    parts[0].body.resetBytes(in: 1..<1024)
    #expect(input == data)
    #expect(again[0].body == large)
  }
}
