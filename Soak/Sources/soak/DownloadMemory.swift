import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SoakSupport

/// Where a process's memory goes while large downloads go to files: `rounds` rounds of `parallel`
/// downloads of 64 MiB at once through one service, with a given download window. Prints peak RSS
/// (sampled every 50 ms), malloc's account at the end, and RSS after `malloc_trim(0)`.
///
///     soak --download-memory PARALLEL [--window MIB] [--engine urlSession|libcurl]
struct DownloadMemoryRun {
  let parallel: Int
  let rounds: Int
  let windowMiB: Int64
  let engine: FetcherEngine

  func run() throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("soak-dl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let service = FetcherService()
    service.allowLocalhostRequest = true
    service.engine = engine
    service.callbackQueue = DispatchQueue(label: "soak.downloads")
    let peak = Guarded<Int64>(0)
    let sampling = Guarded(true)
    Thread.detachNewThread {
      while sampling.with({ $0 }) {
        let rss = residentBytes()
        peak.with { $0 = max($0, rss) }
        Thread.sleep(forTimeInterval: 0.05)
      }
    }
    say("== \(rounds) × \(parallel) downloads of 64 MiB, window \(windowMiB) MiB, engine \(engine)")
    var failed = 0
    for round in 0..<rounds {
      let group = DispatchGroup()
      let failures = Guarded(0)
      for index in 0..<parallel {
        let fetcher = service.fetcher(url: server.url("/bytes/\(64 << 20)"))
        fetcher.destinationFileURL = folder.appendingPathComponent("r\(round)-\(index).bin")
        fetcher.downloadWindowLength = windowMiB << 20
        group.enter()
        fetcher.beginFetch { _, error in
          if error != nil { failures.with { $0 += 1 } }
          group.leave()
        }
      }
      group.wait()
      failed += failures.with { $0 }
      for index in 0..<parallel {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("r\(round)-\(index).bin"))
      }
    }
    sampling.with { $0 = false }
    let heap = MallocFigures.current()
    say("failed: \(failed)")
    say("RSS at the end: \(megabytes(residentBytes())), peak \(megabytes(peak.with { $0 }))")
    if let heap {
      say(
        "malloc: \(heap.arenas) arenas took \(megabytes(heap.fromSystem)), \(megabytes(heap.freeKept)) of it free but kept; \(megabytes(heap.mapped)) mmapped"
      )
    }
    say("RSS after malloc_trim: \(megabytes(residentBytesAfterTrim())) (threads \(threadCount()))")
  }
}
