import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
  import TestTraits
#endif

/// The fetcher's disk work (opening, writing, renaming, deleting its part file) runs after its lock
/// is released: a thread reading the fetcher, or stopping it, never waits for the disk.
@Suite("Disk work outside the fetcher's lock", .ownThreads)
struct DiskWorkOutsideLockTests {
  /// How long a call may take while the disk is held. Generous for a loaded machine: a call that
  /// waited for the disk would wait until the test lets go of it, far longer.
  static let bound: TimeInterval = 2

  /// Runs `body` on another thread: its result, or nil when it has not returned within `bound`.
  static func inTime<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value? {
    let result = Recorder<Value>()
    DispatchQueue.global().async { result.append(body()) }
    guard await eventually(timeout: bound, { result.count == 1 }) else { return nil }
    return result.values.first
  }

  /// Gives `fetcher` a session of its own: held disk work holds the engine thread that runs the
  /// session's callbacks, which the fetchers of other tests would wait for on a shared session.
  static func useOwnSession(_ fetcher: SessionFetcher) {
    fetcher.configurationBlock = { _ in }
  }

  /// While a write of the part file is held, `isFetching`, `downloadedLength` and `stopFetching()`
  /// answer; once the write is let go of, the fetch ends as stopped, with nothing left on disk.
  @Test func aHeldWriteBlocksNeitherReadersNorStop() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = server.fetcher("/bytes/300000")
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    fetcher.stopFetchingTriggersCompletionHandler = true
    Self.useOwnSession(fetcher)
    let heldWrites = Recorder<Int>()
    let releaseWrite = DispatchSemaphore(value: 0)
    fetcher.storage.withLock {
      $0.config.partFileWillWrite = { size in
        // The first write waits until the test lets go of it (30 s at most: never a hang).
        guard heldWrites.appendIfEmpty(size) else { return }
        _ = releaseWrite.wait(timeout: .now() + 30)
      }
    }
    let completions = Recorder<SessionFetcherError?>()
    fetcher.beginFetch { _, error in completions.append(error as? SessionFetcherError) }
    #expect(await eventually { heldWrites.count == 1 })

    let fetching = await Self.inTime { fetcher.isFetching }
    let length = await Self.inTime { fetcher.downloadedLength }
    let stopped = await Self.inTime { fetcher.stopFetching() } != nil
    releaseWrite.signal()

    #expect(fetching == true)
    // The chunk being written is counted already (the write is what is held).
    #expect(length == Int64(heldWrites.values.first ?? -1))
    #expect(stopped)
    #expect(await eventually { completions.count == 1 })
    #expect(completions.values == [.cancelled])
    #expect(!fetcher.isFetching)
    // The part file the held write was writing is deleted once that write is done.
    #expect(await eventually { DownloadTests.contents(folder).isEmpty })
    await drain(fetcher.callbackQueue)
    #expect(completions.count == 1)
  }

  /// A kept part file swapped for a FIFO after its resume token was checked: opening it for
  /// writing waits for a reader. Meanwhile the fetcher answers and stops; once a reader comes, the
  /// open finds no regular file, and the fetch ends as stopped without touching it or the
  /// destination.
  @Test func aHeldOpenBlocksNeitherReadersNorStop() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let token = try await ResumeTokenTests.realToken(server, "/r", folder: folder)
    ResumeTokenTests.answerRoute(server, "/r", status: 206)
    let partFile = try #require((token["partFileURL"] as? String).flatMap(URL.init(string:)))
    let fetcher = try DownloadResumeTests.resuming(try ResumeTokenTests.data(token))
    fetcher.stopFetchingTriggersCompletionHandler = true
    Self.useOwnSession(fetcher)
    try FileManager.default.removeItem(at: partFile)
    #expect(mkfifo(partFile.path, 0o600) == 0)
    let completions = Recorder<SessionFetcherError?>()
    fetcher.beginFetch { _, error in completions.append(error as? SessionFetcherError) }

    // The response head is seen once it has arrived: its part file is being opened then.
    var answered = false
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      guard let seen = await Self.inTime({ fetcher.response != nil }) else { break }
      answered = seen
      if seen { break }
      try await Task.sleep(nanoseconds: 10_000_000)
    }
    #expect(answered)
    let fetching = await Self.inTime { fetcher.isFetching }
    let length = await Self.inTime { fetcher.downloadedLength }
    let stopped = await Self.inTime { fetcher.stopFetching() } != nil

    // A reader lets the open return.
    let reader = open(partFile.path, O_RDONLY | O_NONBLOCK)
    #expect(reader >= 0)
    #expect(fetching == true)
    #expect(length != nil)
    #expect(stopped)
    #expect(await eventually { completions.count == 1 })
    #expect(completions.values == [.cancelled])
    #expect(!fetcher.isFetching)
    // Nothing written: the FIFO is left as it was, and no destination appeared.
    #expect(DownloadTests.contents(folder) == [partFile.lastPathComponent])
    // The FIFO goes before its reader: an open that starts from now on finds no file, rather
    // than waiting for a reader forever.
    try FileManager.default.removeItem(at: partFile)
    if reader >= 0 { close(reader) }
  }
}
