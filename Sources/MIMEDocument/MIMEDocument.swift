import Foundation

/// A multipart MIME document built from parts whose bodies are `Data` or files, generated as a
/// stream with bounded memory or as `Data`, and parsed back with ``parts(boundary:data:)``.
///
/// A re-creation of GTMMIMEDocument: the same boundary choice (reproducible with
/// ``seedRandom(with:)``), the same byte layout, the same parsing rules.
///
/// ```swift
/// let document = MIMEDocument()
/// document.appendPart(headers: ["Content-Type": "application/json"], body: Data(#"{"a":1}"#.utf8))
/// document.appendPart(headers: ["Content-Type": "video/mp4"], fileURL: movieURL)
/// let (stream, length, boundary) = try document.generateInputStream()
/// // Upload `stream` (`length` bytes) with
/// // `Content-Type: multipart/related; boundary=\(boundary)`.
/// ```
///
/// ## Layout
/// Each part is written as `\r\n--BOUNDARY\r\n`, its headers as `Name: value\r\n` sorted
/// case-insensitively, an empty line `\r\n`, then its body; the document ends with
/// `\r\n--BOUNDARY--\r\n`. A document without parts is exactly `\r\n--END_OF_PART--\r\n`.
///
/// ## Thread safety
/// A `MIMEDocument` is safe to use from any thread: its state is guarded by a lock. Generating
/// returns a new stream each time, and one stream is read from one thread at a time. Appending a part
/// while another thread generates is safe; the generation sees the parts as they were when it began.
public final class MIMEDocument: @unchecked Sendable {
  // @unchecked Sendable: every stored property after `lock` is read and written only with `lock`
  // held; `lock` itself is thread-safe.
  private let lock = NSLock()
  private var parts: [PartSource] = []
  private var explicitBoundary: String?
  /// The boundary chosen by the search, kept so every generation uses the same one; cleared when a
  /// part is added or the document is reseeded.
  private var chosenBoundary: String?
  private var random = BoundaryRandom(seed: 0)
  private var storedMultipartType: MultipartType

  /// Creates an empty document.
  ///
  /// - Parameter multipartType: the media type ``contentType(boundary:)`` names;
  ///   `multipart/form-data` unless given.
  ///
  /// ```swift
  /// let upload = MIMEDocument(multipartType: .related)
  /// ```
  public init(multipartType: MultipartType = .formData) {
    self.storedMultipartType = multipartType
  }

  /// The number of parts appended so far.
  public var partCount: Int {
    lock.withLock { parts.count }
  }

  /// The media type that ``contentType(boundary:)`` and ``contentTypeHeaderValue`` name.
  ///
  /// ```swift
  /// document.multipartType = .related
  /// ```
  public var multipartType: MultipartType {
    get { lock.withLock { storedMultipartType } }
    set { lock.withLock { storedMultipartType = newValue } }
  }

  /// An explicit boundary, used as given (it is not checked against the parts: choose one that
  /// occurs in none of them); `nil`, the default, lets the document choose one that occurs in no part.
  ///
  /// Unlike the original, an explicit boundary stays in force when parts are added later.
  /// Generation throws ``MIMEDocumentError/invalidBoundary(_:)`` for an empty boundary or one that
  /// contains CR or LF.
  ///
  /// ```swift
  /// document.boundary = "Look at that magic bird!"
  /// ```
  public var boundary: String? {
    get { lock.withLock { explicitBoundary } }
    set { lock.withLock { explicitBoundary = newValue } }
  }

  /// Appends a part whose body is in memory.
  ///
  /// Header names must not contain `:`, CR or LF and values must not contain CR or LF; otherwise
  /// generation throws ``MIMEDocumentError/invalidHeader(name:)``.
  ///
  /// ```swift
  /// document.appendPart(headers: ["Content-Type": "text/plain"], body: Data("Hi mom".utf8))
  /// ```
  public func appendPart(headers: [String: String] = [:], body: Data) {
    append(PartSource(headers: headers, body: .data(body)))
  }

  /// Appends a part whose body is the file at `fileURL`, streamed from disk when the document is
  /// read and never loaded whole.
  ///
  /// The file's size is read each time the document is generated, and the generated stream sends
  /// exactly that many bytes; if the file disappears or becomes shorter before the stream has read
  /// it, the stream fails (see ``generateInputStream()``).
  ///
  /// ```swift
  /// document.appendPart(headers: ["Content-Type": "image/png"], fileURL: pngURL)
  /// ```
  public func appendPart(headers: [String: String] = [:], fileURL: URL) {
    append(PartSource(headers: headers, body: .file(fileURL)))
  }

  private func append(_ part: PartSource) {
    lock.withLock {
      parts.append(part)
      chosenBoundary = nil
    }
  }

  /// Makes the boundary choice reproducible, like the original's `seedRandomWith:`: the numbers
  /// appended to `END_OF_PART` when it collides become `seed`, `seed + 1`, … instead of random ones.
  /// A seed of 0 returns to random numbers.
  ///
  /// ```swift
  /// document.appendPart(body: Data("Hi mom END_OF_PART".utf8))
  /// document.seedRandom(with: 1)
  /// try document.resolvedBoundary()  // "END_OF_PART_00000001"
  /// ```
  public func seedRandom(with seed: UInt32) {
    lock.withLock {
      random = BoundaryRandom(seed: seed)
      chosenBoundary = nil
    }
  }

  /// The boundary generation will use: the explicit ``boundary`` if set; otherwise `END_OF_PART`
  /// if it occurs in no part, else `END_OF_PART_%08x` with up to nine numbers from the seeded or
  /// random sequence, else `%08x_tedborg_%08x` — the original's choice.
  ///
  /// The search reads file parts from disk in 64 KiB chunks the first time it runs: once, and a
  /// second time only when a part contains `END_OF_PART`. Other calls on the document wait while it
  /// runs. The result is kept until a part is added or the document is reseeded, so every generation
  /// uses the same boundary. Set an explicit ``boundary`` to skip the search over large files.
  ///
  /// - Throws: ``MIMEDocumentError`` when a file part cannot be read, or the explicit boundary is
  ///   invalid.
  ///
  /// ```swift
  /// let boundary = try document.resolvedBoundary()
  /// ```
  public func resolvedBoundary() throws -> String {
    try lock.withLock { try resolveBoundaryLocked() }
  }

  private func resolveBoundaryLocked() throws -> String {
    if let explicitBoundary {
      guard !explicitBoundary.isEmpty,
        !explicitBoundary.utf8.contains(where: HeaderBlock.isLineBreak)
      else { throw MIMEDocumentError.invalidBoundary(explicitBoundary) }
      return explicitBoundary
    }
    if let chosenBoundary { return chosenBoundary }
    let parts = self.parts
    var random = self.random
    let chosen = try BoundarySelection.choose(random: &random) { candidates in
      var found = Set<String>()
      for part in parts where found.count < candidates.count {
        found.formUnion(try part.occurrences(of: candidates.filter { !found.contains($0) }))
      }
      return found
    }
    self.random = random
    chosenBoundary = chosen
    return chosen
  }

  /// Generates the document as a stream that reads file parts from disk in chunks as it is read, so
  /// memory use does not depend on the files' sizes.
  ///
  /// Every call returns a new stream over the same bytes and the same boundary, so a request body
  /// provider can call it again for each attempt. `length` is exact (file sizes are read now). If a
  /// file part disappears or becomes shorter while the stream reads it, `read` returns -1,
  /// `streamStatus` becomes `.error` and `streamError` is a ``MIMEDocumentError``; the stream never
  /// blocks.
  ///
  /// - Throws: ``MIMEDocumentError`` for an unreadable file part, an invalid header or an invalid
  ///   explicit boundary.
  ///
  /// ```swift
  /// let (stream, length, boundary) = try document.generateInputStream()
  /// var request = URLRequest(url: uploadURL)
  /// request.httpMethod = "POST"
  /// request.httpBodyStream = stream
  /// request.setValue(document.contentType(boundary: boundary), forHTTPHeaderField: "Content-Type")
  /// ```
  public func generateInputStream() throws -> (stream: InputStream, length: Int64, boundary: String) {
    let (segments, length, boundary) = try makeSegments()
    return (MIMEInputStream(segments: segments), length, boundary)
  }

  /// Generates the whole document in memory, file parts included. Prefer ``generateInputStream()``
  /// for large files.
  ///
  /// - Throws: as ``generateInputStream()``, and when a file part cannot be read completely.
  ///
  /// ```swift
  /// let (data, boundary) = try document.generateData()
  /// let parts = MIMEDocument.parts(boundary: boundary, data: data)
  /// ```
  public func generateData() throws -> (data: Data, boundary: String) {
    let (segments, length, boundary) = try makeSegments()
    guard let count = Int(exactly: length) else {
      throw MIMEDocumentError.tooLargeForData(length: length)
    }
    var data = Data(count: count)
    let stream = MIMEInputStream(segments: segments)
    stream.open()
    defer { stream.close() }
    try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
      let bytes = buffer.bindMemory(to: UInt8.self)
      var filled = 0
      while filled < bytes.count {
        let read = stream.read(bytes.baseAddress! + filled, maxLength: bytes.count - filled)
        guard read > 0 else {
          throw stream.streamError ?? CocoaError(.fileReadUnknown)
        }
        filled += read
      }
    }
    return (data, boundary)
  }

  /// The document's pieces in order, its total length and its boundary.
  private func makeSegments() throws -> (segments: [DocumentSegment], length: Int64, boundary: String) {
    let (parts, boundary) = try lock.withLock { () throws -> ([PartSource], String) in
      for part in self.parts { try HeaderBlock.validate(part.headers) }
      return (self.parts, try resolveBoundaryLocked())
    }
    let delimiter = Data("\r\n--\(boundary)\r\n".utf8)
    var segments: [DocumentSegment] = []
    segments.reserveCapacity(parts.count * 2 + 1)
    for part in parts {
      segments.append(.data(delimiter + part.headerBlock))
      switch part.body {
      case .data(let body):
        segments.append(.data(body))
      case .file(let url):
        segments.append(.file(url, length: try FilePartReader.size(of: url)))
      }
    }
    segments.append(.data(Data("\r\n--\(boundary)--\r\n".utf8)))
    let length = segments.reduce(Int64(0)) { $0 + $1.length }
    return (segments, length, boundary)
  }
}
