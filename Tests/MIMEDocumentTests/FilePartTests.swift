import FetcherTesting
import Foundation
import Testing

@testable import MIMEDocument

/// Parts streamed from files: content, boundary search inside files, files that change or vanish,
/// and memory use with a large file.
@Suite("File parts")
struct FilePartTests {
  @Test func filePartsMatchDataParts() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    var generator = SeededGenerator(seed: 7)
    let bodies = [generator.data(count: 100_000), Data(), generator.data(count: 1)]
    let fromFiles = MIMEDocument()
    let fromData = MIMEDocument()
    for (index, body) in bodies.enumerated() {
      fromFiles.appendPart(
        headers: ["N": "\(index)"], fileURL: try directory.file("\(index)", contents: body))
      fromData.appendPart(headers: ["N": "\(index)"], body: body)
    }
    let files = try fromFiles.generateData()
    #expect(files.data == (try fromData.generateData().data))
    #expect(
      MIMEDocument.parts(boundary: files.boundary, data: files.data)
        == bodies.enumerated().map { .init(headers: ["N": "\($0)"], body: $1) })
  }

  @Test(arguments: [
    0, 1, 5, 10, PartSource.scanChunkSize - 5, PartSource.scanChunkSize - 1, PartSource.scanChunkSize,
  ])
  func boundaryInFileIsFoundAtAnyChunkOffset(position: Int) throws {
    // The base boundary planted so that it may straddle the scan's chunk edge.
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    var contents = patternData(count: PartSource.scanChunkSize * 2)
    contents.replaceSubrange(position..<(position + 11), with: "END_OF_PART".utf8Data)
    let document = MIMEDocument()
    document.seedRandom(with: 0x10)
    document.appendPart(fileURL: try directory.file("planted", contents: contents))
    #expect(try document.resolvedBoundary() == "END_OF_PART_00000010")
  }

  @Test func numberedCandidatesInFilesAreSkipped() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let document = MIMEDocument()
    document.seedRandom(with: 1)
    document.appendPart(
      fileURL: try directory.file("a", contents: "END_OF_PART_00000001 END_OF_PART_00000002".utf8Data))
    document.appendPart(fileURL: try directory.file("b", contents: "END_OF_PART_00000003".utf8Data))
    #expect(try document.resolvedBoundary() == "END_OF_PART_00000004")
  }

  @Test func missingFileFailsGeneration() throws {
    let document = MIMEDocument()
    let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
    document.appendPart(fileURL: missing)
    #expect(throws: MIMEDocumentError.unreadableFile(missing, errno: ENOENT)) {
      try document.generateInputStream()
    }
    document.boundary = "explicit"  // No search, but the size is still read.
    #expect(throws: MIMEDocumentError.unreadableFile(missing, errno: ENOENT)) {
      try document.generateInputStream()
    }
  }

  @Test func nonFileURLAndDirectoryFailGeneration() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let web = try #require(URL(string: "https://example.com/file"))
    let document = MIMEDocument()
    document.boundary = "B"
    document.appendPart(fileURL: web)
    #expect(throws: MIMEDocumentError.unreadableFile(web, errno: EINVAL)) { try document.generateData() }
    let folder = MIMEDocument()
    folder.appendPart(fileURL: directory.url)
    #expect(throws: MIMEDocumentError.notARegularFile(directory.url)) { try folder.generateData() }
  }

  @Test func fifoNeverBlocks() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let fifo = directory.url.appendingPathComponent("fifo")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    let document = MIMEDocument()
    document.appendPart(fileURL: fifo)
    #expect(throws: MIMEDocumentError.notARegularFile(fifo)) { try document.generateInputStream() }

    // A regular file swapped for a FIFO after generation: the stream fails instead of blocking.
    let swapped = try directory.file("swapped", contents: "data".utf8Data)
    let later = MIMEDocument()
    later.appendPart(fileURL: swapped)
    let (stream, _, _) = try later.generateInputStream()
    try FileManager.default.removeItem(at: swapped)
    #expect(mkfifo(swapped.path, 0o600) == 0)
    let result = readAll(stream)
    #expect(result.failed)
    #expect(result.error as? MIMEDocumentError == .notARegularFile(swapped))
  }

  @Test func vanishedFileMakesTheStreamFail() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let file = try directory.file("gone", contents: patternData(count: 1000))
    let document = MIMEDocument()
    document.appendPart(headers: ["A": "1"], body: "before".utf8Data)
    document.appendPart(fileURL: file)
    let (stream, _, _) = try document.generateInputStream()
    try FileManager.default.removeItem(at: file)
    let result = readAll(stream, chunkSize: 16)
    #expect(result.failed)
    #expect(result.finalStatus == .error)
    #expect(result.error as? MIMEDocumentError == .unreadableFile(file, errno: ENOENT))
    #expect(stream.hasBytesAvailable)  // So URLSession's reader asks `read` and sees the error.
    #expect(result.data.starts(with: "\r\n--END_OF_PART\r\nA: 1\r\n\r\nbefore".utf8Data))
  }

  @Test func fileDeletedAfterItsReadingBeganStillStreamsCompletely() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let contents = patternData(count: 100_000)
    let file = try directory.file("unlinked", contents: contents)
    let document = MIMEDocument()
    document.boundary = "B"
    document.appendPart(fileURL: file)
    let (stream, length, _) = try document.generateInputStream()
    stream.open()
    var buffer = [UInt8](repeating: 0, count: 4096)
    var streamed = Data()
    let first = stream.read(&buffer, maxLength: buffer.count)  // Opens the file.
    streamed.append(contentsOf: buffer[..<first])
    try FileManager.default.removeItem(at: file)
    while case let count = stream.read(&buffer, maxLength: buffer.count), count > 0 {
      streamed.append(contentsOf: buffer[..<count])
    }
    #expect(stream.streamStatus == .atEnd)
    #expect(Int64(streamed.count) == length)
    #expect(MIMEDocument.parts(boundary: "B", data: streamed)?.first?.body == contents)
    stream.close()
  }

  @Test func fileShrunkBeforeReadingMakesTheStreamFail() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let file = try directory.file("short", contents: patternData(count: 1000))
    let document = MIMEDocument()
    document.appendPart(fileURL: file)
    let (stream, _, _) = try document.generateInputStream()
    try patternData(count: 10).write(to: file)
    let result = readAll(stream)
    #expect(result.failed)
    #expect(result.error as? MIMEDocumentError == .fileChanged(file, expectedLength: 1000))
  }

  @Test func fileShrunkWhileStreamingMakesTheStreamFail() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let file = try directory.file("shrinking", contents: patternData(count: 100_000))
    let document = MIMEDocument()
    document.boundary = "B"
    document.appendPart(fileURL: file)
    let (stream, length, _) = try document.generateInputStream()
    stream.open()
    var buffer = [UInt8](repeating: 0, count: 4096)
    #expect(stream.read(&buffer, maxLength: buffer.count) == 4096)  // The file is open now.
    #expect(truncate(file.path, 5000) == 0)
    var total = 4096
    var last = 0
    repeat {
      last = stream.read(&buffer, maxLength: buffer.count)
      if last > 0 { total += last }
    } while last > 0
    #expect(last == -1)
    #expect(Int64(total) < length)
    #expect(stream.streamStatus == .error)
    #expect(stream.streamError as? MIMEDocumentError == .fileChanged(file, expectedLength: 100_000))
    #expect(stream.read(&buffer, maxLength: buffer.count) == -1)  // It stays failed.
    stream.close()
  }

  @Test func fileGrownAfterGenerationSendsTheGeneratedLength() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let file = try directory.file("growing", contents: "12345".utf8Data)
    let document = MIMEDocument()
    document.boundary = "B"
    document.appendPart(fileURL: file)
    let (stream, length, _) = try document.generateInputStream()
    let handle = try FileHandle(forWritingTo: file)
    try handle.seekToEnd()
    try handle.write(contentsOf: "67890".utf8Data)
    try handle.close()
    let result = readAll(stream)
    #expect(!result.failed)
    #expect(Int64(result.data.count) == length)
    #expect(MIMEDocument.parts(boundary: "B", data: result.data)?.first?.body == "12345".utf8Data)
  }

  /// Streams a large file part end to end (boundary search included) and checks every byte against
  /// the document generated in memory. The process's resident memory while streaming is sampled and
  /// printed, not asserted: other tests run in parallel in this process, so its figures are only
  /// indicative; `Benchmarks/` (`--only mime`) measures it. The size is 64 MiB unless
  /// `MIME_LARGE_FILE_MB` says otherwise.
  @Test func largeFileStreamsEveryByte() throws {
    let megabytes = ProcessInfo.processInfo.environment["MIME_LARGE_FILE_MB"].flatMap(Int.init) ?? 64
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let file = directory.url.appendingPathComponent("large")
    #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
    let writer = try FileHandle(forWritingTo: file)
    let block = patternData(count: 1 << 20)
    for _ in 0..<megabytes { try writer.write(contentsOf: block) }
    try writer.close()

    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "large")
    document.appendFormFile(name: "file", contentType: "application/octet-stream", fileURL: file)
    let expected = try document.generateData().data
    let (stream, length, _) = try document.generateInputStream()
    #expect(length > Int64(megabytes) << 20)
    #expect(Int64(expected.count) == length)

    let before = MemoryStatus.current()
    stream.open()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var total = 0
    var mismatchAt: Int?
    var peakResident = before.residentBytes
    var reads = 0
    while true {
      let count = stream.read(&buffer, maxLength: buffer.count)
      guard count > 0 else {
        #expect(count == 0)
        break
      }
      if mismatchAt == nil, !sameBytes(expected, at: total, buffer, count: count) {
        mismatchAt = total
      }
      total += count
      reads += 1
      if reads % 64 == 0 { peakResident = max(peakResident, MemoryStatus.current().residentBytes) }
    }
    stream.close()
    peakResident = max(peakResident, MemoryStatus.current().residentBytes)
    #expect(Int64(total) == length)
    #expect(mismatchAt == nil)
    print(
      "MIMEDocument large file: \(megabytes) MiB file part streamed (\(reads) reads of 64 KiB). "
        + "VmRSS \(before.residentBytes >> 10) KiB before, peak \(peakResident >> 10) KiB "
        + "(growth \((peakResident - before.residentBytes) >> 10) KiB; printed, not asserted)")
  }
}

/// Whether `data` holds the first `count` bytes of `buffer` at `offset`.
private func sameBytes(_ data: Data, at offset: Int, _ buffer: [UInt8], count: Int) -> Bool {
  guard offset + count <= data.count else { return false }
  return data.withUnsafeBytes { stored in
    buffer.withUnsafeBytes { read in memcmp(stored.baseAddress! + offset, read.baseAddress!, count) == 0 }
  }
}

/// The process's resident memory from /proc/self/status (Linux); zero elsewhere.
struct MemoryStatus {
  var residentBytes: Int64 = 0

  static func current() -> MemoryStatus {
    var status = MemoryStatus()
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return status }
    for line in text.split(separator: "\n") {
      let fields = line.split { $0 == " " || $0 == "\t" }
      guard fields.count >= 2, let kilobytes = Int64(fields[1]) else { continue }
      if fields[0] == "VmRSS:" { status.residentBytes = kilobytes * 1024 }
    }
    return status
  }
}
