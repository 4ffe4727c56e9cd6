import SessionFetcher
import Testing

/// A dictionary gives back storage it grew far past, and keeps the storage of a small table.
@Suite("Sparse dictionary storage")
struct SparseStorageTests {
  struct Row: CustomTestStringConvertible, Sendable {
    var grownTo: Int
    var left: Int
    /// Whether the storage is replaced by smaller storage.
    var shrinks: Bool
    var testDescription: String { "\(grownTo) entries, \(left) left: \(shrinks ? "shrinks" : "kept")" }
  }

  static let rows: [Row] = [
    Row(grownTo: 5_000, left: 0, shrinks: true),
    Row(grownTo: 5_000, left: 10, shrinks: true),
    Row(grownTo: 5_000, left: 600, shrinks: true),
    // Not yet an eighth of the storage: moving the entries would cost more than the room it frees.
    Row(grownTo: 5_000, left: 1_000, shrinks: false),
    Row(grownTo: 5_000, left: 5_000, shrinks: false),
    // Small tables keep their storage, so one that fills and empties allocates nothing each time.
    Row(grownTo: 40, left: 0, shrinks: false),
    Row(grownTo: 1, left: 0, shrinks: false),
  ]

  @Test(arguments: rows)
  func storageFollowsTheEntries(_ row: Row) {
    var table: [Int: String] = [:]
    for key in 0..<row.grownTo { table[key] = "\(key)" }
    for key in row.left..<row.grownTo { table.removeValue(forKey: key) }
    let before = table.capacity
    table.releaseSparseStorage()
    if row.shrinks {
      #expect(table.capacity < before)
      #expect(table.capacity >= row.left * 2)
    } else {
      #expect(table.capacity == before)
    }
    // Nothing is lost or changed.
    #expect(table.count == row.left)
    #expect((0..<row.left).allSatisfy { table[$0] == "\($0)" })
  }
}
