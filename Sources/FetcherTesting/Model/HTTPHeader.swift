import SessionFetcher

/// One header field as it appeared on the wire: original name case, value without surrounding
/// whitespace.
public struct HTTPHeader: Sendable, Hashable, CustomStringConvertible {
  /// The field name, in the case the peer sent it.
  public var name: String
  /// The field value, with leading and trailing spaces and tabs removed.
  public var value: String

  /// Creates a header field.
  public init(name: String, value: String) {
    self.name = name
    self.value = value
  }

  /// `Name: value`.
  public var description: String { "\(name): \(value)" }
}

extension Array where Element == HTTPHeader {
  /// The value of the first field named `name`, compared case-insensitively.
  func first(named name: String) -> String? {
    first { $0.name.equalsIgnoringASCIICase(name) }?.value
  }

  /// Every value of the fields named `name`, in order.
  func values(named name: String) -> [String] {
    filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
  }

  /// Whether a field named `name` is present.
  func contains(named name: String) -> Bool {
    contains { $0.name.equalsIgnoringASCIICase(name) }
  }
}
