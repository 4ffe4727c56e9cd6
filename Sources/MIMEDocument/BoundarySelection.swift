/// The numbers the boundary search appends: a counter from the seed when one is set (the original's
/// `seedRandomWith:`, for reproducible documents), system randomness otherwise.
struct BoundaryRandom: Sendable, Equatable {
  /// The next number to hand out; 0 means "use system randomness", as in the original.
  var seed: UInt32

  mutating func next() -> UInt32 {
    guard seed != 0 else { return UInt32.random(in: .min ... .max) }
    defer { seed &+= 1 }
    return seed
  }
}

/// The original library's boundary choice, as a pure function of the random sequence and of which
/// candidate strings occur in the document's parts.
enum BoundarySelection {
  /// The readable boundary tried first.
  static let base = "END_OF_PART"

  /// How many numbered candidates the original checks before falling back to two random numbers.
  static let checkedNumberedCandidates = 9

  /// Chooses a boundary exactly as the original does: `END_OF_PART`; if that occurs in a part,
  /// `END_OF_PART_%08x` with up to nine numbers from `random`; if all of those occur too,
  /// `%08x_tedborg_%08x` (not checked). `random` advances by as many numbers as the original
  /// consumes, so a seeded document picks the same boundary as the original would.
  ///
  /// - Parameter occurring: given candidates, returns those that occur in some part. It is called
  ///   at most twice: with the base alone, then with the numbered candidates (every numbered
  ///   candidate contains the base, so the second call only happens when the base occurs).
  static func choose(
    random: inout BoundaryRandom, occurring: ([String]) throws -> Set<String>
  ) rethrows -> String {
    if try occurring([base]).isEmpty { return base }

    var lookahead = random
    let numbered = (0..<checkedNumberedCandidates).map { _ in "\(base)_\(hex8(lookahead.next()))" }
    let collided = try occurring(numbered)
    if let index = numbered.firstIndex(where: { !collided.contains($0) }) {
      for _ in 0...index { _ = random.next() }
      return numbered[index]
    }
    // The original draws a tenth numbered candidate that it never checks, then two more numbers.
    for _ in 0...checkedNumberedCandidates { _ = random.next() }
    let first = random.next()
    let second = random.next()
    return "\(hex8(first))_tedborg_\(hex8(second))"
  }

  /// `%08x`.
  static func hex8(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
  }
}
