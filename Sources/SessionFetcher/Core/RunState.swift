import Foundation

/// What spans the attempts of one fetch, from its begin to its end, and what it reports once it
/// ended: its hop counter, retry backoff, armed timeout, part file, resume and stream state, and its
/// results.
///
/// It exists only once the fetch has begun: ``FetcherLifecycle`` makes it on `begin` (or on a stop
/// before begin, whose fetch ends at once), every state after `idle` carries it, the running
/// exchange as its ``HopState/run``, and the ended states keep it, so that the results, the timing
/// and the resume token are still readable after the end. Nothing of a fetch can be written
/// before it begins.
///
/// A class, touched only under the fetcher's lock, for the same reason as ``HopState``: a change is
/// made in place, through one reference the states hand on, without copying the payload out of the
/// state and back.
final class RunState {
  /// The number of the last hop started (across attempts): tells a late event of an earlier hop.
  var hopCount: UInt64 = 0
  /// The retries' backoff, made on the first failure: its delays and window span the attempts.
  var backoff: RetryBackoff?
  /// One authorization refresh per fetch, whichever attempt asked for it.
  var didRefreshAuthorization = false
  /// Whether the accumulate block was given bytes since the last response head: the next 2xx head
  /// (a retry's) tells it to start over.
  var accumulatedSinceResponse = false
  /// The armed timeout check (see `SessionFetcher.timeoutClock`). Outside the exchange: every way
  /// out of `running` disarms it after the transition that decided it.
  var timeoutToken: UInt64?
  /// The download's part file: kept across the retries of an attempt (see `DownloadResume`).
  var partFile: PartFile?
  /// Resumable downloads (see `DownloadResume.swift`): the part file kept for the next attempt
  /// (first the one a resume token given before begin named), and the token a stop hands out.
  var downloadResume = DownloadResumeState()
  /// Streaming (see `SessionFetcher+StreamTransfer.swift`): the consumer, how far it got, and how a
  /// paused transfer continues. Starts from the consumer and windows set before begin.
  var stream = FetcherStreamState()
  /// The temporary file the current attempt's body was read into (see `BodySpool`), deleted when
  /// the next attempt replaces it and when the fetch ends: outside the exchange, which a stop or a
  /// retry leaves before the file is deleted.
  var bodySpoolFile: URL?
  /// Set at begin (an awaiting caller) or by a stop that needs its completion, and read in whatever
  /// state a stop or the completion's delivery finds the fetch.
  var forceCompletionOnStop = false
  /// The fetch keeps its fetcher alive from begin until its completion is delivered.
  var retainedSelf: SessionFetcher?

  // Results: read after the fetch ended, whatever state it ended in.
  var downloadedData: Data?
  var finalError: (any Error)?
  /// The fetch's timing; its `transferMetrics` stay nil here: they are the last exchange's (see
  /// `FetcherStorage.reportedTiming`).
  var timing = FetchTiming()
  /// Made by the first `waitForCompletion(timeout:)` off the main thread; broadcast on delivery.
  var completionWaiters: NSCondition?

  init() {}
}
