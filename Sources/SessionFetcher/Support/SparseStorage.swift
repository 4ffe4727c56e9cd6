extension Dictionary {
  /// The capacity a dictionary keeps however few entries it holds: below it, storage is never
  /// given back (a dictionary that holds a handful of entries at a time keeps its storage, and the
  /// hot path allocates nothing).
  package static var sparseStorageFloor: Int { 64 }

  /// Gives back the storage of a dictionary that grew far past what it holds now: past
  /// ``sparseStorageFloor`` and more than eight times its count, its entries move to storage sized
  /// for twice their count.
  ///
  /// Swift's dictionaries never shrink when entries are removed, so a table of the fetches in
  /// flight would otherwise keep the storage of its largest burst (thousands of stopped fetches)
  /// for the life of the process. Call it after removing entries; the check is two comparisons, and
  /// the move happens only after the count fell by a factor of four since the last one.
  package mutating func releaseSparseStorage() {
    guard capacity > Self.sparseStorageFloor, count * 8 < capacity else { return }
    var smaller = Self(minimumCapacity: count * 2)
    for (key, value) in self { smaller[key] = value }
    self = smaller
  }
}
