import Foundation
import Testing

@testable import FetcherService

@Suite("ETagCache")
struct ETagCacheTests {
  enum Step {
    case store(key: String, etag: String, bytes: Int?, stored: Bool)
    case lookupTag(key: String, expected: String?)
    case lookupData(key: String, etag: String, expectedBytes: Int?)
    case remove(key: String)
    case capacity(Int)
  }

  struct Scenario: CustomTestStringConvertible, Sendable {
    var name: String
    var capacity: Int
    var steps: [Step]
    /// The keys left at the end, least recently used first.
    var keys: [String]
    var testDescription: String { name }
  }

  // Keys and tags are one byte each here, so an entry with N body bytes costs N + 2.
  static let scenarios: [Scenario] = [
    Scenario(
      name: "stores and answers tags and bodies", capacity: 100,
      steps: [
        .store(key: "a", etag: "1", bytes: 10, stored: true),
        .lookupTag(key: "a", expected: "1"),
        .lookupData(key: "a", etag: "1", expectedBytes: 10),
        .lookupData(key: "a", etag: "2", expectedBytes: nil),
        .lookupTag(key: "b", expected: nil),
      ],
      keys: ["a"]),
    Scenario(
      name: "evicts the least recently used to fit", capacity: 30,
      steps: [
        .store(key: "a", etag: "1", bytes: 10, stored: true),
        .store(key: "b", etag: "1", bytes: 10, stored: true),
        .lookupTag(key: "a", expected: "1"),
        .store(key: "c", etag: "1", bytes: 10, stored: true),
        .lookupTag(key: "b", expected: nil),
      ],
      keys: ["a", "c"]),
    Scenario(
      name: "an entry over the capacity is not stored and drops the old one", capacity: 20,
      steps: [
        .store(key: "a", etag: "1", bytes: 5, stored: true),
        .store(key: "b", etag: "1", bytes: 5, stored: true),
        .store(key: "a", etag: "2", bytes: 19, stored: false),
        .lookupTag(key: "a", expected: nil),
      ],
      keys: ["b"]),
    Scenario(
      name: "an entry of exactly the capacity is stored alone", capacity: 12,
      steps: [
        .store(key: "a", etag: "1", bytes: 3, stored: true),
        .store(key: "b", etag: "1", bytes: 10, stored: true),
      ],
      keys: ["b"]),
    Scenario(
      name: "replacing an entry frees its old cost", capacity: 24,
      steps: [
        .store(key: "a", etag: "1", bytes: 10, stored: true),
        .store(key: "b", etag: "1", bytes: 10, stored: true),
        .store(key: "a", etag: "2", bytes: 10, stored: true),
        .lookupData(key: "a", etag: "2", expectedBytes: 10),
      ],
      keys: ["b", "a"]),
    Scenario(
      name: "tags without bodies", capacity: 10,
      steps: [
        .store(key: "a", etag: "1", bytes: nil, stored: true),
        .lookupData(key: "a", etag: "1", expectedBytes: nil),
        .lookupTag(key: "a", expected: "1"),
      ],
      keys: ["a"]),
    Scenario(
      name: "lowering the capacity evicts at once", capacity: 100,
      steps: [
        .store(key: "a", etag: "1", bytes: 10, stored: true),
        .store(key: "b", etag: "1", bytes: 10, stored: true),
        .store(key: "c", etag: "1", bytes: 10, stored: true),
        .capacity(25),
      ],
      keys: ["b", "c"]),
    Scenario(
      name: "removal", capacity: 100,
      steps: [
        .store(key: "a", etag: "1", bytes: 10, stored: true),
        .remove(key: "a"),
        .remove(key: "never"),
      ],
      keys: []),
    Scenario(
      name: "zero capacity stores nothing", capacity: 0,
      steps: [.store(key: "a", etag: "1", bytes: 0, stored: false)],
      keys: []),
  ]

  @Test(arguments: scenarios)
  func scenario(_ scenario: Scenario) {
    var cache = ETagCache(capacity: scenario.capacity)
    for (index, step) in scenario.steps.enumerated() {
      switch step {
      case .store(let key, let etag, let bytes, let stored):
        let data = bytes.map { Data(repeating: 7, count: $0) }
        let answer = cache.store(etag: etag, data: data, forKey: key)
        #expect(answer == stored, "step \(index)")
      case .lookupTag(let key, let expected):
        let tag = cache.etag(forKey: key)
        #expect(tag == expected, "step \(index)")
      case .lookupData(let key, let etag, let expectedBytes):
        let data = cache.data(forKey: key, etag: etag)
        #expect(data?.count == expectedBytes, "step \(index)")
      case .remove(let key):
        cache.removeEntry(forKey: key)
      case .capacity(let capacity):
        cache.capacity = capacity
      }
      #expect(cache.totalCost <= cache.capacity, "step \(index)")
      #expect(cache.totalCost == cache.entries.values.map(\.cost).reduce(0, +), "step \(index)")
    }
    #expect(cache.keysByRecency == scenario.keys)
  }

  @Test func costCountsKeyTagAndBody() {
    #expect(ETagCache.cost(key: "http://h/x", etag: "W/\"t\"", data: Data(count: 100)) == 10 + 5 + 100)
    #expect(ETagCache.cost(key: "k", etag: "t", data: nil) == 2)
  }

  @Test func neverGrowsPastItsCapacityUnderPressure() {
    var cache = ETagCache(capacity: 10_000)
    var generator = SystemRandomNumberGenerator()
    for index in 0..<2_000 {
      let size = Int.random(in: 0...3_000, using: &generator)
      cache.store(etag: "\"\(index)\"", data: Data(count: size), forKey: "k\(index % 97)")
      if index % 5 == 0 { _ = cache.etag(forKey: "k\(Int.random(in: 0..<97, using: &generator))") }
      #expect(cache.totalCost <= 10_000)
    }
  }
}
