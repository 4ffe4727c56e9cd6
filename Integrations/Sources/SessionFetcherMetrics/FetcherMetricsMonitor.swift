import CoreMetrics
import FetcherMonitorSupport
import FetcherService
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A ``FetcherEventMonitor`` that records swift-metrics counters, timers and gauges for fetches,
/// with OpenTelemetry HTTP-client semantic-convention names and attributes where they exist.
///
/// ```swift
/// let metrics = FetcherMetricsMonitor()        // MetricsSystem.factory
/// SessionFetcher.addGlobalEventMonitor(metrics)
/// metrics.observeThrottle(of: service)         // the waiting-fetchers gauge
/// ```
///
/// | metric | kind | dimensions |
/// | --- | --- | --- |
/// | `http.client.request.duration` (OTel) | timer, seconds | `http.request.method`, `server.address`, `server.port`, `http.response.status_code` (when there is one), `error.type` (on failure) |
/// | `http.client.request.body.size` (OTel) | recorder, bytes | `http.request.method`, `server.address` |
/// | `http.client.response.body.size` (OTel) | recorder, bytes | `http.request.method`, `server.address` |
/// | `http.client.requests` | counter | `http.request.method`, `server.address`, `http.response.status_class` (`2xx`…`5xx`, or `error` without a response) |
/// | `http.client.request.body.sent` / `http.client.response.body.received` | counters, bytes | `server.address` |
/// | `sessionfetcher.retries` | counter | `http.request.method`, `server.address` |
/// | `sessionfetcher.throttle.waiting` | gauge | `server.address` (fetchers of observed services waiting in the per-host throttle) |
///
/// A fetch is counted once, when it ends, with its final status; its duration spans every attempt
/// and retry delay, as OTel's duration of a client request with resends does.
///
/// **Never in the fetch's way.** Event methods take a snapshot; the metric objects are made and
/// updated on the monitor's own serial queue, so a slow metrics backend cannot hold up a fetch
/// (beyond `bufferCapacity` pending updates, newer ones are dropped and counted in
/// ``droppedUpdateCount``). ``flush()`` waits for the updates reported so far.
public final class FetcherMetricsMonitor: FetcherEventMonitor {
  private struct State: Sendable {
    var facts: RequestFacts
  }

  private let factory: any MetricsFactory
  private let tracker = FetchTracker<State>()
  private let pump: EventPump
  private let services = ObservedServices()

  /// Creates a monitor that records through `factory`.
  ///
  /// - Parameters:
  ///   - factory: the metrics backend; default `MetricsSystem.factory` (what
  ///     `MetricsSystem.bootstrap` installed).
  ///   - bufferCapacity: how many updates may wait for a slow backend before newer ones are
  ///     dropped (default 10,000).
  public init(factory: (any MetricsFactory)? = nil, bufferCapacity: Int = 10_000) {
    self.factory = factory ?? MetricsSystem.factory
    self.pump = EventPump(label: "SessionFetcherMetrics.FetcherMetricsMonitor", capacity: bufferCapacity)
  }

  /// Updates dropped because the backend fell behind by `bufferCapacity` updates.
  public var droppedUpdateCount: Int { pump.droppedCount }

  /// Returns once every update of the events reported so far reached the backend.
  public func flush() async {
    await pump.waitUntilIdle()
  }

  /// Reports the fetchers of `service` that wait in its per-host throttle as the
  /// `sessionfetcher.throttle.waiting` gauge, per host. The gauge is refreshed whenever a fetch
  /// begins, sends a request or ends, and by ``refreshThrottleGauges()``. The service is held
  /// weakly.
  public func observeThrottle(of service: FetcherService) {
    services.add(service)
    refreshThrottleGauges()
  }

  /// Reads the throttle queues of the observed services now (off the caller's thread) and updates
  /// the gauges; a host whose queue emptied is set to 0.
  public func refreshThrottleGauges() {
    guard services.hasAny else { return }
    pump.submit { [self] in
      let waiting = services.waitingByHost()
      for host in services.hostsToReport(waiting) {
        Gauge(
          label: "sessionfetcher.throttle.waiting", dimensions: [("server.address", host)], factory: factory
        )
        .record(waiting[host] ?? 0)
      }
    }
  }

  // MARK: - FetcherEventMonitor

  /// Starts timing the fetch.
  public func fetcherDidBegin(_ fetcher: SessionFetcher) {
    tracker.begin(fetcher, extra: State(facts: RequestFacts(fetcher.request)))
    refreshThrottleGauges()
  }

  /// Notes the request (a delayed fetcher leaves the throttle when it sends).
  public func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) {
    guard tracker.willSend(fetcher) != nil else { return }
    let facts = RequestFacts(request)
    tracker.update(fetcher) { $0.extra.facts = facts }
    refreshThrottleGauges()
  }

  /// Notes a redirect, so that the next request is not taken for a new attempt.
  public func fetcher(
    _ fetcher: SessionFetcher, willRedirectFrom response: HTTPURLResponse, to request: URLRequest
  ) {
    tracker.update(fetcher) { $0.redirectPending = true }
  }

  /// Counts a retry.
  public func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {
    guard
      let entry = tracker.update(
        fetcher,
        { entry -> FetchTracker<State>.Entry in
          entry.retryPending = true
          return entry
        })
    else { return }
    let facts = entry.extra.facts
    pump.submit { [self] in
      Counter(
        label: "sessionfetcher.retries",
        dimensions: [("http.request.method", facts.method), ("server.address", facts.host ?? "")],
        factory: factory
      ).increment()
    }
  }

  /// Records the fetch's count, duration and sizes.
  public func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {
    guard let entry = tracker.end(fetcher) else { return }
    let duration = ContinuousClock.now - entry.start
    let outcome = Outcome(fetcher: fetcher, error: error)
    let facts = entry.extra.facts
    pump.submit { [self] in
      let host = facts.host ?? ""
      var durationDimensions = [("http.request.method", facts.method), ("server.address", host)]
      if let port = facts.port { durationDimensions.append(("server.port", String(port))) }
      if outcome.statusCode > 0 {
        durationDimensions.append(("http.response.status_code", String(outcome.statusCode)))
      }
      if let errorType = outcome.errorType { durationDimensions.append(("error.type", errorType)) }
      let (seconds, attoseconds) = duration.components
      let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
      Timer(
        label: "http.client.request.duration", dimensions: durationDimensions, preferredDisplayUnit: .seconds,
        factory: factory
      ).recordNanoseconds(nanoseconds)
      Counter(
        label: "http.client.requests",
        dimensions: [
          ("http.request.method", facts.method), ("server.address", host),
          ("http.response.status_class", outcome.statusClass),
        ],
        factory: factory
      ).increment()
      let sizeDimensions = [("http.request.method", facts.method), ("server.address", host)]
      Recorder(label: "http.client.request.body.size", dimensions: sizeDimensions, factory: factory)
        .record(outcome.bytesSent)
      Recorder(label: "http.client.response.body.size", dimensions: sizeDimensions, factory: factory)
        .record(outcome.bytesReceived)
      Counter(
        label: "http.client.request.body.sent", dimensions: [("server.address", host)], factory: factory
      )
      .increment(by: Int64(outcome.bytesSent))
      Counter(
        label: "http.client.response.body.received", dimensions: [("server.address", host)], factory: factory
      ).increment(by: Int64(outcome.bytesReceived))
    }
    refreshThrottleGauges()
  }
}

/// The services whose throttles are reported, held weakly, and the hosts reported so far.
private final class ObservedServices: @unchecked Sendable {
  private struct WeakService {
    weak var service: FetcherService?
  }

  private let lock = NSLock()
  private var services: [WeakService] = []
  private var reportedHosts: Set<String> = []

  func add(_ service: FetcherService) {
    lock.lock()
    defer { lock.unlock() }
    services.removeAll { $0.service == nil || $0.service === service }
    services.append(WeakService(service: service))
  }

  var hasAny: Bool {
    lock.lock()
    defer { lock.unlock() }
    return !services.isEmpty
  }

  /// Fetchers waiting per host, over every observed service.
  func waitingByHost() -> [String: Int] {
    lock.lock()
    let live = services.compactMap(\.service)
    lock.unlock()
    var waiting: [String: Int] = [:]
    for service in live {
      for (host, fetchers) in service.delayedFetchersByHost {
        waiting[host, default: 0] += fetchers.count
      }
    }
    return waiting
  }

  /// The hosts to set: those waiting now and those reported before (which may have dropped to 0).
  func hostsToReport(_ waiting: [String: Int]) -> Set<String> {
    lock.lock()
    defer { lock.unlock() }
    let hosts = reportedHosts.union(waiting.keys)
    reportedHosts = Set(waiting.keys)
    return hosts
  }
}
