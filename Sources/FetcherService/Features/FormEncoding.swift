import Foundation

/// The `application/x-www-form-urlencoded` serializer of the WHATWG URL standard: what browsers send
/// for an HTML form's query or body.
///
/// Each name and value is UTF-8 encoded; the bytes of ASCII letters, digits and `*-._` stay as they
/// are, a space becomes `+`, and every other byte becomes `%XX` (uppercase hexadecimal) — so `+`,
/// `&`, `=`, `%`, `/`, `?` and `~` are all percent-encoded. These are form rules, not the URL-path
/// rules of `addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)`, which would leave `+`,
/// `&` and `=` as they are and let a value split into several parameters. Line breaks are sent as
/// given (browsers first normalize them to CR LF).
///
/// ```swift
/// FormURLEncoding.encode("a b+c&d")                       // "a+b%2Bc%26d"
/// FormURLEncoding.query([("q", "swift"), ("tag", "a&b")])  // "q=swift&tag=a%26b"
/// ```
public enum FormURLEncoding {
  /// The media type of a form-encoded body, `application/x-www-form-urlencoded`.
  public static let contentType = "application/x-www-form-urlencoded"

  /// `string` form-encoded: space → `+`, alphanumerics and `*-._` unchanged, every other UTF-8 byte
  /// `%XX`.
  public static func encode(_ string: String) -> String {
    var encoded = ""
    encoded.reserveCapacity(string.utf8.count)
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"):
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: " "):
        encoded += "+"
      default:
        encoded += "%"
        encoded.unicodeScalars.append(hexDigits[Int(byte >> 4)])
        encoded.unicodeScalars.append(hexDigits[Int(byte & 0x0F)])
      }
    }
    return encoded
  }

  /// `name=value` pairs, each form-encoded, joined with `&`, in the given order (repeated names
  /// stay repeated). An empty value gives `name=`; no pairs give an empty string.
  public static func query(_ parameters: [(String, String)]) -> String {
    parameters.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
  }

  /// `query(_:)` for a literal list: `FormURLEncoding.query(["q": "swift", "q": "linux"])`.
  public static func query(_ parameters: KeyValuePairs<String, String>) -> String {
    query(parameters.map { ($0.key, $0.value) })
  }

  private static let hexDigits = Array("0123456789ABCDEF".unicodeScalars)
}

extension URL {
  /// This URL with `parameters` appended to its query, form-encoded (see ``FormURLEncoding``): after
  /// an existing query with `&`, before any fragment. No parameters give the URL unchanged.
  ///
  /// ```swift
  /// let url = URL(string: "https://example.com/search?lang=en")!
  ///   .appendingFormQuery([("q", "swift & linux"), ("page", "2")])
  /// // https://example.com/search?lang=en&q=swift+%26+linux&page=2
  /// ```
  public func appendingFormQuery(_ parameters: [(String, String)]) -> URL {
    guard !parameters.isEmpty,
      var components = URLComponents(url: self, resolvingAgainstBaseURL: false)
    else { return self }
    let added = FormURLEncoding.query(parameters)
    if let existing = components.percentEncodedQuery, !existing.isEmpty {
      components.percentEncodedQuery = existing + "&" + added
    } else {
      components.percentEncodedQuery = added
    }
    return components.url ?? self
  }

  /// `appendingFormQuery(_:)` for a literal list:
  /// `url.appendingFormQuery(["q": "swift", "page": "2"])`.
  public func appendingFormQuery(_ parameters: KeyValuePairs<String, String>) -> URL {
    appendingFormQuery(parameters.map { ($0.key, $0.value) })
  }
}
