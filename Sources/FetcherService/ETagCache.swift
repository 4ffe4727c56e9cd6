import Foundation

/// Remembered entity tags and, optionally, the bodies they label: a least-recently-used cache
/// bounded by a byte capacity.
///
/// The cost of an entry is the UTF-8 length of its key and tag plus the length of its body, so
/// even a cache of tags alone stays bounded. An entry costing more than the whole capacity is not
/// stored (and replaces nothing: the previous entry for its key is dropped). Storing evicts the
/// least recently used entries until the new one fits, so ``totalCost`` never exceeds
/// ``capacity``.
///
/// A pure value type: ``FetcherService`` keeps one behind its lock.
struct ETagCache {
  struct Entry: Equatable {
    var etag: String
    var data: Data?
    /// The request headers the response's `Vary` named, with the values they had.
    var vary: [String: String?] = [:]
    var cost: Int
    var lastUse: UInt64
  }

  /// The largest total cost, in bytes. Lowering it evicts at once.
  var capacity: Int {
    didSet {
      capacity = max(0, capacity)
      evict(toFit: 0)
    }
  }
  private(set) var entries: [String: Entry] = [:]
  /// The sum of the entries' costs.
  private(set) var totalCost = 0
  private var clock: UInt64 = 0

  init(capacity: Int) {
    self.capacity = max(0, capacity)
  }

  /// The cost of an entry.
  static func cost(key: String, etag: String, data: Data?) -> Int {
    key.utf8.count + etag.utf8.count + (data?.count ?? 0)
  }

  /// The keys, least recently used first.
  var keysByRecency: [String] {
    entries.sorted { $0.value.lastUse < $1.value.lastUse }.map(\.key)
  }

  /// The remembered tag for `key`; marks the entry as used.
  mutating func etag(forKey key: String) -> String? {
    guard entries[key] != nil else { return nil }
    touch(key)
    return entries[key]?.etag
  }

  /// The headers the entry for `key` varies on, with the values it was stored with.
  func vary(forKey key: String) -> [String: String?]? { entries[key]?.vary }

  /// The cached body for `key` if it is labelled `etag`; marks the entry as used.
  mutating func data(forKey key: String, etag: String) -> Data? {
    guard let entry = entries[key], entry.etag == etag, let data = entry.data else { return nil }
    touch(key)
    return data
  }

  /// Remembers `etag` (and `data`, if given) for `key`, replacing any previous entry.
  /// Returns false when the entry costs more than the capacity and was not stored.
  @discardableResult
  mutating func store(etag: String, data: Data?, forKey key: String, vary: [String: String?] = [:]) -> Bool {
    removeEntry(forKey: key)
    let cost = ETagCache.cost(key: key, etag: etag, data: data)
    guard cost <= capacity else { return false }
    evict(toFit: cost)
    clock += 1
    entries[key] = Entry(etag: etag, data: data, vary: vary, cost: cost, lastUse: clock)
    totalCost += cost
    return true
  }

  /// Forgets the entry for `key`.
  mutating func removeEntry(forKey key: String) {
    guard let entry = entries.removeValue(forKey: key) else { return }
    totalCost -= entry.cost
  }

  /// Forgets every entry.
  mutating func removeAll() {
    entries = [:]
    totalCost = 0
  }

  private mutating func touch(_ key: String) {
    clock += 1
    entries[key]?.lastUse = clock
  }

  /// Evicts least recently used entries until `cost` more fits. Linear per eviction: evictions
  /// are rare next to lookups, and the cache holds at most a few thousand bodies.
  private mutating func evict(toFit cost: Int) {
    while totalCost + cost > capacity,
      let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
    {
      removeEntry(forKey: oldest)
    }
  }
}
