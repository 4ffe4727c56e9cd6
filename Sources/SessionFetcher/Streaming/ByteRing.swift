import Foundation

/// Bytes in arrival order, kept in one block of memory that is reused for the whole stream: what a
/// stream buffers on the URLSession engine.
///
/// FoundationNetworking allocates every chunk it delivers on whichever dispatch thread reads the
/// socket, and glibc serves each thread from an arena of its own. Chunks held in the stream's
/// buffer until a slow consumer takes them then keep several arenas' heaps grown at once, and the
/// free space between the blocks still in use stays resident, several times what is buffered.
/// Copied into a ring on arrival, each
/// chunk goes back to its arena at once; the ring grows to the most ever buffered and is reused,
/// and what the consumer takes is a new block made on its own thread and freed there.
///
/// The block grows with `realloc`, so a block glibc maps by itself (any above its mmap threshold)
/// is remapped rather than copied: a ring of 25 MB grows by a step without holding 50 MB for the
/// moment of a copy.
///
/// Not thread-safe: the stream buffer uses it under its lock only.
package final class ByteRing {
  private var storage: UnsafeMutableRawBufferPointer
  /// Where the oldest byte is.
  private var start = 0
  /// Bytes held.
  package private(set) var count = 0

  /// The smallest block the ring allocates.
  package static let minimumCapacity = 64 * 1024

  package init() {
    storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  }

  deinit {
    free(storage.baseAddress)
  }

  /// The bytes the ring can hold before it grows.
  package var capacity: Int { storage.count }

  /// Appends `data`'s bytes, growing the block if they do not fit.
  package func append(_ data: Data) {
    let length = data.count
    guard length > 0 else { return }
    if capacity - count < length { grow(toHold: count + length) }
    data.withUnsafeBytes { source in
      forEachRun(from: (start + count) % capacity, length: length) { ring, offset in
        UnsafeMutableRawBufferPointer(rebasing: storage[ring])
          .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + ring.count)]))
      }
    }
    count += length
  }

  /// Removes and returns the oldest bytes, at most `limit` of them, as a new `Data`.
  package func take(upTo limit: Int) -> Data {
    let length = min(count, max(0, limit))
    guard length > 0 else { return Data() }
    var taken = Data(capacity: length)
    forEachRun(from: start, length: length) { ring, _ in
      taken.append(contentsOf: UnsafeRawBufferPointer(rebasing: storage[ring]))
    }
    start = (start + length) % capacity
    count -= length
    if count == 0 { start = 0 }
    return taken
  }

  /// The block to move to when `needed` bytes do not fit in `capacity`: twice the size up to
  /// ``growthStep``, then the next multiple of it that holds them. The ring is as big as the most
  /// ever buffered, which a stream's backpressure bounds, and growing by steps keeps a burst just
  /// past a power of two from doubling the memory held for the rest of the stream.
  package static func capacity(toHold needed: Int, from capacity: Int) -> Int {
    let doubled = max(needed, capacity * 2, minimumCapacity)
    guard doubled > growthStep else { return doubled }
    return (needed + growthStep - 1) / growthStep * growthStep
  }

  /// Past this size the ring grows by this many bytes at a time.
  package static let growthStep = 1024 * 1024

  /// Drops every byte held and gives the block back.
  package func removeAll() {
    free(storage.baseAddress)
    storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    start = 0
    count = 0
  }

  /// Moves the bytes held into a block of `target` bytes (at least ``count``) when that is smaller
  /// than the block held: after a burst, the memory it took goes back.
  package func shrink(toCapacity target: Int) {
    let newCapacity = max(count, target)
    guard newCapacity < capacity else { return }
    guard newCapacity > 0 else { return removeAll() }
    move(toCapacity: newCapacity)
  }

  /// Makes the block big enough to hold `needed` bytes, in place where `realloc` can. When the bytes
  /// wrap around, the shorter way to make them contiguous again in the bigger block is taken: the
  /// bytes at the block's start go after the old end, if they fit there and are the fewer, or the
  /// oldest bytes move to the new end.
  private func grow(toHold needed: Int) {
    let oldCapacity = capacity
    let newCapacity = Self.capacity(toHold: needed, from: oldCapacity)
    guard let base = realloc(storage.baseAddress, newCapacity) else {
      fatalError("ByteRing: cannot allocate \(newCapacity) bytes")
    }
    storage = UnsafeMutableRawBufferPointer(start: base, count: newCapacity)
    let oldest = oldCapacity - start
    let wrapped = count - oldest
    guard wrapped > 0 else { return }
    if wrapped <= newCapacity - oldCapacity && wrapped <= oldest {
      (base + oldCapacity).copyMemory(from: base, byteCount: wrapped)
    } else {
      let newStart = newCapacity - oldest
      memmove(base + newStart, base + start, oldest)
      start = newStart
    }
  }

  /// Moves the bytes held, oldest first, to the start of a new block of `newCapacity` bytes (at
  /// least ``count``).
  private func move(toCapacity newCapacity: Int) {
    guard let base = malloc(newCapacity) else {
      fatalError("ByteRing: cannot allocate \(newCapacity) bytes")
    }
    let block = UnsafeMutableRawBufferPointer(start: base, count: newCapacity)
    forEachRun(from: start, length: count) { ring, offset in
      UnsafeMutableRawBufferPointer(rebasing: block[offset..<(offset + ring.count)])
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[ring]))
    }
    free(storage.baseAddress)
    storage = block
    start = 0
  }

  /// Calls `body` with each contiguous range of the block that `length` bytes from ring position
  /// `from` occupy (two when they wrap around), and the offset of that range within the `length`
  /// bytes.
  private func forEachRun(from: Int, length: Int, _ body: (Range<Int>, Int) -> Void) {
    var done = 0
    var position = from
    while done < length {
      let run = min(length - done, capacity - position)
      body(position..<(position + run), done)
      done += run
      position = (position + run) % capacity
    }
  }
}
