import Foundation
import MIMEDocument

/// A `-F` argument, as curl reads it: `name=value` is a text field, `name=@path` a file field
/// streamed from disk, optionally followed by `;type=MEDIA/TYPE` and `;filename=NAME`.
struct FormField: Equatable {
  enum Content: Equatable {
    case text(String)
    case file(path: String, contentType: String?, filename: String?)
  }

  let name: String
  let content: Content

  /// Parses `text`; nil when it has no `=` or an empty name.
  init?(_ text: String) {
    guard let equals = text.firstIndex(of: "=") else { return nil }
    let name = String(text[..<equals])
    guard !name.isEmpty else { return nil }
    self.name = name
    let value = text[text.index(after: equals)...]
    guard value.hasPrefix("@") else {
      content = .text(String(value))
      return
    }
    var pieces = value.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
    let path = pieces.removeFirst()
    guard !path.isEmpty else { return nil }
    var contentType: String?
    var filename: String?
    for piece in pieces {
      if piece.hasPrefix("type=") {
        contentType = String(piece.dropFirst("type=".count))
      } else if piece.hasPrefix("filename=") {
        filename = String(piece.dropFirst("filename=".count))
      } else {
        return nil
      }
    }
    content = .file(path: path, contentType: contentType, filename: filename)
  }

  /// A multipart/form-data document of `fields` in order; throws a ``FetchFailure`` (curl's
  /// exit code 26) for a file that cannot be read.
  static func document(_ fields: [FormField]) throws -> MIMEDocument {
    let document = MIMEDocument()
    for field in fields {
      switch field.content {
      case .text(let value):
        document.appendFormField(name: field.name, value: value)
      case .file(let path, let contentType, let filename):
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
          FileManager.default.isReadableFile(atPath: path)
        else {
          throw FetchFailure(
            FetchFailure.readError, "cannot read the form file \(path) (-F \(field.name)=@…)")
        }
        document.appendFormFile(
          name: field.name, filename: filename, contentType: contentType ?? "application/octet-stream",
          fileURL: URL(fileURLWithPath: path))
      }
    }
    return document
  }
}
