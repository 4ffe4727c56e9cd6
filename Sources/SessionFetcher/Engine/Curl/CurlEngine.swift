import Foundation

#if LIBCURL_ENGINE
  /// An engine that moves HTTP exchanges with libcurl's multi interface, driven directly: one
  /// event-loop thread per engine, a connection cache shared by its transfers, HTTP/2 over TLS where
  /// the server offers it, real backpressure and phase timings.
  ///
  /// libcurl never follows redirects, keeps cookies or answers authentication here: the handler of
  /// each task decides, as on URLSession.
  ///
  /// ```swift
  /// let engine = try CurlEngine(configuration: .ephemeral)
  /// let task = engine.makeTask(request: URLRequest(url: url), body: .none, handler: handler)
  /// task?.resume()
  /// ```
  ///
  /// Thread safety: every member may be called from any thread. Releasing the engine invalidates it
  /// as ``finishTasksAndInvalidate()`` does: transfers already started run to their end, then the
  /// loop thread exits.
  package final class CurlEngine: Sendable {
    private let loop: CurlLoop

    /// Makes an engine with `configuration`'s per-host connection cap and proxy dictionary.
    ///
    /// - Throws: ``CurlEngineError/unavailable(_:)`` when libcurl cannot be used (missing, too old).
    package init(configuration: URLSessionConfiguration) throws {
      if let reason = CurlLibrary.unavailableReason { throw CurlEngineError.unavailable(reason) }
      loop = CurlLoop(options: CurlEngineOptions(configuration: configuration))
    }

    deinit {
      loop.send(.invalidate(cancellingTransfers: false))
    }

    /// A task for one exchange, not started until its `resume()`; nil once the engine is invalidated.
    ///
    /// The engine keeps `handler` until the task completes.
    package func makeTask(
      request: URLRequest, body: EngineBody, tls: TLSSettings = TLSSettings(),
      route: TransportRoute = TransportRoute(), handler: any SessionTaskHandler
    ) -> CurlTask? {
      loop.makeTask(request: request, body: body, tls: tls, route: route, handler: handler)
    }

    /// No new tasks; running transfers finish, then the loop thread exits. A task made earlier but
    /// resumed after the loop ended completes with `URLError(.cancelled)`.
    package func finishTasksAndInvalidate() {
      loop.send(.invalidate(cancellingTransfers: false))
    }

    /// No new tasks; every running transfer is cancelled, then the loop thread exits.
    package func invalidateAndCancel() {
      loop.send(.invalidate(cancellingTransfers: true))
    }

    /// Whether the engine takes no more tasks.
    package var isInvalidated: Bool { loop.isInvalidated }

    /// The tasks started and not over, on libcurl or waiting for their host, for leak tests.
    package var runningTransferCount: Int { loop.heldCount }

    /// The most transfers that were on libcurl at once, for tests of the per-host queue.
    package var mostTransfersAtOnce: Int { loop.mostTransfersAtOnce }

    /// The engines' loop threads alive in the process, for leak tests.
    package static var liveLoopCount: Int { CurlLoop.liveLoopCount }

    /// The loop threads' name as `/proc/self/task/*/comm` shows it.
    package static var loopThreadSystemName: String { CurlLoop.systemThreadName }
  }
#endif
