import Foundation
import Testing

@testable import MIMEDocument

/// The boundary choice as a pure function: which candidates occur → which boundary, and how far the
/// seeded sequence advances.
@Suite("Boundary selection")
struct BoundarySelectionTests {
  private static func numbered(_ value: UInt32) -> String { "END_OF_PART_\(BoundarySelection.hex8(value))" }

  struct Case: Sendable, CustomTestStringConvertible {
    var seed: UInt32
    var occurring: Set<String>
    var expected: String
    var seedAfter: UInt32
    var testDescription: String { "seed \(seed), \(occurring.count) occurring → \(expected)" }
  }

  static let cases: [Case] = [
    Case(seed: 1, occurring: [], expected: "END_OF_PART", seedAfter: 1),
    Case(seed: 1, occurring: ["END_OF_PART"], expected: numbered(1), seedAfter: 2),
    Case(seed: 1, occurring: ["END_OF_PART", numbered(1)], expected: numbered(2), seedAfter: 3),
    Case(seed: 1, occurring: ["END_OF_PART", numbered(2)], expected: numbered(1), seedAfter: 2),
    Case(
      seed: 1, occurring: Set(["END_OF_PART"] + (1...8).map(numbered)), expected: numbered(9), seedAfter: 10),
    Case(
      seed: 1, occurring: Set(["END_OF_PART"] + (1...9).map(numbered)), expected: "0000000b_tedborg_0000000c",
      seedAfter: 13),
    Case(seed: 0xFFFF_FFFF, occurring: ["END_OF_PART"], expected: "END_OF_PART_ffffffff", seedAfter: 0),
    Case(seed: 0xABC, occurring: ["END_OF_PART"], expected: "END_OF_PART_00000abc", seedAfter: 0xABD),
  ]

  @Test(arguments: cases)
  func choice(_ testCase: Case) {
    var random = BoundaryRandom(seed: testCase.seed)
    var calls: [[String]] = []
    let chosen = BoundarySelection.choose(random: &random) { candidates in
      calls.append(candidates)
      return testCase.occurring.intersection(candidates)
    }
    #expect(chosen == testCase.expected)
    #expect(random.seed == testCase.seedAfter)
    #expect(calls.count == (testCase.occurring.contains("END_OF_PART") ? 2 : 1))
  }

  @Test func unseededChoiceIsRandomAndValid() {
    var random = BoundaryRandom(seed: 0)
    let chosen = Set(
      (0..<20).map { _ in
        BoundarySelection.choose(random: &random) { candidates in
          Set(candidates.filter { $0 == "END_OF_PART" })
        }
      })
    #expect(chosen.count > 1)
    #expect(chosen.allSatisfy { $0.hasPrefix("END_OF_PART_") && $0.count == 20 })
  }

  @Test(arguments: [(UInt32(0), "00000000"), (1, "00000001"), (0x6b8b_4567, "6b8b4567"), (.max, "ffffffff")])
  func hex8(value: UInt32, expected: String) {
    #expect(BoundarySelection.hex8(value) == expected)
  }
}
