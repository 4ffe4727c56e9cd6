/// Which trust bundle files the libcurl engine keeps (see `CurlTrustStore`): one file per distinct
/// set of roots, at most ``limit`` of them once none of the others is in use, the least recently
/// used going first. A pure value: the store keeps it under its lock and closes (in memory) or
/// deletes (on disk) the files it names.
///
/// A file is in use from the moment a transfer is given its path until that transfer closes
/// (libcurl reads the file when it makes a connection), and is never removed while in use. Paths
/// are never given twice: libcurl matches connections and its certificate-store cache by the CA
/// file's path, so a path must always mean the same roots.
///
/// Every transfer that trusts extra roots takes a path and gives it back, so both are one lookup
/// by path; the key (the roots' contents, costly to hash) is looked up only to find a file.
package struct TrustFileIndex<Key: Hashable> {
  private struct File {
    var key: Key
    var lastUse: UInt64
    /// Transfers using the file now.
    var users: Int
  }

  /// The most files kept once the ones past it are no longer in use.
  package let limit: Int
  private var paths: [Key: String] = [:]
  private var files: [String: File] = [:]
  private var clock: UInt64 = 0
  private var made = 0

  package init(limit: Int) {
    self.limit = max(1, limit)
  }

  /// The files kept.
  package var count: Int { files.count }

  /// The path kept for `key`, now in use by one more transfer; nil when there is none.
  package mutating func use(_ key: Key) -> String? {
    guard let path = paths[key] else { return nil }
    _ = use(path: path)
    return path
  }

  /// Whether a file is kept at `path` (it was not removed); if so, it is now in use by one more
  /// transfer.
  package mutating func use(path: String) -> Bool {
    clock += 1
    return Self.take(&files[path], at: clock)
  }

  /// One more user of `file` if it is kept (one lookup: the dictionary's element in place).
  private static func take(_ file: inout File?, at now: UInt64) -> Bool {
    guard file != nil else { return false }
    file!.lastUse = now
    file!.users += 1
    return true
  }

  /// One user fewer of `file` if it is kept and in use.
  private static func letGo(_ file: inout File?) -> Bool {
    guard let users = file?.users, users > 0 else { return false }
    file!.users = users - 1
    return true
  }

  /// The name of the next file, never given before (`roots-0.pem`, `roots-1.pem`…).
  package mutating func nextFileName() -> String {
    defer { made += 1 }
    return "roots-\(made).pem"
  }

  /// Keeps `path` for `key`, in use by the transfer that made it, and returns the paths to delete:
  /// the least recently used files not in use, while more than ``limit`` are kept. A key kept
  /// already now names `path`; its older file stays until it is idle and evicted.
  package mutating func add(_ key: Key, path: String) -> [String] {
    clock += 1
    paths[key] = path
    files[path] = File(key: key, lastUse: clock, users: 1)
    return evict()
  }

  /// One transfer using `path` is over; returns the paths to delete (files left past the limit
  /// while they were in use).
  package mutating func release(_ path: String) -> [String] {
    guard Self.letGo(&files[path]) else { return [] }
    return evict()
  }

  private mutating func evict() -> [String] {
    guard files.count > limit else { return [] }
    let idle = files.filter { $0.value.users == 0 }.sorted { $0.value.lastUse < $1.value.lastUse }
    var removed: [String] = []
    for (path, file) in idle.prefix(files.count - limit) {
      files[path] = nil
      if paths[file.key] == path { paths[file.key] = nil }
      removed.append(path)
    }
    return removed
  }
}
