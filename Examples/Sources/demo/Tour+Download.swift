import FetcherTesting
import Foundation
import SessionFetcher

extension Tour {
  /// Downloads 3 MB that the server sends in 40 pieces 40 ms apart, straight to a file.
  func showDownload() async throws -> SectionOutcome {
    let size = 3_000_000
    let path = "/drip?bytes=\(size)&chunks=40&interval=40"
    let destination = workFolder.appendingPathComponent("downloads/drip.bin")
    Console.detail("GET \(path) → \(destination.lastPathComponent)")
    let fetcher = makeFetcher(path)
    fetcher.destinationFileURL = destination
    let progress = ProgressReporter()
    fetcher.downloadProgressBlock = { _, written, expected in
      progress.update(written: written, expected: expected)
    }

    defer { progress.finish() }
    _ = try await fetcher.beginFetch()
    progress.finish()

    let saved = try Data(contentsOf: destination)
    try require(saved.count == size, "expected \(size) bytes on disk, found \(saved.count)")
    let expectedChecksum = TestServer.checksum(TestServer.patternBytes(count: size))
    try require(TestServer.checksum(saved) == expectedChecksum, "the saved file differs from what was sent")
    Console.detail(
      "saved \(destination.path) — \(saved.count) bytes (\(Format.bytes(Int64(saved.count)))) in "
        + "\(Format.seconds(fetcher.timing.duration ?? 0)), content verified")
    return .shown
  }
}
