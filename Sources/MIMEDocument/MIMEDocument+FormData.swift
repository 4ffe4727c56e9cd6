import Foundation

extension MIMEDocument {
  /// The `multipart/*` media type a document is sent as, named by ``MIMEDocument/contentType(boundary:)``.
  ///
  /// ```swift
  /// let document = MIMEDocument(multipartType: .related)
  /// document.multipartType = MultipartType("multipart/x-mixed-replace")
  /// ```
  public struct MultipartType: Sendable, Hashable, CustomStringConvertible {
    /// The media type, for example `multipart/form-data`.
    public var rawValue: String

    /// A media type given in full, for example `"multipart/byteranges"`.
    public init(_ rawValue: String) {
      self.rawValue = rawValue
    }

    /// `multipart/form-data` (RFC 7578): HTML form submissions.
    public static let formData = MultipartType("multipart/form-data")
    /// `multipart/related` (RFC 2387): a root part and the parts it refers to, as Google's upload
    /// APIs expect (metadata then media).
    public static let related = MultipartType("multipart/related")
    /// `multipart/mixed` (RFC 2046): independent parts in order.
    public static let mixed = MultipartType("multipart/mixed")
    /// `multipart/alternative` (RFC 2046): the same content in several formats.
    public static let alternative = MultipartType("multipart/alternative")

    /// The media type.
    public var description: String { rawValue }
  }

  /// The `Content-Type` header value for this document with the given boundary, for example
  /// `multipart/form-data; boundary=END_OF_PART`. The boundary is quoted when it contains characters
  /// that a bare MIME parameter value cannot (spaces, `:`, `?`, …).
  ///
  /// ```swift
  /// let (stream, length, boundary) = try document.generateInputStream()
  /// request.setValue(document.contentType(boundary: boundary), forHTTPHeaderField: "Content-Type")
  /// ```
  public func contentType(boundary: String) -> String {
    "\(multipartType.rawValue); boundary=\(FormDataEncoding.parameterValue(boundary))"
  }

  /// The `Content-Type` header value with the boundary generation will use
  /// (``resolvedBoundary()``).
  ///
  /// ```swift
  /// request.setValue(try document.contentTypeHeaderValue, forHTTPHeaderField: "Content-Type")
  /// ```
  public var contentTypeHeaderValue: String {
    get throws { contentType(boundary: try resolvedBoundary()) }
  }

  /// Appends a `multipart/form-data` text field: a part with
  /// `Content-Disposition: form-data; name="…"` and the UTF-8 value as its body.
  ///
  /// The name is escaped as browsers do (the WHATWG HTML form encoding): `"` becomes `%22`, CR `%0D`,
  /// LF `%0A`; other characters, non-ASCII and backslashes included, are written as they are, in
  /// UTF-8.
  ///
  /// ```swift
  /// document.appendFormField(name: "title", value: "Holiday 2024")
  /// ```
  public func appendFormField(name: String, value: String) {
    appendPart(
      headers: ["Content-Disposition": FormDataEncoding.contentDisposition(name: name, filename: nil)],
      body: Data(value.utf8))
  }

  /// Appends a `multipart/form-data` file field whose contents are in memory.
  ///
  /// The part has `Content-Disposition: form-data; name="…"; filename="…"` (escaped as in
  /// ``appendFormField(name:value:)``), plus `filename*=UTF-8''…` (RFC 8187 percent-encoding) when
  /// the filename is not ASCII, and `Content-Type`.
  ///
  /// ```swift
  /// document.appendFormFile(
  ///   name: "avatar", filename: "me.png", contentType: "image/png", data: pngData)
  /// ```
  public func appendFormFile(
    name: String, filename: String, contentType: String = "application/octet-stream", data: Data
  ) {
    appendPart(
      headers: FormDataEncoding.fileHeaders(name: name, filename: filename, contentType: contentType),
      body: data)
  }

  /// Appends a `multipart/form-data` file field streamed from the file at `fileURL` (never loaded
  /// whole), with headers as in ``appendFormFile(name:filename:contentType:data:)``.
  ///
  /// - Parameters:
  ///   - name: the form field's name.
  ///   - filename: the name the server sees; the file's last path component unless given.
  ///   - contentType: the part's `Content-Type`.
  ///   - fileURL: the file whose contents are the field's value.
  ///
  /// ```swift
  /// document.appendFormFile(
  ///   name: "video", filename: nil, contentType: "video/mp4", fileURL: movieURL)
  /// ```
  public func appendFormFile(
    name: String, filename: String? = nil, contentType: String = "application/octet-stream",
    fileURL: URL
  ) {
    appendPart(
      headers: FormDataEncoding.fileHeaders(
        name: name, filename: filename ?? fileURL.lastPathComponent, contentType: contentType),
      fileURL: fileURL)
  }
}

/// The escaping rules of `multipart/form-data` header parameters.
enum FormDataEncoding {
  /// A name or filename escaped for a quoted `Content-Disposition` parameter, as the WHATWG HTML
  /// standard's multipart/form-data encoding does: `"` → `%22`, CR → `%0D`, LF → `%0A`, everything
  /// else unchanged (browsers send backslashes and non-ASCII as they are; a `\` is not an escape).
  static func escapeQuoted(_ value: String) -> String {
    var escaped = ""
    escaped.unicodeScalars.reserveCapacity(value.unicodeScalars.count)
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": escaped += "%22"
      case "\r": escaped += "%0D"
      case "\n": escaped += "%0A"
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// RFC 8187 (RFC 5987) `ext-value` for UTF-8: `UTF-8''` and the UTF-8 bytes, percent-encoded
  /// except `attr-char`s.
  static func extendedValue(_ value: String) -> String {
    var encoded = "UTF-8''"
    for byte in value.utf8 {
      if isAttributeCharacter(byte) {
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        encoded += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0F)
      }
    }
    return encoded
  }

  /// `form-data; name="…"` with `; filename="…"` and, for a non-ASCII filename,
  /// `; filename*=UTF-8''…`.
  static func contentDisposition(name: String, filename: String?) -> String {
    var disposition = "form-data; name=\"\(escapeQuoted(name))\""
    if let filename {
      disposition += "; filename=\"\(escapeQuoted(filename))\""
      if !filename.utf8.allSatisfy({ $0 < 0x80 }) {
        disposition += "; filename*=\(extendedValue(filename))"
      }
    }
    return disposition
  }

  static func fileHeaders(name: String, filename: String, contentType: String) -> [String: String] {
    [
      "Content-Disposition": contentDisposition(name: name, filename: filename),
      "Content-Type": contentType,
    ]
  }

  /// A MIME parameter value: bare when it is an RFC 2045 token, otherwise a quoted string with `"`
  /// and `\` escaped.
  static func parameterValue(_ value: String) -> String {
    if !value.isEmpty && value.utf8.allSatisfy(isTokenCharacter) { return value }
    var quoted = "\""
    for scalar in value.unicodeScalars {
      if scalar == "\"" || scalar == "\\" { quoted += "\\" }
      quoted.unicodeScalars.append(scalar)
    }
    return quoted + "\""
  }

  /// RFC 2045 `token`: printable ASCII except space and `tspecials`.
  private static func isTokenCharacter(_ byte: UInt8) -> Bool {
    guard byte > 0x20 && byte < 0x7F else { return false }
    return !"()<>@,;:\\\"/[]?=".utf8.contains(byte)
  }

  /// RFC 8187 `attr-char`.
  private static func isAttributeCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return "!#$&+-.^_`|~".utf8.contains(byte)
    }
  }

  private static func hexDigit(_ nibble: UInt8) -> String {
    String(nibble, radix: 16, uppercase: true)
  }
}
