import FetcherTesting
import Foundation
import Testing

@testable import MIMEDocument

/// `parts(boundary:data:sharingInput:)`: bodies that are slices of the input, equal to the copies,
/// pointing into the input's storage, and still values of their own.
@Suite("Parsing documents with bodies that share the input")
struct SharedPartParsingTests {
  /// The documents of the parsing suite (well-formed, malformed and not multipart), by name.
  static let documents: [(name: String, text: String, boundary: String)] = [
    (
      "single part",
      "\r\n--END_OF_PART\r\ncat-breed: Maine Coon\r\ndog-breed: German Shepherd\r\n\r\n"
        + "Go Spot, go!\r\n--END_OF_PART--\r\n", "END_OF_PART"
    ),
    ("without headers", "\r\n--END_OF_PART\r\n\r\nGo Spot, go!\r\n--END_OF_PART--\r\n", "END_OF_PART"),
    (
      "empty body",
      "\r\n--END_OF_PART\r\ncat-breed: Maine Coon\r\ndog-breed: German Shepherd\r\n\r\n"
        + "\r\n--END_OF_PART--\r\n", "END_OF_PART"
    ),
    ("no headers, no body", "\r\n--END_OF_PART\r\n\r\n\r\n--END_OF_PART--\r\n", "END_OF_PART"),
    (
      "preamble and epilogue",
      "this should be ignored \r\n--END_OF_PART\r\n"
        + "cat-breed: Maine Coon\r\ndog-breed: German Shepherd\r\n\r\nGo Spot, go!"
        + "\r\n--END_OF_PART\r\nHorse-breed: Friesian\r\n\r\n"
        + "Hi ho, Silver\nAway!\r\nThat's all, folks."
        + "\r\n--END_OF_PART--\r\n this should be ignored", "END_OF_PART"
    ),
    (
      "bare line feeds",
      "\n--END_OF_PART\ncat-breed: Maine Coon\ndog-breed: German Shepherd\n\nGo Spot, go!\n--END_OF_PART--\n",
      "END_OF_PART"
    ),
    ("empty", "", "END_OF_PART"),
    ("no boundary", "plain text, no boundary at all", "END_OF_PART"),
    ("one boundary", "\r\n--END_OF_PART--\r\n", "END_OF_PART"),
    ("no closing delimiter", "\r\n--END_OF_PART\r\nX: y\r\n\r\nbody", "END_OF_PART"),
    ("parts too short", "END_OF_PARTEND_OF_PART", "END_OF_PART"),
    ("empty boundary", "\r\n--B\r\n\r\nbody\r\n--B--\r\n", ""),
    (
      "truncated after the second boundary",
      "\r\n--END_OF_PART\r\nA: 1\r\n\r\none\r\n--END_OF_PART\r\nB: 2\r\n\r\ntw", "END_OF_PART"
    ),
    (
      "boundary inside headers",
      "\r\n--END_OF_PART\r\nX-Trap: END_OF_PART\r\n\r\nbody\r\n--END_OF_PART--\r\n",
      "END_OF_PART"
    ),
    (
      "large bodies",
      "\r\n--B\r\nA: 1\r\n\r\n" + String(repeating: "x", count: 100_000) + "\r\n--B\r\n\r\n"
        + String(repeating: "y", count: 70_000) + "\r\n--B--\r\n", "B"
    ),
  ]

  /// Parses `data` both ways and checks that the shared parts equal the copies, byte for byte, and
  /// that each shared body is the slice of `data` at its own indices.
  private func expectSharedEqualsCopied(
    _ data: Data, boundary: String, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let copied = MIMEDocument.parts(boundary: boundary, data: data)
    let notShared = MIMEDocument.parts(boundary: boundary, data: data, sharingInput: false)
    let shared = MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true)
    #expect(notShared == copied, comment, sourceLocation: sourceLocation)
    #expect(
      notShared?.allSatisfy { $0.body.startIndex == 0 } != false, comment, sourceLocation: sourceLocation)
    #expect(shared?.map(\.headers) == copied?.map(\.headers), comment, sourceLocation: sourceLocation)
    #expect(
      shared?.map { Data($0.body) } == copied?.map { Data($0.body) }, comment, sourceLocation: sourceLocation)
    for part in shared ?? [] where !part.body.isEmpty {
      let inInput = data.startIndex <= part.body.startIndex && part.body.endIndex <= data.endIndex
      #expect(
        inInput, "\(comment): a shared body's indices are not the input's", sourceLocation: sourceLocation)
      if inInput {
        #expect(Data(data[part.body.indices]) == Data(part.body), comment, sourceLocation: sourceLocation)
      }
    }
  }

  @Test(arguments: documents.indices)
  func sharedPartsEqualTheCopies(index: Int) {
    let (name, text, boundary) = Self.documents[index]
    let data = Data(text.utf8)
    expectSharedEqualsCopied(data, boundary: boundary, "\(name)")
    // The same document inside a larger buffer: the input's indices start past 0.
    let framed = Data("preamble".utf8) + data + Data("epilogue".utf8)
    expectSharedEqualsCopied(framed[8..<(8 + data.count)], boundary: boundary, "\(name), as a slice")
  }

  @Test func sharedPartsOfGeneratedDocumentsEqualTheCopies() throws {
    var generator = SeededGenerator(seed: 31)
    for round in 0..<40 {
      let document = MIMEDocument()
      for index in 0..<Int.random(in: 0...6, using: &generator) {
        let body = generator.data(count: Int.random(in: 0...20_000, using: &generator))
        document.appendPart(headers: index % 2 == 0 ? [:] : ["X-Index": "\(index)"], body: body)
      }
      let (data, boundary) = try document.generateData()
      expectSharedEqualsCopied(data, boundary: boundary, "round \(round)")
      let framed = Data([0, 1, 2]) + data
      expectSharedEqualsCopied(framed[3...], boundary: boundary, "round \(round), as a slice")
    }
  }

  /// Two large parts of random bytes and the generated document holding them.
  private func largeDocument() throws -> (first: Data, second: Data, data: Data, boundary: String) {
    var generator = SeededGenerator(seed: 7)
    let first = generator.data(count: 300 * 1024)
    let second = generator.data(count: 100 * 1024)
    let document = MIMEDocument()
    document.appendPart(headers: ["Content-Type": "application/octet-stream"], body: first)
    document.appendPart(headers: ["Content-Type": "text/plain"], body: second)
    let (data, boundary) = try document.generateData()
    return (first, second, data, boundary)
  }

  @Test func changingASharedBodyLeavesTheInputAndTheOtherPartsAlone() throws {
    let (first, second, data, boundary) = try largeDocument()
    let original = Data(data)
    var parts = try #require(MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true))
    let again = try #require(MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true))
    try #require(parts.count == 2)

    parts[0].body[parts[0].body.startIndex] ^= 0xFF
    parts[0].body.resetBytes(in: (parts[0].body.startIndex + 1)..<(parts[0].body.startIndex + 1024))
    parts[1].body.append(contentsOf: [1, 2, 3])
    parts[1].body[parts[1].body.startIndex] ^= 0xFF

    #expect(data == original)
    #expect(again[0].body == first)
    #expect(again[1].body == second)
    #expect(parts[0].body.count == first.count)
    #expect(parts[0].body.first == first[0] ^ 0xFF)
    #expect(parts[0].body.dropFirst().prefix(1023).allSatisfy { $0 == 0 })
    #expect(parts[0].body.dropFirst(1024) == first.dropFirst(1024))
    #expect(parts[1].body.count == second.count + 3)
  }

  /// A file mapped read-only: changing a shared body while the input is held copies it, where
  /// writing through to the mapping would crash.
  @Test func changingASharedBodyOfAMappedFileCopiesIt() throws {
    let (first, second, document, boundary) = try largeDocument()
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let url = try directory.file("document.bin", contents: document)
    let mapped = try Data(contentsOf: url, options: .alwaysMapped)
    var parts = try #require(MIMEDocument.parts(boundary: boundary, data: mapped, sharingInput: true))
    try #require(parts.count == 2)
    parts[0].body[parts[0].body.startIndex] ^= 0xFF
    parts[1].body.resetBytes(in: parts[1].body.indices)
    #expect(parts[0].body.first == first[0] ^ 0xFF)
    #expect(parts[1].body.allSatisfy { $0 == 0 })
    #expect(mapped == document)
    #expect(try Data(contentsOf: url) == document)
    #expect(MIMEDocument.parts(boundary: boundary, data: mapped)?.map(\.body) == [first, second])
  }

  @Test func sharedBodiesPointIntoTheInputsStorage() throws {
    let (first, second, document, boundary) = try largeDocument()
    let framed = Data(repeating: 0xAB, count: 4096) + document
    for data in [document, framed[4096...]] {
      let parts = try #require(MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true))
      try #require(parts.count == 2)
      #expect(parts[0].body == first)
      #expect(parts[1].body == second)
      let inputBase = try #require(data.withUnsafeBytes { $0.baseAddress })
      for part in parts {
        let offset = part.body.startIndex - data.startIndex
        let bodyBase = try #require(part.body.withUnsafeBytes { $0.baseAddress })
        #expect(bodyBase == inputBase + offset, "a shared body was copied")
      }
      // The copies are not in the input.
      let copies = try #require(MIMEDocument.parts(boundary: boundary, data: data, sharingInput: false))
      let inputRange = UInt(bitPattern: inputBase)..<(UInt(bitPattern: inputBase) + UInt(data.count))
      for part in copies {
        let bodyBase = try #require(part.body.withUnsafeBytes { $0.baseAddress })
        #expect(!inputRange.contains(UInt(bitPattern: bodyBase)))
      }
    }
  }

  @Test func sharedPartsOutliveTheirInput() throws {
    let expected = try largeDocument()
    // The input is made and dropped inside the closure: only the parts hold its storage afterwards.
    var parts = try { () throws -> [MIMEDocument.Part] in
      let (_, _, data, boundary) = try largeDocument()
      return try #require(MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true))
    }()
    try #require(parts.count == 2)
    #expect(parts[0].headers == ["Content-Type": "application/octet-stream"])
    #expect(parts[0].body == expected.first)
    #expect(parts[1].body == expected.second)
    #expect(Data(parts[0].body).startIndex == 0)
    // The two bodies still share one storage, and changing one copies it first.
    let bases = try parts.map { part in try #require(part.body.withUnsafeBytes { $0.baseAddress }) }
    #expect(bases[1] - bases[0] == parts[1].body.startIndex - parts[0].body.startIndex)
    parts[0].body.resetBytes(in: parts[0].body.startIndex..<parts[0].body.endIndex)
    #expect(parts[0].body.allSatisfy { $0 == 0 })
    #expect(parts[1].body == expected.second)
  }
}
