import Foundation

/// Why a ``MIMEDocument`` could not be generated or streamed, or data could not be parsed as a
/// multipart body (``MIMEDocument/parse(boundary:data:sharingInput:)``).
///
/// Generation (``MIMEDocument/generateInputStream()``, ``MIMEDocument/generateData()``) throws these;
/// a stream that fails while it is read reports one as its `streamError` and returns -1 from `read`.
///
/// ```swift
/// do {
///   let (stream, length, boundary) = try document.generateInputStream()
/// } catch MIMEDocumentError.unreadableFile(let url, let code) {
///   print("cannot read \(url.path): errno \(code)")
/// }
/// ```
public enum MIMEDocumentError: Error, Sendable, Hashable {
  /// A file part's file could not be opened or examined (it does not exist, is not readable, or the
  /// URL is not a file URL); `errno` is the POSIX error code.
  case unreadableFile(URL, errno: Int32)
  /// A file part's URL names something other than a regular file (a directory, a FIFO, a device).
  case notARegularFile(URL)
  /// A file part's file became shorter than its size when the document was generated (or it was
  /// replaced by a shorter one) while the stream was reading it.
  case fileChanged(URL, expectedLength: Int64)
  /// A header name contains a colon, CR or LF, or a header value contains CR or LF: writing it would
  /// break the document's framing.
  case invalidHeader(name: String)
  /// The explicit boundary is empty or contains CR or LF.
  case invalidBoundary(String)
  /// ``MIMEDocument/generateData()`` was asked for a document larger than memory can address; use
  /// ``MIMEDocument/generateInputStream()``.
  case tooLargeForData(length: Int64)
  /// Parsing: the data has no delimiter line of the boundary.
  case noDelimiter
  /// Parsing: the data ends before the close delimiter (`--boundary--`): it was cut short.
  case missingCloseDelimiter
  /// Parsing: a part's header block has a line that is neither `Name: value` nor a continuation,
  /// a bare CR or LF, or bytes that are not UTF-8; the line (at most 80 bytes) is given.
  case malformedHeader(String)
}

extension MIMEDocumentError: LocalizedError {
  /// A sentence describing the failure.
  public var errorDescription: String? {
    switch self {
    case .unreadableFile(let url, let code):
      return "Cannot read the MIME part file \(url.path): \(String(cString: strerror(code)))."
    case .notARegularFile(let url):
      return "The MIME part file \(url.path) is not a regular file."
    case .fileChanged(let url, let expectedLength):
      return
        "The MIME part file \(url.path) changed while it was streamed (expected \(expectedLength) bytes)."
    case .invalidHeader(let name):
      return
        "The MIME part header \(name.debugDescription) has a name or value that would break the document."
    case .invalidBoundary(let boundary):
      return "The MIME boundary \(boundary.debugDescription) is empty or contains a line break."
    case .tooLargeForData(let length):
      return "A MIME document of \(length) bytes is too large to generate in memory."
    case .noDelimiter:
      return "The data is not a multipart body: no line starts with its boundary."
    case .missingCloseDelimiter:
      return "The multipart body ends before its closing boundary: it was cut short."
    case .malformedHeader(let line):
      return "A part of the multipart body has a malformed header line: \(line.debugDescription)."
    }
  }
}

extension MIMEDocumentError: CustomStringConvertible {
  /// The same sentence as `errorDescription`, so that `print(error)` reads as it does.
  public var description: String { errorDescription ?? "MIME document error" }
}
