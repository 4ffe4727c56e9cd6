import Foundation

/// How a test block's body is cut into the pieces a stubbed fetch delivers
/// (``SessionFetcher/testBlockAccumulateDataChunkCount``).
package enum TestBlockChunks {
  /// `data` in `count` pieces as even as can be, the first ones one byte longer; fewer pieces
  /// (one byte each) when `data` is shorter than `count`; one piece for a count below 1; none for
  /// empty data.
  package static func split(_ data: Data, into count: Int) -> [Data] {
    guard !data.isEmpty else { return [] }
    let pieces = min(max(1, count), data.count)
    let base = data.count / pieces
    let longer = data.count % pieces
    var result: [Data] = []
    result.reserveCapacity(pieces)
    var start = data.startIndex
    for index in 0..<pieces {
      let end = start + base + (index < longer ? 1 : 0)
      result.append(Data(data[start..<end]))
      start = end
    }
    return result
  }
}
