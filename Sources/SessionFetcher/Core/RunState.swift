import Foundation

/// What spans the attempts of one fetch, from its begin to its end, and what it reports once it
/// ended: its hop counter, retry backoff, armed timeout, part file, resume and stream state, and its
/// results.
///
/// It is reachable only once the fetch has begun: ``FetcherLifecycle`` makes it with the machine
/// and gives it out (``FetcherLifecycle/run``) in every state after `idle`, from `begin` (or a stop
/// before begin, whose fetch ends at once) to the ended states, so that the results, the timing
/// and the resume token are still readable after the end. Nothing of a fetch can be written
/// before it begins.
///
/// A class, touched only under the fetcher's lock, for the same reason as ``HopState``: a change is
/// made in place, through one reference, without copying anything out of the machine and back.
/// Its fields need no dynamic exclusivity checks: the lock already makes every access exclusive (a
/// checked field of a struct type was copied out whole to read one of its fields).
final class RunState {
  /// The number of the last hop started (across attempts): tells a late event of an earlier hop.
  @exclusivity(unchecked) var hopCount: UInt64 = 0
  /// The retries' backoff, made on the first failure: its delays and window span the attempts.
  @exclusivity(unchecked) var backoff: RetryBackoff?
  /// One authorization refresh per fetch, whichever attempt asked for it.
  @exclusivity(unchecked) var didRefreshAuthorization = false
  /// Whether the accumulate block was given bytes since the last response head: the next 2xx head
  /// (a retry's) tells it to start over.
  @exclusivity(unchecked) var accumulatedSinceResponse = false
  /// The armed timeout check (see `SessionFetcher.timeoutClock`). Outside the exchange: every way
  /// out of `running` disarms it after the transition that decided it.
  @exclusivity(unchecked) var timeoutToken: UInt64?
  /// The download's part file: kept across the retries of an attempt (see `DownloadResume`).
  @exclusivity(unchecked) var partFile: PartFile?
  /// Resumable downloads (see `DownloadResume.swift`): the part file kept for the next attempt
  /// (first the one a resume token given before begin named), and the token a stop hands out.
  @exclusivity(unchecked) var downloadResume = DownloadResumeState()
  /// Streaming (see `SessionFetcher+StreamTransfer.swift`): the consumer, how far it got, and how a
  /// paused transfer continues. Starts from the consumer and windows set before begin.
  @exclusivity(unchecked) var stream = FetcherStreamState()
  /// The temporary file the current attempt's body was read into (see `BodySpool`), deleted when
  /// the next attempt replaces it and when the fetch ends: outside the exchange, which a stop or a
  /// retry leaves before the file is deleted.
  @exclusivity(unchecked) var bodySpoolFile: URL?
  /// Set at begin (an awaiting caller) or by a stop that needs its completion, and read in whatever
  /// state a stop or the completion's delivery finds the fetch.
  @exclusivity(unchecked) var forceCompletionOnStop = false
  /// The fetch keeps its fetcher alive from begin until its completion is delivered.
  @exclusivity(unchecked) var retainedSelf: SessionFetcher?

  // Results: read after the fetch ended, whatever state it ended in.
  @exclusivity(unchecked) var downloadedData: Data?
  @exclusivity(unchecked) var finalError: (any Error)?
  /// The fetch's timing; its `transferMetrics` stay nil here: they are the last exchange's (see
  /// `FetcherStorage.reportedTiming`).
  @exclusivity(unchecked) var timing = FetchTiming()
  /// Made by the first `waitForCompletion(timeout:)` off the main thread; broadcast on delivery.
  @exclusivity(unchecked) var completionWaiters: NSCondition?

  init() {}

  /// Counts `count` body bytes received at `now`: the fetch's total, and the time of its first.
  func countReceived(_ count: Int, at now: Date) {
    if timing.firstByteDate == nil { timing.firstByteDate = now }
    timing.bytesReceived += Int64(count)
  }
}
