import FetcherService
import Foundation
import SessionFetcher

/// The SDK's download task: an object saved to a file, with pause and resume. Pausing stops the
/// fetch; `resumeDataBlock` hands over the token that continues it (as GTM's does), and resuming
/// makes a fetcher from that token, which asks the server for the rest with `Range` and `If-Range`
/// and appends it to the part file.
final class ObjectDownload: Sendable {
  private let client: StorageClient
  private let name: String
  private let destination: URL
  private let state = ExampleLock((token: Data?.none, bytesBeforePause: Int64(0)))

  init(client: StorageClient, name: String, destination: URL) {
    self.client = client
    self.name = name
    self.destination = destination
  }

  /// True once a pause left a resume token.
  var isPaused: Bool { state.withLock { $0.token != nil } }

  /// The bytes on disk when the download was paused.
  var bytesBeforePause: Int64 { state.withLock { $0.bytesBeforePause } }

  /// Starts the download and pauses it once `pauseAt` bytes have arrived (the tour's stand-in for a
  /// user's pause button). Returns when the download was paused or has finished.
  func start(pausingAt pauseAt: Int) async throws {
    let fetcher = client.service.fetcher(url: client.mediaURL(name))
    fetcher.destinationFileURL = destination
    fetcher.stopFetchingTriggersCompletionHandler = true
    fetcher.resumeDataBlock = { [state] token in state.withLock { $0.token = token } }
    fetcher.downloadProgressBlock = { [state, weak fetcher] _, written, _ in
      guard written >= pauseAt, let fetcher else { return }
      state.withLock { $0.bytesBeforePause = written }
      fetcher.stopFetching()
    }
    do {
      _ = try await fetcher.beginFetch()
    } catch SessionFetcherError.cancelled where isPaused {
      return
    } catch {
      throw StorageError(error, object: name)
    }
  }

  /// Continues a paused download into the same destination.
  func resume() async throws {
    guard let token = state.withLock({ $0.token }), let fetcher = client.service.fetcher(resumeData: token)
    else {
      throw TourFailure("nothing to resume")
    }
    do {
      _ = try await fetcher.beginFetch()
    } catch {
      throw StorageError(error, object: name)
    }
    state.withLock { $0.token = nil }
  }
}
