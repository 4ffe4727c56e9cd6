import Foundation
import MIMEDocument
import SessionFetcher

/// The value of one form parameter: text, or a file's contents (in memory or on disk).
///
/// Text values alone make an `application/x-www-form-urlencoded` body; any ``data(_:filename:contentType:)``
/// or ``file(_:filename:contentType:)`` value makes the whole body `multipart/form-data` (see
/// `setFormBody(_:)`). A string literal is a
/// text value.
///
/// ```swift
/// try fetcher.setFormBody([
///   ("title", "Holiday"),
///   ("photo", .file(photoURL, contentType: "image/jpeg")),
///   ("thumbnail", .data(thumbnailData, filename: "thumb.png", contentType: "image/png")),
/// ])
/// ```
public enum FormValue: Sendable, Hashable, ExpressibleByStringLiteral {
  /// A text value, sent as UTF-8.
  case text(String)
  /// File contents in memory. In a multipart body the part is named `filename` (default `blob`, as
  /// browsers name a file without a name) with `Content-Type: contentType` (default
  /// `application/octet-stream`).
  case data(Data, filename: String? = nil, contentType: String? = nil)
  /// A file on disk, streamed for every attempt (never loaded whole). The part is named `filename`
  /// (default: the file's last path component) with `Content-Type: contentType` (default
  /// `application/octet-stream`).
  case file(URL, filename: String? = nil, contentType: String? = nil)

  /// A text value: `"swift"` is `.text("swift")`.
  public init(stringLiteral value: String) {
    self = .text(value)
  }

  /// The text of a ``text(_:)`` value, nil for file contents.
  public var text: String? {
    if case .text(let text) = self { return text }
    return nil
  }
}

extension SessionFetcher {
  /// A fetcher for a GET of `url` with `query` appended to its query, form-encoded (see
  /// ``FormURLEncoding``), in order, repeated names kept.
  ///
  /// ```swift
  /// let fetcher = SessionFetcher.fetcher(
  ///   url: URL(string: "https://example.com/search")!, query: [("q", "C++ & Swift"), ("page", "2")])
  /// // GET /search?q=C%2B%2B+%26+Swift&page=2
  /// ```
  public static func fetcher(url: URL, query: [(String, String)]) -> SessionFetcher {
    SessionFetcher.fetcher(url: url.appendingFormQuery(query))
  }

  /// `fetcher(url:query:)` for a literal list:
  /// `SessionFetcher.fetcher(url: url, query: ["q": "swift", "page": "2"])`.
  public static func fetcher(url: URL, query: KeyValuePairs<String, String>) -> SessionFetcher {
    fetcher(url: url, query: query.map { ($0.key, $0.value) })
  }

  /// Sends `parameters` as the request body, as an HTML form would, in order (repeated names
  /// allowed), replacing any body set before. A GET becomes a POST.
  ///
  /// - Only text values: an `application/x-www-form-urlencoded` body (``FormURLEncoding``) in
  ///   `bodyData`.
  /// - Any ``FormValue/data(_:filename:contentType:)`` or ``FormValue/file(_:filename:contentType:)``
  ///   value: a `multipart/form-data` `MIMEDocument` with one part per parameter, sent with
  ///   `setBody(_:contentType:)` (streamed, generated again for every attempt).
  ///
  /// The `Content-Type` header is set to match.
  ///
  /// ```swift
  /// let fetcher = service.fetcher(urlString: "https://example.com/login")
  /// try fetcher.setFormBody([("user", "ada"), ("password", "p&ss=word")])
  /// // user=ada&password=p%26ss%3Dword
  /// ```
  ///
  /// - Throws: `MIMEDocumentError` for a multipart body that cannot be generated (a
  ///   file that cannot be read), before anything is changed. A text-only body never throws.
  public func setFormBody(_ parameters: [(String, FormValue)]) throws {
    var textPairs: [(String, String)] = []
    for (name, value) in parameters {
      guard let text = value.text else {
        let document = FormBody.multipartDocument(parameters)
        try setBody(document)
        bodyData = nil
        bodyFileURL = nil
        return
      }
      textPairs.append((name, text))
    }
    bodyFileURL = nil
    bodyStreamProvider = nil
    bodyLength = nil
    bodyData = Data(FormURLEncoding.query(textPairs).utf8)
    setRequestValue(FormURLEncoding.contentType, forHTTPHeaderField: "Content-Type")
  }

  /// `setFormBody(_:)` for a literal list:
  /// `try fetcher.setFormBody(["title": "Holiday", "photo": .file(photoURL)])`.
  public func setFormBody(_ parameters: KeyValuePairs<String, FormValue>) throws {
    try setFormBody(parameters.map { ($0.key, $0.value) })
  }
}

extension FetcherService {
  /// A fetcher with the service's defaults for a GET of `url` with `query` appended, form-encoded
  /// (see `fetcher(url:query:)`).
  ///
  /// ```swift
  /// let results = try await service.fetcher(url: searchURL, query: [("q", "swift")]).beginFetch()
  /// ```
  public func fetcher(url: URL, query: [(String, String)]) -> SessionFetcher {
    fetcher(url: url.appendingFormQuery(query))
  }

  /// `fetcher(url:query:)` for a literal list.
  public func fetcher(url: URL, query: KeyValuePairs<String, String>) -> SessionFetcher {
    fetcher(url: url, query: query.map { ($0.key, $0.value) })
  }
}

/// Builds the multipart form of `SessionFetcher.setFormBody(_:)`.
enum FormBody {
  static let defaultContentType = "application/octet-stream"
  /// Browsers name a file part without a name `blob`.
  static let defaultDataFilename = "blob"

  static func multipartDocument(_ parameters: [(String, FormValue)]) -> MIMEDocument {
    let document = MIMEDocument()
    for (name, value) in parameters {
      switch value {
      case .text(let text):
        document.appendFormField(name: name, value: text)
      case .data(let data, let filename, let contentType):
        document.appendFormFile(
          name: name, filename: filename ?? defaultDataFilename,
          contentType: contentType ?? defaultContentType, data: data)
      case .file(let url, let filename, let contentType):
        document.appendFormFile(
          name: name, filename: filename, contentType: contentType ?? defaultContentType, fileURL: url)
      }
    }
    return document
  }
}
