import Foundation

/// One response head as an engine parsed it from the wire: the status line and the header fields
/// in the order received, names as received. ``ResponseHead`` keeps it and makes the
/// `HTTPURLResponse` only when something asks for one; an engine that reads the head itself (the
/// libcurl engine, with `CurlResponseHeadParser`) hands the fetcher this instead of a response.
package struct ParsedResponseHead: Sendable, Equatable {
  /// The status code.
  package var statusCode: Int
  /// `"HTTP/1.0"`, `"HTTP/1.1"`, `"HTTP/2"` or `"HTTP/3"`.
  package var httpVersion: String
  /// The fields in the order received, names as received.
  package var fields: [Field]
  /// Whether every field name is ASCII (then comparing names by ASCII case is what comparing their
  /// `lowercased()` forms gives).
  package var namesAreASCII: Bool

  /// One header field.
  package struct Field: Sendable, Equatable {
    package var name: String {
      didSet { nameKey = ParsedResponseHead.nameKey(name).key }
    }
    package var value: String
    /// ``ParsedResponseHead/nameKey(_:)`` of `name`: a lookup passes over a field whose key differs
    /// without comparing the strings.
    package private(set) var nameKey: UInt64

    package init(name: String, value: String) {
      self.name = name
      self.value = value
      nameKey = ParsedResponseHead.nameKey(name).key
    }

    /// A field whose name's key the parser folded from the bytes it read.
    init(name: String, value: String, nameKey: UInt64) {
      self.name = name
      self.value = value
      self.nameKey = nameKey
    }
  }

  /// The FNV-1a hash of the bytes of a name with `A`–`Z` made lowercase, and whether every byte is
  /// ASCII. Names equal without regard to ASCII case have equal keys; a key tells nothing more, the
  /// names are still compared.
  package static func nameKey(_ name: String) -> (key: UInt64, isASCII: Bool) {
    func fold(_ bytes: some Sequence<UInt8>) -> (key: UInt64, isASCII: Bool) {
      var folder = NameKeyFolder()
      for byte in bytes { folder.add(byte) }
      return (folder.key, folder.isASCII)
    }
    // A native string's bytes in place; a bridged one's through its view.
    return name.utf8.withContiguousStorageIfAvailable { fold($0) } ?? fold(name.utf8)
  }

  /// Folds a name's bytes, one at a time, into its ``nameKey(_:)``.
  struct NameKeyFolder {
    private(set) var key: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var isASCII = true

    mutating func add(_ byte: UInt8) {
      if byte >= 0x80 { isASCII = false }
      key = (key ^ UInt64(asciiLowercased(byte))) &* 0x100_0000_01b3
    }
  }

  package init(statusCode: Int, httpVersion: String, fields: [Field]) {
    self.init(
      statusCode: statusCode, httpVersion: httpVersion, fields: fields,
      namesAreASCII: fields.allSatisfy { field in field.name.utf8.allSatisfy { $0 < 0x80 } })
  }

  /// A head whose names the parser already checked.
  init(statusCode: Int, httpVersion: String, fields: [Field], namesAreASCII: Bool) {
    self.statusCode = statusCode
    self.httpVersion = httpVersion
    self.fields = fields
    self.namesAreASCII = namesAreASCII
  }

  /// An interim (1xx) head, which an engine may pass on before the final one.
  package var isInterim: Bool { (100..<200).contains(statusCode) }

  /// The fields as `HTTPURLResponse` takes them, built exactly as FoundationNetworking does
  /// (`_HTTPURLProtocol._HTTPMessage.headersAsDictionary`): a name repeated with the same spelling
  /// joins its values with `", "`; names keep the case they were received in.
  package var headerFields: [String: String] {
    var result = [String: String](minimumCapacity: fields.count)
    for field in fields {
      // Sized once for all the fields; a repeated name's value grows in place.
      if let index = result.index(forKey: field.name) {
        result.values[index] += ", " + field.value
      } else {
        result[field.name] = field.value
      }
    }
    return result
  }

  /// The first value of a field, the name compared without regard to ASCII case.
  package func value(named name: String) -> String? {
    let key = Self.nameKey(name).key
    return fields.withUnsafeBufferPointer { fields in
      for index in fields.indices
      where fields[index].nameKey == key && fields[index].name.equalsIgnoringASCIICase(name) {
        return fields[index].value
      }
      return nil
    }
  }

  /// Every value of a field, in the order received, the name compared without regard to ASCII case.
  package func values(named name: String) -> [String] {
    let key = Self.nameKey(name).key
    return fields.withUnsafeBufferPointer { fields in
      var values: [String] = []
      for index in fields.indices
      where fields[index].nameKey == key && fields[index].name.equalsIgnoringASCIICase(name) {
        values.append(fields[index].value)
      }
      return values
    }
  }

  /// The response for `url`.
  package func response(url: URL) -> HTTPURLResponse? {
    HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
  }

  /// The `Location` resolved against `url`, for a 3xx.
  package func redirectTarget(relativeTo url: URL) -> URL? {
    guard (300..<400).contains(statusCode), let location = value(named: "Location"), !location.isEmpty else {
      return nil
    }
    return URL(string: location, relativeTo: url)?.absoluteURL
  }
}

extension ParsedResponseHead {
  /// The result of ``joinedValue(named:)``.
  package enum Lookup: Equatable {
    /// The value `HTTPURLResponse` holds for the name (its fields of one spelling joined with
    /// `", "`), nil when no field has the name.
    case found(String?)
    /// The name came in more than one spelling: `HTTPURLResponse` keeps one of them, by the order
    /// of its dictionary.
    case ambiguous
  }

  /// The value of the fields named `name` (ASCII case ignored) as ``headerFields`` joins them.
  package func joinedValue(named name: String) -> Lookup {
    joinedValue(named: name, key: Self.nameKey(name).key)
  }

  /// ``joinedValue(named:)`` with the name's ``nameKey(_:)`` known.
  package func joinedValue(named name: String, key: UInt64) -> Lookup {
    fields.withUnsafeBufferPointer { fields in
      var spelling: String?
      var value: String?
      for index in fields.indices
      where fields[index].nameKey == key && fields[index].name.equalsIgnoringASCIICase(name) {
        let field = fields[index]
        if let spelling {
          guard field.name == spelling else { return .ambiguous }
          value?.append(", ")
          value?.append(field.value)
        } else {
          spelling = field.name
          value = field.value
        }
      }
      return .found(value)
    }
  }
}
