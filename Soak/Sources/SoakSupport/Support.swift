import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// What the programs of Soak/ share: a lock-protected value, a seeded generator, and the process's
// memory and threads as /proc and glibc see them.

/// A lock-protected value.
public final class Guarded<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  public init(_ value: Value) { self.value = value }

  public func with<Result>(_ body: (inout Value) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}

/// A small deterministic generator, so that a seed repeats a workload.
public struct SplitMix64: RandomNumberGenerator {
  public var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// `count` pseudo-random bytes.
  public mutating func bytes(_ count: Int) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
      let words = raw.bindMemory(to: UInt64.self)
      for index in 0..<words.count { words[index] = next() }
      for index in words.count * 8..<count { raw[index] = UInt8(truncatingIfNeeded: next()) }
    }
    return data
  }
}

/// Resident set size of this process, from /proc (0 where unavailable).
public func residentBytes() -> Int64 {
  guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
  for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
    let digits = line.filter(\.isNumber)
    return (Int64(digits) ?? 0) * 1024
  }
  return 0
}

/// RSS after glibc's `malloc_trim(0)` gave malloc's free pages back to the system (looked up at
/// run time; RSS as it is where there is none): when RSS falls a long way, the growth was memory
/// malloc kept, not memory still in use.
public func residentBytesAfterTrim() -> Int64 {
  typealias Trim = @convention(c) (Int) -> Int32
  if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
  }
  return residentBytes()
}

/// glibc's own account of the heap (`malloc_info`): how many arenas, what they took from the
/// system, how much of that is free but kept, and the blocks served by mmap. Nil where there is no
/// glibc. Tells memory in use from memory malloc keeps.
public struct MallocFigures {
  public var arenas = 0
  public var fromSystem: Int64 = 0
  public var freeKept: Int64 = 0
  public var mapped: Int64 = 0

  public static func current() -> MallocFigures? {
    typealias Info = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return nil }
    var buffer: UnsafeMutablePointer<CChar>?
    var size = 0
    guard let stream = open_memstream(&buffer, &size) else { return nil }
    let status = unsafeBitCast(symbol, to: Info.self)(0, stream)
    fclose(stream)
    defer { free(buffer) }
    guard status == 0, let buffer else { return nil }
    let xml = String(cString: buffer)
    var figures = MallocFigures()
    figures.arenas = xml.components(separatedBy: "<heap nr=").count - 1
    // The totals follow the last heap.
    let totals = xml.components(separatedBy: "</heap>").last ?? ""
    for line in totals.split(separator: "\n") {
      guard let sizeRange = line.range(of: "size=\""),
        let value = Int64(line[sizeRange.upperBound...].prefix { $0.isNumber })
      else { continue }
      if line.contains("<total type=\"fast\"") || line.contains("<total type=\"rest\"") {
        figures.freeKept += value
      } else if line.contains("<total type=\"mmap\"") {
        figures.mapped = value
      } else if line.contains("<system type=\"current\"") {
        figures.fromSystem = value
      }
    }
    return figures
  }
}

/// The threads of this process, from /proc (0 where unavailable).
public func threadCount() -> Int {
  guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
  for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
    return Int(line.filter(\.isNumber)) ?? 0
  }
  return 0
}

public func megabytes(_ bytes: Int64) -> String {
  String(format: "%.1f MB", Double(bytes) / 1_048_576)
}

/// Prints a line at once (unbuffered: the soak's progress shows while it runs, also into a pipe).
public func say(_ text: String) {
  FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
