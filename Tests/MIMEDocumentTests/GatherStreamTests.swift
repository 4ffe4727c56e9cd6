import FetcherTesting
import Foundation
import Testing

@testable import MIMEDocument

/// The original's GTMGatherInputStreamTest cases and the stream's `InputStream` contract.
@Suite("Gathering stream")
struct GatherStreamTests {
  private let manyBuffers: [DocumentSegment] = ["h", "ello", "", " how are you?"].map { .data($0.utf8Data) }

  @Test func emptyStream() {
    let result = readAll(MIMEInputStream(segments: []))
    #expect(result.data.isEmpty && !result.failed)
    #expect(result.finalStatus == .atEnd)
  }

  @Test func streamWithEmptyParts() {
    let result = readAll(MIMEInputStream(segments: ["", "hello", ""].map { .data($0.utf8Data) }))
    #expect(result.data == "hello".utf8Data)
  }

  @Test func streamWithManyBuffersInOneRead() {
    let result = readAll(MIMEInputStream(segments: manyBuffers))
    #expect(result.data == "hello how are you?".utf8Data)
    #expect(result.readCallCount == 2)  // One read gathers every buffer; the next reports the end.
  }

  @Test(arguments: [1, 7, 4096])
  func streamWithManySmallReads(chunkSize: Int) throws {
    let result = readAll(MIMEInputStream(segments: manyBuffers), chunkSize: chunkSize)
    #expect(result.data == "hello how are you?".utf8Data)

    // A whole document with Data and file parts, read the same way.
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    var generator = SeededGenerator(seed: UInt64(chunkSize))
    let document = MIMEDocument()
    document.appendPart(headers: ["A": "1"], body: generator.data(count: 5000))
    document.appendPart(
      headers: ["B": "2"], fileURL: try directory.file("f", contents: generator.data(count: 9000)))
    document.appendPart(headers: [:], body: Data())
    document.appendPart(headers: ["C": "3"], fileURL: try directory.file("empty", contents: Data()))
    let (stream, length, _) = try document.generateInputStream()
    let streamed = readAll(stream, chunkSize: chunkSize)
    #expect(!streamed.failed)
    #expect(Int64(streamed.data.count) == length)
    #expect(streamed.data == (try document.generateData().data))
  }

  @Test func statusFollowsTheInputStreamContract() {
    let stream = MIMEInputStream(segments: [.data("abc".utf8Data)])
    var buffer = [UInt8](repeating: 0, count: 8)
    #expect(stream.streamStatus == .notOpen)
    #expect(!stream.hasBytesAvailable)
    #expect(stream.read(&buffer, maxLength: 8) == -1)  // Not open yet.
    stream.open()
    #expect(stream.streamStatus == .open)
    #expect(stream.hasBytesAvailable)
    #expect(stream.read(&buffer, maxLength: 0) == 0)
    #expect(stream.read(&buffer, maxLength: 2) == 2)
    #expect(stream.read(&buffer, maxLength: 8) == 1)
    #expect(stream.streamStatus == .atEnd)
    #expect(!stream.hasBytesAvailable)
    #expect(stream.read(&buffer, maxLength: 8) == 0)
    stream.close()
    #expect(stream.streamStatus == .closed)
    #expect(stream.streamError == nil)
    var pointer: UnsafeMutablePointer<UInt8>?
    var length = 0
    #expect(!stream.getBuffer(&pointer, length: &length))
  }

  @Test func eachGenerationIsAFreshStream() throws {
    let document = MIMEDocument()
    document.appendPart(body: "once".utf8Data)
    let first = readAll(try document.generateInputStream().stream).data
    let second = readAll(try document.generateInputStream().stream).data
    #expect(first == second && !first.isEmpty)
  }
}
