import Foundation
import Testing

@testable import HTTPLogging

/// The log's own file writes (no `fsync`), on a real folder.
@Suite("Log file writes")
struct LogFileWriterTests {
  @Test("writes new files, replaces longer ones whole, and writes empty files", arguments: [0, 1, 70_000])
  func writes(length: Int) throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("fetch_1.txt")
    try Data(repeating: 0x7A, count: 100_000).write(to: url)
    let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0) })
    try LogFileWriter.writeFile(data, to: url)
    #expect(try contents(of: url) == data)
  }

  /// Read through a `FileHandle`: `Data(contentsOf:)` leaks its 4 KiB read buffer for an empty
  /// file in this toolchain's FoundationEssentials (LeakSanitizer reports it).
  private func contents(of url: URL) throws -> Data {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    return try handle.readToEnd() ?? Data()
  }

  @Test("a file that cannot be created is an error naming it, and nothing is written")
  func failure() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("missing/fetch_1.txt")
    do {
      try LogFileWriter.writeFile(Data("x".utf8), to: url)
      Issue.record("the write should have failed")
    } catch let error as CocoaError {
      #expect(error.code == .fileWriteUnknown)
      #expect(error.userInfo[NSFilePathErrorKey] as? String == url.path)
      #expect((error.userInfo[NSUnderlyingErrorKey] as? POSIXError)?.code == .ENOENT)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing").path))
  }
}
