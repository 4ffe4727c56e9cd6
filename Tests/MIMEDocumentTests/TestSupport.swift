import FetcherTesting
import Foundation
import Testing

@testable import MIMEDocument

/// The original tests' `DataForTestWithLength`: "0123456789" repeated.
func patternData(count: Int) -> Data {
  Data((0..<count).map { UInt8(ascii: "0") + UInt8($0 % 10) })
}

/// What a stream produced when read to its end, and how it ended.
struct StreamReadResult {
  var data = Data()
  var readCallCount = 0
  var failed = false
  var error: Error?
  var finalStatus: Stream.Status = .notOpen
}

/// Opens `stream`, reads it with reads of at most `chunkSize` bytes until it reports the end or an
/// error, then closes it.
func readAll(_ stream: InputStream, chunkSize: Int = 9999) -> StreamReadResult {
  var result = StreamReadResult()
  var buffer = [UInt8](repeating: 0, count: chunkSize)
  stream.open()
  while true {
    let count = stream.read(&buffer, maxLength: chunkSize)
    result.readCallCount += 1
    if count < 0 {
      result.failed = true
      result.error = stream.streamError
      break
    }
    if count == 0 { break }
    result.data.append(contentsOf: buffer[..<count])
  }
  result.finalStatus = stream.streamStatus
  stream.close()
  return result
}

/// A fresh directory under the system's temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("MIMEDocumentTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func file(_ name: String, contents: Data) throws -> URL {
    let fileURL = url.appendingPathComponent(name)
    try contents.write(to: fileURL)
    return fileURL
  }

  func cleanUp() {
    try? FileManager.default.removeItem(at: url)
  }
}

extension String {
  var utf8Data: Data { Data(utf8) }
}
