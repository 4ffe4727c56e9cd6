import Foundation

/// A part as appended to a ``MIMEDocument``: its header block, encoded once, and where its body
/// comes from.
struct PartSource: Sendable {
  enum Body: Sendable {
    case data(Data)
    /// Streamed from disk; its size is read each time the document is generated.
    case file(URL)
  }

  let headers: [String: String]
  let headerBlock: Data
  let body: Body

  init(headers: [String: String], body: Body) {
    self.headers = headers
    self.headerBlock = HeaderBlock.encode(headers)
    self.body = body
  }

  /// The size of the file chunks read when a file body is searched for boundary candidates.
  static let scanChunkSize = 64 * 1024

  /// Which of `candidates` occur in this part's header block or body (checked separately, as in the
  /// original). A file body is read once, in chunks, whatever the number of candidates, and only
  /// until every candidate has been seen.
  func occurrences(of candidates: [String]) throws -> Set<String> {
    var found = Set<String>()
    for candidate in candidates where Self.contains(Array(candidate.utf8), in: headerBlock) {
      found.insert(candidate)
    }
    let remaining = candidates.filter { !found.contains($0) }
    guard !remaining.isEmpty else { return found }
    switch body {
    case .data(let data):
      for candidate in remaining where Self.contains(Array(candidate.utf8), in: data) {
        found.insert(candidate)
      }
    case .file(let url):
      found.formUnion(try Self.occurrences(of: remaining, inFileAt: url))
    }
    return found
  }

  private static func contains(_ needle: [UInt8], in data: Data) -> Bool {
    data.withUnsafeBytes { haystack in
      needle.withUnsafeBytes { ByteSearch.firstOffset(of: $0, in: haystack) != nil }
    }
  }

  private static func occurrences(of candidates: [String], inFileAt url: URL) throws -> Set<String> {
    let reader = try FilePartReader(url: url, expectedLength: FilePartReader.size(of: url))
    var searches = candidates.map { (candidate: $0, search: ChunkedByteSearch(needle: Array($0.utf8))) }
    var found = Set<String>()
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: scanChunkSize, alignment: 1)
    defer { buffer.deallocate() }
    while !reader.isFinished, !searches.isEmpty {
      let count = try reader.readChunk(into: buffer)
      let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
      for index in searches.indices {
        let candidate = searches[index].candidate
        searches[index].search.feed(chunk) { _ in
          found.insert(candidate)
          return false
        }
      }
      searches.removeAll { found.contains($0.candidate) }
    }
    return found
  }
}
