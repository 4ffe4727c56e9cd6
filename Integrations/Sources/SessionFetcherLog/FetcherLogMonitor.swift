import FetcherMonitorSupport
import Foundation
import HTTPLogging
import Logging
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A ``FetcherEventMonitor`` that writes the life of each fetch to a swift-log `Logger`.
///
/// ```swift
/// var logger = Logger(label: "com.example.http")
/// logger.logLevel = .debug
/// SessionFetcher.addGlobalEventMonitor(FetcherLogMonitor(logger: logger))
/// ```
///
/// Each fetch's messages carry structured metadata: `fetch.id` (unique in the process, to follow
/// one fetch), `http.request.method`, `url.full` (redacted), `server.address`, `attempt`, and as
/// they become known `http.response.status_code`, `duration`, `http.request.body.size`,
/// `http.response.body.size`, `retry.delay`, `error.type` and `error`. Levels:
///
/// | event | level |
/// | --- | --- |
/// | the fetch began | debug |
/// | a request goes out (each attempt, redirect hop, Range window; with the redacted headers) | trace |
/// | a response head arrived | trace |
/// | a redirect is followed | debug |
/// | an attempt failed and is retried after a delay | warning |
/// | the fetch succeeded | debug |
/// | the fetch was stopped or cancelled | debug |
/// | the fetch failed with an HTTP status 4xx (3xx) | warning |
/// | the fetch failed with a 5xx or a transport error | error |
///
/// **Redaction.** URLs, header values and error texts go through the same ``LogRedactor`` as the
/// file logs of HTTPLogging (`SessionFetcher.logRedactor` unless you pass one): secret headers,
/// query items and `name=value` pairs are replaced, and each secret found is scrubbed from the
/// rest of that message. Bodies are never written to the `Logger`.
///
/// **Never in the fetch's way.** Event methods only take a snapshot; formatting, redaction and the
/// `Logger` call run on the monitor's own serial queue, so a slow log handler cannot hold up a
/// fetch. If the handler falls behind by `bufferCapacity` messages, newer ones are dropped and
/// counted in ``droppedMessageCount``. ``flush()`` waits until every message so far was handed to
/// the `Logger`.
public final class FetcherLogMonitor: FetcherEventMonitor {
  private struct State: Sendable {
    var facts: RequestFacts
    var comment: String?
  }

  /// The logger messages go to.
  public let logger: Logger
  private let redactorOverride: LogRedactor?
  private let tracker = FetchTracker<State>()
  private let pump: EventPump

  /// Creates a monitor that writes to `logger`.
  ///
  /// - Parameters:
  ///   - logger: where messages go; its level filters them as usual.
  ///   - redactor: the redaction to apply; nil (the default) uses `SessionFetcher.logRedactor` as it
  ///     is when each message is written. Redaction is always on here, whatever
  ///     `SessionFetcher.isLogRedactionEnabled` says.
  ///   - bufferCapacity: how many messages may wait for a slow log handler before newer ones are
  ///     dropped (default 10,000).
  public init(logger: Logger, redactor: LogRedactor? = nil, bufferCapacity: Int = 10_000) {
    self.logger = logger
    self.redactorOverride = redactor
    self.pump = EventPump(label: "SessionFetcherLog.FetcherLogMonitor", capacity: bufferCapacity)
  }

  /// Messages dropped because the log handler fell behind by `bufferCapacity` messages.
  public var droppedMessageCount: Int { pump.droppedCount }

  /// Returns once every message of the events reported so far has been handed to the `Logger`.
  public func flush() async {
    await pump.waitUntilIdle()
  }

  private var redactor: LogRedactor { redactorOverride ?? SessionFetcher.logRedactor }

  /// Redacts `facts` (URL and headers together, so a secret in one is scrubbed from the other) and
  /// `texts`.
  private func redacted(_ facts: RequestFacts, texts: [String] = []) -> LogRedactor.RedactedSummary {
    redactor.summary(url: facts.url, headers: facts.headers, texts: texts)
  }

  private func baseMetadata(id: UInt64, facts: RequestFacts, url: String?, attempt: Int, comment: String?)
    -> Logger.Metadata
  {
    var metadata: Logger.Metadata = [
      "fetch.id": "\(id)",
      "http.request.method": "\(facts.method)",
      "url.full": "\(url ?? "(none)")",
      "attempt": "\(attempt)",
    ]
    if let host = facts.host { metadata["server.address"] = "\(host)" }
    if let comment { metadata["fetch.comment"] = "\(comment)" }
    return metadata
  }

  // MARK: - FetcherEventMonitor

  /// Logs the start of a fetch (debug).
  public func fetcherDidBegin(_ fetcher: SessionFetcher) {
    let state = State(facts: RequestFacts(fetcher.request), comment: fetcher.comment)
    let entry = tracker.begin(fetcher, extra: state)
    pump.submit { [self] in
      let summary = redacted(state.facts)
      logger.debug(
        "fetch began",
        metadata: baseMetadata(
          id: entry.id, facts: state.facts, url: summary.url, attempt: 1, comment: state.comment))
    }
  }

  /// Logs each request as it goes out, with its redacted headers (trace).
  public func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) {
    guard let (entry, kind) = tracker.willSend(fetcher) else { return }
    let facts = RequestFacts(request)
    tracker.update(fetcher) { $0.extra.facts = facts }
    pump.submit { [self] in
      let summary = redacted(facts)
      var metadata = baseMetadata(
        id: entry.id, facts: facts, url: summary.url, attempt: entry.attempt, comment: entry.extra.comment)
      metadata["request.kind"] = "\(kind)"
      metadata["http.request.header"] = .dictionary(summary.headers.mapValues { .string($0) })
      logger.trace("sending request", metadata: metadata)
    }
  }

  /// Logs a response head (trace).
  public func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
    guard let entry = tracker.entry(fetcher) else { return }
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    let contentType = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")
    pump.submit { [self] in
      let summary = redacted(entry.extra.facts)
      var metadata = baseMetadata(
        id: entry.id, facts: entry.extra.facts, url: summary.url, attempt: entry.attempt,
        comment: entry.extra.comment)
      metadata["http.response.status_code"] = "\(status)"
      if let contentType { metadata["http.response.header.content-type"] = "\(contentType)" }
      logger.trace("received response", metadata: metadata)
    }
  }

  /// Logs a redirect that is followed (debug).
  public func fetcher(
    _ fetcher: SessionFetcher, willRedirectFrom response: HTTPURLResponse, to request: URLRequest
  ) {
    guard
      let entry = tracker.update(
        fetcher,
        { entry -> FetchTracker<State>.Entry in
          entry.redirectPending = true
          return entry
        })
    else { return }
    let status = response.statusCode
    let target = RequestFacts(request)
    pump.submit { [self] in
      let summary = redacted(entry.extra.facts)
      var metadata = baseMetadata(
        id: entry.id, facts: entry.extra.facts, url: summary.url, attempt: entry.attempt,
        comment: entry.extra.comment)
      metadata["http.response.status_code"] = "\(status)"
      metadata["redirect.url"] = "\(redacted(target).url ?? "(none)")"
      logger.debug("following redirect", metadata: metadata)
    }
  }

  /// Logs a failed attempt that will be retried, with the delay (warning).
  public func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {
    guard
      let entry = tracker.update(
        fetcher,
        { entry -> FetchTracker<State>.Entry in
          entry.retryPending = true
          return entry
        })
    else { return }
    let errorType = Outcome.errorType(error)
    let errorText = String(describing: error)
    pump.submit { [self] in
      let summary = redacted(entry.extra.facts, texts: [errorText])
      var metadata = baseMetadata(
        id: entry.id, facts: entry.extra.facts, url: summary.url, attempt: entry.attempt,
        comment: entry.extra.comment)
      metadata["retry.delay"] = "\(String(format: "%.3f", delay))"
      metadata["error.type"] = "\(errorType)"
      metadata["error"] = "\(summary.texts.first ?? "")"
      logger.warning("attempt failed, will retry", metadata: metadata)
    }
  }

  /// Logs the end of the fetch with status, bytes and duration (debug on success, warning or error
  /// on failure).
  public func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {
    guard let entry = tracker.end(fetcher) else { return }
    let duration = ContinuousClock.now - entry.start
    let outcome = Outcome(fetcher: fetcher, error: error)
    let cancelled = outcome.errorType == "cancelled"
    pump.submit { [self] in
      let summary = redacted(entry.extra.facts, texts: outcome.errorDescription.map { [$0] } ?? [])
      var metadata = baseMetadata(
        id: entry.id, facts: entry.extra.facts, url: summary.url, attempt: entry.attempt,
        comment: entry.extra.comment)
      metadata["http.response.status_code"] = "\(outcome.statusCode)"
      metadata["duration"] = "\(String(format: "%.3f", duration.seconds))"
      metadata["http.request.body.size"] = "\(outcome.bytesSent)"
      metadata["http.response.body.size"] = "\(outcome.bytesReceived)"
      if outcome.retryCount > 0 { metadata["retries"] = "\(outcome.retryCount)" }
      if let contentType = outcome.contentType {
        metadata["http.response.header.content-type"] = "\(contentType)"
      }
      guard let errorType = outcome.errorType else {
        logger.debug("fetch succeeded", metadata: metadata)
        return
      }
      metadata["error.type"] = "\(errorType)"
      metadata["error"] = "\(summary.texts.first ?? "")"
      if cancelled {
        logger.debug("fetch cancelled", metadata: metadata)
      } else if (300..<500).contains(outcome.statusCode) {
        logger.warning("fetch failed", metadata: metadata)
      } else {
        logger.error("fetch failed", metadata: metadata)
      }
    }
  }
}

extension Duration {
  /// The duration in seconds, as a `Double`.
  fileprivate var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}
