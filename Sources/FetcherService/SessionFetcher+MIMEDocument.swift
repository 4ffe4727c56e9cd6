import Foundation
import MIMEDocument
import SessionFetcher

extension SessionFetcher {
  /// Sends `document` as the request body: a fresh stream of it for every attempt (so retries and
  /// 307/308 redirects resend it whole), its length for send progress, and the
  /// `Content-Type: multipart/…; boundary=…` header. A GET becomes a POST.
  ///
  /// The body goes with a `Content-Length`, never chunked: every part's length is known (a file
  /// part's size is read when each attempt generates the document), and many servers do not read
  /// chunked request bodies (Python's `http.server`, S3 POST form uploads, embedded servers). The
  /// libcurl engine streams the document with its length. FoundationNetworking cannot send a
  /// stream with a length (it would frame it twice), so the URLSession engine generates each
  /// attempt's document first, off the caller's thread, and sends the bytes: from memory up to
  /// 16 MiB, from a temporary file beyond (deleted when the fetch ends).
  ///
  /// A file part that changes size after this call fails the fetch with
  /// `SessionFetcherError.bodyUnavailable` (not retried), and no request goes out complete:
  /// - changed before an attempt begins (the document is measured again for every attempt): the
  ///   attempt fails before anything is sent;
  /// - shrunk while the attempt reads it: on the URLSession engine nothing is sent (the document is
  ///   read before sending); on the libcurl engine the transfer is cut before its last byte, so the
  ///   server never sees a whole request;
  /// - grown while the attempt reads it: the part's measured length goes out (its first bytes), as
  ///   `MIMEDocument.generateInputStream()` documents, so the `Content-Length` is still right.
  ///
  /// - Parameters:
  ///   - document: the multipart document. Add no parts after this call: every attempt generates
  ///     the document again.
  ///   - contentType: the media type to announce instead of the document's own
  ///     (`MIMEDocument.multipartType`), for example `"multipart/related"`; the
  ///     boundary parameter is added.
  /// - Throws: `MIMEDocumentError` when the document cannot be generated (an
  ///   unreadable file part, an invalid boundary), before anything is changed.
  ///
  /// ```swift
  /// let document = MIMEDocument()
  /// document.appendFormField(name: "title", value: "Holiday")
  /// document.appendPart(headers: ["Content-Type": "image/jpeg"], fileURL: photoURL)
  /// let fetcher = service.fetcher(urlString: "https://example.com/upload")
  /// try fetcher.setBody(document)
  /// let reply = try await fetcher.beginFetch()
  /// ```
  public func setBody(_ document: MIMEDocument, contentType: String? = nil) throws {
    // Generating once now checks the document and fixes its boundary for every later attempt.
    let (_, length, boundary) = try document.generateInputStream()
    let documentType = document.contentType(boundary: boundary)
    let header =
      contentType.map { $0 + documentType.dropFirst(document.multipartType.rawValue.count) }
      ?? documentType
    setBodyStream(
      {
        let (stream, current, _) = try document.generateInputStream()
        guard current == length else { throw MIMEBodyLengthChanged(expected: length, actual: current) }
        return stream
      }, exactLength: length)
    setRequestValue(header, forHTTPHeaderField: "Content-Type")
  }
}

/// A document set with `setBody(_:contentType:)` whose length changed before an attempt sent it (a
/// file part grew or shrank): sending it would need another `Content-Length` than the one fixed
/// with the body.
private struct MIMEBodyLengthChanged: Error, CustomStringConvertible {
  var expected: Int64
  var actual: Int64

  var description: String {
    "the multipart document is \(actual) bytes now but was \(expected) when it was set as the body "
      + "(a file part changed size); set the body again to send the new contents"
  }
}
