import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(Glibc)
  import Glibc
#endif

/// `timeout-probe trim-threshold ENGINE [opt-out]`: whether freed memory at the end of a thread
/// arena goes back to the system after a fetch on ENGINE (`urlSession` or `libcurl`). Run by
/// `MallocTrimThresholdTests` in a child process, since the setting it checks is the process's.
///
/// After the fetch, it does what FoundationNetworking's copy of a large body does to glibc (a 16 MiB
/// block served by `mmap`, freed, which raises glibc's trim threshold to 32 MiB), then a new thread
/// (so a thread arena) allocates 24 MiB in 64 KiB blocks, writes them and frees them, the last
/// first, so that they become the free end of that arena's heap. Prints
/// `trim-threshold outcome=<HeapReleaseThreshold.outcome> kept=<bytes>`: the resident bytes the
/// process kept of the 24 MiB.
enum TrimThreshold {
  static func run(engine: String, optOut: Bool) -> Never {
    if optOut { SessionFetcher.setsMallocTrimThreshold = false }
    guard let server = try? TestServer() else { TimeoutProbe.fail("no test server") }
    let fetcher = SessionFetcher.fetcher(url: server.url("/bytes/10"))
    fetcher.engine = engine == "libcurl" ? .libcurl : .urlSession
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "trim-threshold")
    let done = DispatchSemaphore(value: 0)
    fetcher.beginFetch { _, error in
      if let error { TimeoutProbe.fail("the fetch failed: \(error)") }
      done.signal()
    }
    guard done.wait(timeout: .now() + 30) == .success else { TimeoutProbe.fail("no completion in 30 s") }

    guard let large = malloc(16 << 20) else { TimeoutProbe.fail("no memory") }
    memset(large, 1, 16 << 20)
    free(large)

    let before = residentBytes()
    let freed = DispatchSemaphore(value: 0)
    // Plain loops over a buffer made first: nothing else may be allocated in the arena after the
    // blocks (a Swift collection's first use can allocate its metadata there), or the blocks would
    // not be the end of its heap.
    let thread = Thread {
      let count = 384
      let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: count)
      var index = 0
      while index < count {
        blocks[index] = malloc(64 << 10)
        if let block = blocks[index] { memset(block, 1, 64 << 10) }
        index += 1
      }
      while index > 0 {
        index -= 1
        free(blocks[index])
      }
      blocks.deallocate()
      freed.signal()
    }
    thread.start()
    guard freed.wait(timeout: .now() + 30) == .success else { TimeoutProbe.fail("the thread never ended") }
    let kept = residentBytes() - before
    let outcome = HeapReleaseThreshold.outcome.map { "\($0)" } ?? "none"
    print("trim-threshold outcome=\(outcome) kept=\(kept)")
    exit(0)
  }

  private static func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
      return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    return 0
  }
}
