import FetcherMonitorSupport
import Foundation
import HTTPLogging
import SessionFetcher
import Tracing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A ``FetcherEventMonitor`` that traces each fetch with swift-distributed-tracing: one client span
/// per fetch, an event per request sent (attempt, redirect hop, Range window) and per retry delay,
/// OpenTelemetry HTTP-client attributes, and the error recorded.
///
/// ```swift
/// let tracing = FetcherTracingMonitor()            // InstrumentationSystem.tracer
/// SessionFetcher.addGlobalEventMonitor(tracing)
///
/// let fetcher = service.fetcher(url: url)
/// tracing.instrument(fetcher)                      // child of ServiceContext.current, propagated
/// let data = try await fetcher.beginFetch()
/// ```
///
/// **Propagation.** ``instrument(_:context:)`` starts the fetch's span at once, as a child of the
/// given (by default the current task's) context, and injects the span's context into the
/// request's headers with the tracer's own propagation: with swift-otel's default propagator that
/// is the W3C `traceparent` (and `tracestate`). Call it before the fetch begins, in the task whose
/// trace the fetch belongs to; with `SessionFetcherTransport`, from its `prepareFetcher`. A fetch
/// that was not instrumented still gets a span, started off the fetch's queue when it begins (a
/// child of the task's context when the fetch began in that task), but nothing is injected.
///
/// **Span.** Named by the method (`GET`), kind `client`, with `http.request.method`, `url.full`
/// (redacted by `SessionFetcher.logRedactor`), `server.address`, `server.port`,
/// `http.response.status_code`, `http.request.resend_count` (retries), `error.type`,
/// `http.request.body.size`, `http.response.body.size` and `sessionfetcher.comment`. Events:
/// `http.request.sent` (`sessionfetcher.attempt`, `sessionfetcher.request.kind`: attempt, redirect,
/// continuation) and `http.retry.scheduled` (`sessionfetcher.retry.delay`, `error.type`). A failed
/// fetch records its error and sets the span's status to error; a 4xx or 5xx status is an error of
/// a client span, as OTel says.
///
/// **Never in the fetch's way.** Apart from ``instrument(_:context:)`` (which must start the span
/// to propagate it), spans are started, annotated and ended on the monitor's own serial queue: a
/// slow tracer cannot hold up a fetch. Beyond `bufferCapacity` pending operations, newer ones are
/// dropped and counted (``droppedOperationCount``). ``flush()`` waits for the operations so far.
public final class FetcherTracingMonitor: FetcherEventMonitor {
  private struct State: Sendable {
    var facts: RequestFacts
    var comment: String?
  }

  /// The tracer spans come from.
  public let tracer: any Tracer
  private let tracker = FetchTracker<State>()
  private let pump: EventPump
  // Spans started by `instrument`, until their fetch begins.
  private let prestarted = PrestartedSpans()
  // Confined to the pump's queue.
  private let spans = PumpConfinedSpans()

  /// Creates a monitor tracing with `tracer`.
  ///
  /// - Parameters:
  ///   - tracer: the tracer; default `InstrumentationSystem.tracer` (what
  ///     `InstrumentationSystem.bootstrap` installed).
  ///   - bufferCapacity: how many span operations may wait for a slow tracer before newer ones are
  ///     dropped (default 10,000).
  public init(tracer: (any Tracer)? = nil, bufferCapacity: Int = 10_000) {
    self.tracer = tracer ?? InstrumentationSystem.tracer
    self.pump = EventPump(label: "SessionFetcherTracing.FetcherTracingMonitor", capacity: bufferCapacity)
  }

  /// Span operations dropped because the tracer fell behind by `bufferCapacity` operations.
  public var droppedOperationCount: Int { pump.droppedCount }

  /// Returns once every span operation of the events reported so far reached the tracer.
  public func flush() async {
    await pump.waitUntilIdle()
  }

  /// Starts `fetcher`'s span now, as a child of `context`, and injects the span's context into the
  /// fetcher's request headers (with the tracer's propagation; W3C `traceparent` with swift-otel).
  ///
  /// Call it before the fetch begins; the monitor must be among the fetcher's monitors (global or
  /// its own) for the span to be annotated and ended.
  ///
  /// - Parameters:
  ///   - fetcher: a fetcher that has not begun.
  ///   - context: the parent; default the current task's `ServiceContext` (or a top-level one).
  public func instrument(_ fetcher: SessionFetcher, context: ServiceContext? = nil) {
    let parent = context ?? ServiceContext.current ?? .topLevel
    let method = (fetcher.request?.httpMethod ?? "GET").uppercased()
    let span = tracer.startSpan(method, context: parent, ofKind: .client)
    var headers: [String: String] = [:]
    tracer.inject(span.context, into: &headers, using: HeaderInjector())
    for (name, value) in headers {
      fetcher.setRequestValue(value, forHTTPHeaderField: name)
    }
    prestarted.put(span, for: fetcher)
  }

  // MARK: - FetcherEventMonitor

  /// Starts (or takes over the instrumented) span.
  public func fetcherDidBegin(_ fetcher: SessionFetcher) {
    let state = State(facts: RequestFacts(fetcher.request), comment: fetcher.comment)
    let entry = tracker.begin(fetcher, extra: state)
    let span = prestarted.take(for: fetcher)
    // The task's context when the fetch began in it (task-locals do not reach the pump's queue).
    let parent = ServiceContext.current ?? .topLevel
    pump.submit { [self] in
      let span = span ?? tracer.startSpan(state.facts.method, context: parent, ofKind: .client)
      spans.put(span, for: entry.id)
    }
  }

  /// Adds an `http.request.sent` event.
  public func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) {
    guard let (entry, kind) = tracker.willSend(fetcher) else { return }
    tracker.update(fetcher) { $0.extra.facts = RequestFacts(request) }
    pump.submit { [self] in
      spans.get(entry.id)?.addEvent(
        SpanEvent(
          name: "http.request.sent",
          attributes: [
            "sessionfetcher.attempt": .int64(Int64(entry.attempt)),
            "sessionfetcher.request.kind": .string("\(kind)"),
          ]))
    }
  }

  /// Notes a redirect, so that the next request is not taken for a new attempt.
  public func fetcher(
    _ fetcher: SessionFetcher, willRedirectFrom response: HTTPURLResponse, to request: URLRequest
  ) {
    tracker.update(fetcher) { $0.redirectPending = true }
  }

  /// Adds an `http.retry.scheduled` event.
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
    pump.submit { [self] in
      spans.get(entry.id)?.addEvent(
        SpanEvent(
          name: "http.retry.scheduled",
          attributes: [
            "sessionfetcher.attempt": .int64(Int64(entry.attempt)),
            "sessionfetcher.retry.delay": .double(delay),
            "error.type": .string(errorType),
          ]))
    }
  }

  /// Sets the final attributes, records the error and ends the span.
  public func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {
    guard let entry = tracker.end(fetcher) else { return }
    let outcome = Outcome(fetcher: fetcher, error: error)
    let facts = entry.extra.facts
    pump.submit { [self] in
      guard let span = spans.take(entry.id) else { return }
      let summary = SessionFetcher.logRedactor.summary(
        url: facts.url, headers: facts.headers, texts: outcome.errorDescription.map { [$0] } ?? [])
      span.updateAttributes { attributes in
        attributes["http.request.method"] = facts.method
        if let url = summary.url { attributes["url.full"] = url }
        if let host = facts.host { attributes["server.address"] = host }
        if let port = facts.port { attributes["server.port"] = Int64(port) }
        if outcome.statusCode > 0 {
          attributes["http.response.status_code"] = Int64(outcome.statusCode)
        }
        if outcome.retryCount > 0 {
          attributes["http.request.resend_count"] = Int64(outcome.retryCount)
        }
        attributes["http.request.body.size"] = outcome.bytesSent
        attributes["http.response.body.size"] = outcome.bytesReceived
        if let comment = entry.extra.comment { attributes["sessionfetcher.comment"] = comment }
        if let errorType = outcome.errorType { attributes["error.type"] = errorType }
      }
      if let error, outcome.errorType != "cancelled" {
        span.recordError(
          RedactedError(description: summary.texts.first ?? "\(type(of: error))", underlying: error))
        span.setStatus(SpanStatus(code: .error, message: outcome.errorType))
      }
      span.end()
    }
  }
}

/// An error whose description was redacted, recorded on spans instead of the raw error.
public struct RedactedError: Error, CustomStringConvertible, Sendable {
  /// The redacted description.
  public let description: String
  /// The error's type name.
  public let typeName: String

  init(description: String, underlying: any Error) {
    self.description = description
    self.typeName = String(describing: type(of: underlying))
  }
}

/// Writes propagation values into a header dictionary.
private struct HeaderInjector: Injector {
  func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
    carrier[key] = value
  }
}

/// Spans started by `instrument`, keyed by fetcher, until the fetch begins.
private final class PrestartedSpans: @unchecked Sendable {
  private let lock = NSLock()
  private var spans: [ObjectIdentifier: any Span] = [:]

  func put(_ span: any Span, for fetcher: SessionFetcher) {
    lock.lock()
    let old = spans.updateValue(span, forKey: ObjectIdentifier(fetcher))
    lock.unlock()
    old?.end()
  }

  func take(for fetcher: SessionFetcher) -> (any Span)? {
    lock.lock()
    defer { lock.unlock() }
    return spans.removeValue(forKey: ObjectIdentifier(fetcher))
  }
}

/// The spans of running fetches, by fetch id; used only on the pump's queue.
private final class PumpConfinedSpans: @unchecked Sendable {
  private var spans: [UInt64: any Span] = [:]

  func put(_ span: any Span, for id: UInt64) { spans[id] = span }
  func get(_ id: UInt64) -> (any Span)? { spans[id] }
  func take(_ id: UInt64) -> (any Span)? { spans.removeValue(forKey: id) }
}
