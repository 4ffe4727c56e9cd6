import Foundation
import SessionFetcher
import Testing

/// The ring a stream buffers in on the URLSession engine: bytes come out in the order they went in,
/// whatever the wrap-around and the growth, and it grows only as much as its policy says.
struct ByteRingTests {
  /// One step: append this many bytes, or take at most this many.
  enum Step: CustomStringConvertible {
    case append(Int)
    case take(Int)

    var description: String {
      switch self {
      case .append(let count): "append \(count)"
      case .take(let limit): "take \(limit)"
      }
    }
  }

  static let scripts: [[Step]] = [
    [.take(10)],
    [.append(0), .take(10)],
    [.append(1), .take(0), .take(1), .take(1)],
    [.append(100), .take(30), .take(100)],
    // Fills the first block, empties part of it, then writes across its end (wraps around).
    [.append(60_000), .take(50_000), .append(40_000), .take(70_000)],
    // Wraps around, then grows while wrapped: the bytes keep their order.
    [.append(60_000), .take(50_000), .append(5_000), .append(200_000), .take(300_000)],
    // Past the growth step, several times, with takes between.
    [.append(3_000_000), .take(1_000_000), .append(2_500_000), .take(65_536), .append(1), .take(10_000_000)],
    // Grows while wrapped with few bytes at the block's start: they go after the old end.
    [.append(1 << 20), .take(100), .append(50), .append(1_000), .take(1 << 21)],
    // Grows while wrapped with more bytes at the start than the oldest: those move to the new end.
    [.append(1 << 20), .take(1_000_000), .append(900_000), .append(200_000), .take(1 << 22)],
    // The same when the oldest bytes are more than the block grows by: the move overlaps itself.
    [.append(3 << 20), .take(1_887_437), .append(1_600_000), .append(300_000), .take(1 << 23)],
    // Few bytes at the start, but more than the block grows by: the oldest move to the new end.
    [.append(3 << 20), .take(1_645_728), .append(1_100_000), .append(600_000), .take(1 << 23)],
    // Many small chunks, as FoundationNetworking delivers them.
    Array(repeating: [Step.append(16_384), .append(7), .take(10_000)], count: 40).flatMap { $0 } + [
      .take(1 << 30)
    ],
  ]

  @Test("the ring gives back exactly what went in, in order", arguments: scripts.indices)
  func bytesComeOutInOrder(script: Int) {
    let ring = ByteRing()
    var model: [UInt8] = []
    var next: UInt8 = 0
    for step in Self.scripts[script] {
      switch step {
      case .append(let count):
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices {
          bytes[index] = next
          next &+= 1
          if next == 251 { next = 0 }
        }
        ring.append(Data(bytes))
        model += bytes
      case .take(let limit):
        let taken = ring.take(upTo: limit)
        let expected = Array(model.prefix(limit))
        model.removeFirst(expected.count)
        #expect([UInt8](taken) == expected, "\(step) in script \(script)")
        #expect(taken.startIndex == 0)
      }
      #expect(ring.count == model.count, "\(step) in script \(script)")
      #expect(ring.capacity >= ring.count)
    }
  }

  @Test("a chunk taken is a value of its own: changing it leaves the ring alone")
  func takenChunksAreCopies() {
    let ring = ByteRing()
    ring.append(Data(repeating: 1, count: 1_000))
    var first = ring.take(upTo: 500)
    first[first.startIndex] = 9
    ring.append(Data(repeating: 2, count: 10))
    let rest = ring.take(upTo: 2_000)
    #expect([UInt8](rest) == [UInt8](repeating: 1, count: 500) + [UInt8](repeating: 2, count: 10))
  }

  @Test("removeAll drops the bytes and the block; the ring can be used again")
  func removeAllEmpties() {
    let ring = ByteRing()
    ring.append(Data(repeating: 7, count: 100_000))
    ring.removeAll()
    #expect(ring.count == 0)
    #expect(ring.capacity == 0)
    ring.append(Data([1, 2, 3]))
    #expect([UInt8](ring.take(upTo: 10)) == [1, 2, 3])
  }

  @Test("shrinking keeps the bytes in order and never drops below what is held")
  func shrinkKeepsTheBytes() {
    let ring = ByteRing()
    ring.append(Data((0..<200_000).map { UInt8($0 % 251) }))
    _ = ring.take(upTo: 150_000)
    // Wrapped around: the tail of the old block and its start.
    ring.append(Data((0..<40_000).map { UInt8(($0 + 7) % 251) }))
    let grown = ring.capacity
    ring.shrink(toCapacity: 64 * 1024)
    #expect(ring.capacity == 90_000)
    #expect(ring.capacity < grown)
    ring.shrink(toCapacity: 1 << 30)
    #expect(ring.capacity == 90_000)
    let rest = [UInt8](ring.take(upTo: 1 << 20))
    let older: [UInt8] = (150_000..<200_000).map { UInt8($0 % 251) }
    let newer: [UInt8] = (0..<40_000).map { UInt8(($0 + 7) % 251) }
    #expect(rest == older + newer)
    ring.shrink(toCapacity: 0)
    #expect(ring.capacity == 0)
  }

  @Test(
    "the block doubles up to the growth step, then grows by steps",
    arguments: [
      // (needed, current capacity, new capacity)
      (1, 0, 64 * 1024),
      (64 * 1024 + 1, 64 * 1024, 128 * 1024),
      (300_000, 128 * 1024, 300_000),
      (600_000, 512 * 1024, 1024 * 1024),
      (1024 * 1024 + 1, 1024 * 1024, 2 * 1024 * 1024),
      (4 * 1024 * 1024 + 100, 4 * 1024 * 1024, 5 * 1024 * 1024),
      (16 * 1024 * 1024 + 1, 16 * 1024 * 1024, 17 * 1024 * 1024),
      (20 * 1024 * 1024, 16 * 1024 * 1024, 20 * 1024 * 1024),
    ])
  func growthPolicy(needed: Int, capacity: Int, expected: Int) {
    #expect(ByteRing.capacity(toHold: needed, from: capacity) == expected)
  }
}
