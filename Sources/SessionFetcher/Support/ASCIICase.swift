extension String {
  /// Whether `self` equals `other` with ASCII letters compared without case and everything else
  /// exactly: how HTTP compares header names, tokens and URL schemes. Foundation's
  /// `caseInsensitiveCompare` (or `lowercased()` on both sides) folds all of Unicode and allocates.
  /// (On `String` only: through a generic `StringProtocol` the same loop is much slower.)
  ///
  /// Native strings are compared in their contiguous UTF-8 (a loop over bytes); others (bridged)
  /// through their views.
  @inlinable
  package func equalsIgnoringASCIICase(_ other: String) -> Bool {
    guard utf8.count == other.utf8.count else { return false }
    let contiguous = utf8.withContiguousStorageIfAvailable { mine in
      other.utf8.withContiguousStorageIfAvailable { theirs in
        for index in mine.indices where asciiLowercased(mine[index]) != asciiLowercased(theirs[index]) {
          return false
        }
        return true
      }
    }
    if let contiguous, let equal = contiguous { return equal }
    return zip(utf8, other.utf8).allSatisfy { asciiLowercased($0) == asciiLowercased($1) }
  }
}

/// `byte` with `A`–`Z` made lowercase.
@usableFromInline
func asciiLowercased(_ byte: UInt8) -> UInt8 {
  byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}
