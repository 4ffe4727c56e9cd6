import Foundation
import MIMEDocument
import SessionFetcher

extension SessionFetcher {
  /// Sends `document` as the request body: a fresh stream of it for every attempt (so retries and
  /// 307/308 redirects resend it whole), its length for send progress, and the
  /// `Content-Type: multipart/…; boundary=…` header. A GET becomes a POST.
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
    bodyStreamProvider = { try document.generateInputStream().stream }
    bodyLength = length
    setRequestValue(header, forHTTPHeaderField: "Content-Type")
  }
}
