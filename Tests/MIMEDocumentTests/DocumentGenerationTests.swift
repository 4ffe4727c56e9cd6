import Foundation
import Testing

@testable import MIMEDocument

/// The original's GTMMIMEDocumentTest joining tests, plus the contract around them.
@Suite("Generating documents")
struct DocumentGenerationTests {
  /// Generates both ways and checks that the stream and the data agree with `expected`.
  private func expectDocument(
    _ document: MIMEDocument, equals expected: (String) -> String, boundary expectedBoundary: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let (data, dataBoundary) = try document.generateData()
    let (stream, length, streamBoundary) = try document.generateInputStream()
    #expect(dataBoundary == streamBoundary, sourceLocation: sourceLocation)
    if let expectedBoundary {
      #expect(streamBoundary == expectedBoundary, sourceLocation: sourceLocation)
    }
    let expectedData = expected(streamBoundary).utf8Data
    #expect(data == expectedData, sourceLocation: sourceLocation)
    #expect(length == Int64(expectedData.count), sourceLocation: sourceLocation)
    let read = readAll(stream)
    #expect(!read.failed, sourceLocation: sourceLocation)
    #expect(read.data == expectedData, sourceLocation: sourceLocation)
    #expect(read.finalStatus == .atEnd, sourceLocation: sourceLocation)
  }

  @Test func emptyDocument() throws {
    try expectDocument(MIMEDocument(), equals: { _ in "\r\n--END_OF_PART--\r\n" }, boundary: "END_OF_PART")
  }

  @Test func singlePartDocument() throws {
    let document = MIMEDocument()
    document.appendPart(headers: ["hfoo": "bar", "hfaz": "baz"], body: "Hi mom".utf8Data)
    try expectDocument(
      document,
      equals: { b in "\r\n--\(b)\r\nhfaz: baz\r\nhfoo: bar\r\n\r\nHi mom\r\n--\(b)--\r\n" },
      boundary: "END_OF_PART")
  }

  @Test func multiPartDocument() throws {
    let document = MIMEDocument()
    document.appendPart(headers: ["hfoo": "bar", "hfaz": "baz"], body: "Hi mom".utf8Data)
    document.appendPart(headers: [:], body: "Hi dad".utf8Data)
    document.appendPart(
      headers: [
        "Content-Type": "text/html", "Content-Disposition": "angry",
        "Content-ID": "MyCat:fluffy",  // A value may contain a colon.
      ],
      body: "Hi brother".utf8Data)
    try expectDocument(
      document,
      equals: { b in
        "\r\n--\(b)\r\nhfaz: baz\r\nhfoo: bar\r\n\r\nHi mom"
          + "\r\n--\(b)\r\n\r\nHi dad"
          + "\r\n--\(b)\r\nContent-Disposition: angry\r\nContent-ID: MyCat:fluffy\r\n"
          + "Content-Type: text/html\r\n\r\nHi brother"
          + "\r\n--\(b)--\r\n"
      }, boundary: "END_OF_PART")
    #expect(document.partCount == 3)
  }

  @Test func explicitBoundary() throws {
    let document = MIMEDocument()
    document.appendPart(headers: ["hfoo": "bar", "hfaz": "baz"], body: "Hi mom".utf8Data)
    document.appendPart(headers: [:], body: "Hi dad".utf8Data)
    let birdy = "Look at that magic bird!"
    document.boundary = birdy
    try expectDocument(
      document,
      equals: { b in
        "\r\n--\(b)\r\nhfaz: baz\r\nhfoo: bar\r\n\r\nHi mom\r\n--\(b)\r\n\r\nHi dad\r\n--\(b)--\r\n"
      }, boundary: birdy)
    #expect(document.boundary == birdy)
    // Unlike the original, an explicit boundary survives appending.
    document.appendPart(body: Data())
    #expect(try document.resolvedBoundary() == birdy)
    document.boundary = nil
    #expect(try document.resolvedBoundary() == "END_OF_PART")
  }

  @Test func boundaryConflictWithSeed() throws {
    let document = MIMEDocument()
    // "END_OF_PART_6b8b4567" is the original's first guess on Apple's random(); it must not matter.
    document.appendPart(headers: ["hfoo": "bar", "hfaz": "baz"], body: "Hi mom END_OF_PART".utf8Data)
    document.appendPart(headers: [:], body: "Hi dad".utf8Data)
    document.appendPart(
      headers: ["Content-Type": "text/html", "Content-Disposition": "angry"],
      body: "Hi brother END_OF_PART_6b8b4567".utf8Data)
    let template = { (b: String) in
      "\r\n--\(b)\r\nhfaz: baz\r\nhfoo: bar\r\n\r\nHi mom END_OF_PART"
        + "\r\n--\(b)\r\n\r\nHi dad"
        + "\r\n--\(b)\r\nContent-Disposition: angry\r\nContent-Type: text/html\r\n\r\n"
        + "Hi brother END_OF_PART_6b8b4567"
        + "\r\n--\(b)--\r\n"
    }
    // Unseeded: some random numbered boundary that occurs in no part.
    let (_, randomBoundary) = try document.generateData()
    #expect(randomBoundary.hasPrefix("END_OF_PART_") && randomBoundary.count == 20)
    try expectDocument(document, equals: template, boundary: randomBoundary)

    document.seedRandom(with: 1)
    #expect(try document.resolvedBoundary() == "END_OF_PART_00000001")
    try expectDocument(document, equals: template, boundary: "END_OF_PART_00000001")
  }

  @Test func sameBoundaryOnEveryCall() throws {
    let document = MIMEDocument()
    document.appendPart(body: "END_OF_PART".utf8Data)
    let boundaries = try (0..<5).map { _ in try document.generateInputStream().boundary }
    #expect(Set(boundaries).count == 1)
    #expect(try document.generateData().boundary == boundaries[0])
  }

  @Test func seedSequenceContinuesAfterAppend() throws {
    let document = MIMEDocument()
    document.seedRandom(with: 5)
    document.appendPart(body: "END_OF_PART END_OF_PART_00000005".utf8Data)
    #expect(try document.resolvedBoundary() == "END_OF_PART_00000006")
    // Appending forgets the chosen boundary; the seeded sequence goes on from 7, as in the original.
    document.appendPart(body: "x".utf8Data)
    #expect(try document.resolvedBoundary() == "END_OF_PART_00000007")
  }

  @Test func boundaryFoundInHeadersCollides() throws {
    let document = MIMEDocument()
    document.seedRandom(with: 1)
    document.appendPart(headers: ["X-Note": "END_OF_PART"], body: Data())
    #expect(try document.resolvedBoundary() == "END_OF_PART_00000001")
  }

  @Test func headersSortCaseInsensitively() throws {
    let document = MIMEDocument()
    document.appendPart(headers: ["b": "2", "A": "1", "C": "3", "a_b": "4", "aab": "5"], body: Data())
    let text = String(decoding: try document.generateData().data, as: UTF8.self)
    #expect(
      text == "\r\n--END_OF_PART\r\nA: 1\r\na_b: 4\r\naab: 5\r\nb: 2\r\nC: 3\r\n\r\n\r\n--END_OF_PART--\r\n")
  }

  @Test(arguments: [
    (["Bad:Name": "v"], "Bad:Name"),
    (["Bad\r\nName": "v"], "Bad\r\nName"),
    (["X-Injected": "v\r\nEvil: yes"], "X-Injected"),
    (["X-Bare-LF": "v\nw"], "X-Bare-LF"),
  ])
  func invalidHeadersFailGeneration(headers: [String: String], name: String) {
    let document = MIMEDocument()
    document.appendPart(headers: headers, body: Data())
    #expect(throws: MIMEDocumentError.invalidHeader(name: name)) { try document.generateData() }
    #expect(throws: MIMEDocumentError.invalidHeader(name: name)) { try document.generateInputStream() }
  }

  @Test(arguments: ["", "a\r\nb", "line\n"])
  func invalidExplicitBoundariesFailGeneration(boundary: String) {
    let document = MIMEDocument()
    document.boundary = boundary
    #expect(throws: MIMEDocumentError.invalidBoundary(boundary)) { try document.generateData() }
  }

  @Test func concurrentUseIsSafe() async throws {
    let document = MIMEDocument()
    document.seedRandom(with: 1)
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<8 {
        group.addTask {
          document.appendPart(headers: ["N": "\(index)"], body: "END_OF_PART \(index)".utf8Data)
          _ = try? document.generateData()
        }
      }
    }
    let (data, boundary) = try document.generateData()
    #expect(MIMEDocument.parts(boundary: boundary, data: data)?.count == 8)
  }
}
