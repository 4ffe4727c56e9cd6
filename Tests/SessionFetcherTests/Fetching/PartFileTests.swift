import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

@Suite("Part files")
struct PartFileTests {
  /// Chunks of many sizes: the file ends with every byte in order, whether it is committed or
  /// closed for a resume.
  @Test(
    arguments: [
      [1],
      [16_384, 16_384, 16_384],
      [(1 << 20)],
      [(1 << 20) - 1, 2, 100_000],
      Array(repeating: 16_384, count: 200),
      [3 * (1 << 20) + 7],
    ])
  func everyByteReachesTheFile(chunks: [Int]) throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let expected = TestServer.patternBytes(count: chunks.reduce(0, +), offset: 5)

    let committed = PartFile(creatingFor: folder.appendingPathComponent("a.bin"))
    let kept = PartFile(creatingFor: folder.appendingPathComponent("b.bin"))
    try committed.open()
    try kept.open()
    var offset = 0
    for size in chunks {
      let chunk = expected.subdata(in: offset..<(offset + size))
      try committed.write(chunk)
      try kept.write(chunk)
      offset += size
    }
    #expect(committed.length == Int64(expected.count))
    try committed.commit()
    #expect(try Data(contentsOf: folder.appendingPathComponent("a.bin")) == expected)

    kept.close()
    #expect(kept.length == Int64(expected.count))
    #expect(try Data(contentsOf: kept.url) == expected)
  }

  @Test func truncateRestartsTheBody() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("c.bin")
    let part = PartFile(creatingFor: destination)
    try part.open()
    try part.write(TestServer.patternBytes(count: (1 << 20) + 10))
    try part.write(Data("tail".utf8))
    try part.truncate()
    #expect(part.length == 0)
    try part.write(Data("fresh".utf8))
    try part.commit()
    #expect(try Data(contentsOf: destination) == Data("fresh".utf8))
  }

  @Test func resumingAppendsAfterTheKeptBytes() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("d.bin")
    let body = TestServer.patternBytes(count: 2 * (1 << 20) + 99)
    let first = PartFile(creatingFor: destination)
    try first.open()
    try first.write(body.prefix((1 << 20) + 50))
    first.close()
    let second = PartFile(continuing: first.url, destination: destination, length: first.length)
    try second.open()
    try second.write(body.dropFirst((1 << 20) + 50))
    try second.commit()
    #expect(try Data(contentsOf: destination) == body)
  }
}
