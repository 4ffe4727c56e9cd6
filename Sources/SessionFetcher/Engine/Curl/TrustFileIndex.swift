/// Which trust bundle files the libcurl engine keeps (see `CurlTrustStore`): one file per distinct
/// set of roots, at most ``limit`` of them once none of the others is in use, the least recently
/// used going first. A pure value: the store keeps it under its lock and deletes the files it names.
///
/// A file is in use from the moment a transfer is given its path until that transfer closes
/// (libcurl reads the file when it makes a connection), and is never removed while in use. Paths
/// are never given twice: libcurl matches connections and its certificate-store cache by the CA
/// file's path, so a path must always mean the same roots.
package struct TrustFileIndex<Key: Hashable> {
  private struct Entry {
    var path: String
    var lastUse: UInt64
  }

  /// The most files kept once the ones past it are no longer in use.
  package let limit: Int
  private var entries: [Key: Entry] = [:]
  private var keys: [String: Key] = [:]
  /// Transfers using each path now.
  private var users: [String: Int] = [:]
  private var clock: UInt64 = 0
  private var made = 0

  package init(limit: Int) {
    self.limit = max(1, limit)
  }

  /// The files kept.
  package var count: Int { entries.count }

  /// The path kept for `key`, now in use by one more transfer; nil when there is none.
  package mutating func use(_ key: Key) -> String? {
    guard let path = entries[key]?.path else { return nil }
    take(path)
    return path
  }

  /// Whether a file is kept at `path` (it was not removed); if so, it is now in use by one more
  /// transfer.
  package mutating func use(path: String) -> Bool {
    guard keys[path] != nil else { return false }
    take(path)
    return true
  }

  /// The name of the next file, never given before (`roots-0.pem`, `roots-1.pem`…).
  package mutating func nextFileName() -> String {
    defer { made += 1 }
    return "roots-\(made).pem"
  }

  /// Keeps `path` for `key`, in use by the transfer that made it, and returns the paths to delete:
  /// the least recently used files not in use, while more than ``limit`` are kept.
  package mutating func add(_ key: Key, path: String) -> [String] {
    entries[key] = Entry(path: path, lastUse: 0)
    keys[path] = key
    take(path)
    return evict()
  }

  /// One transfer using `path` is over; returns the paths to delete (files left past the limit
  /// while they were in use).
  package mutating func release(_ path: String) -> [String] {
    guard let count = users[path] else { return [] }
    users[path] = count > 1 ? count - 1 : nil
    return evict()
  }

  private mutating func take(_ path: String) {
    clock += 1
    if let key = keys[path] { entries[key]?.lastUse = clock }
    users[path, default: 0] += 1
  }

  private mutating func evict() -> [String] {
    guard entries.count > limit else { return [] }
    let idle = entries.filter { users[$0.value.path] == nil }.sorted { $0.value.lastUse < $1.value.lastUse }
    var removed: [String] = []
    for (key, entry) in idle.prefix(entries.count - limit) {
      entries[key] = nil
      keys[entry.path] = nil
      removed.append(entry.path)
    }
    return removed
  }
}
