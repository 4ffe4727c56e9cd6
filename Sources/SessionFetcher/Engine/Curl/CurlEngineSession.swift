#if LIBCURL_ENGINE
  import Foundation

  /// The libcurl engine's session: a ``CurlEngine`` (one event-loop thread), made on demand from
  /// the fetcher session's configuration, for http and https; every other scheme (`data:`,
  /// `file:`) goes to the session it is given for them.
  ///
  /// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
  package final class CurlEngineSession: EngineSession, @unchecked Sendable {
    private struct State {
      var engine: CurlEngine?
      var invalidated = false
    }

    private let state = Locked(State())
    private let configuration: URLSessionConfiguration
    private let otherSchemes: any EngineSession

    /// The per-host connection limit of sessions made without a configuration: enough for a
    /// service's default 10 fetches per host and 16 in flight without waiting. The engine sizes
    /// its connection cache for its limit itself, so it never churns.
    package static let defaultConnectionsPerHost = 16

    /// - Parameters:
    ///   - configuration: the fetcher session's configuration (already adjusted).
    ///   - otherSchemes: the session that moves requests that are neither http nor https; it is
    ///     invalidated with this one.
    package init(configuration: URLSessionConfiguration, otherSchemes: any EngineSession) {
      self.configuration = configuration
      self.otherSchemes = otherSchemes
    }

    /// Why `libcurl.so.4` cannot be used here, if it cannot.
    package var unavailableReason: String? { CurlLibrary.unavailableReason }

    /// libcurl really stops reading a paused transfer.
    package var pausing: StreamPausing.Method { .suspendTask }

    /// The engine leaves timeouts to the fetcher.
    package var enforcesRequestTimeout: Bool { false }

    package var tlsSettingsLimitation: String? { nil }

    package var routeLimitation: String? { nil }

    /// Streams share one more loop thread, not one per stream.
    package var sharesOneSessionAmongStreams: Bool { true }

    /// For http and https.
    package func sendsSizedStreams(for request: URLRequest) -> Bool {
      Self.movesScheme(of: request)
    }

    private static func movesScheme(of request: URLRequest) -> Bool {
      guard let scheme = request.url?.scheme?.lowercased() else { return false }
      return scheme == "http" || scheme == "https"
    }

    package func makeTask(
      request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
      handler: any SessionTaskHandler
    ) -> (any EngineTask)? {
      guard Self.movesScheme(of: request) else {
        if isInvalidated { return nil }
        return otherSchemes.makeTask(request: request, body: body, tls: tls, route: route, handler: handler)
      }
      let request = Self.addingHeaders(configuration.httpAdditionalHeaders, to: request)
      let engine = state.withLock { state -> CurlEngine? in
        if state.invalidated { return nil }
        if let engine = state.engine { return engine }
        // Unavailability is reported when the fetch begins; here it only means no task.
        state.engine = try? CurlEngine(configuration: configuration)
        return state.engine
      }
      return engine?.makeTask(request: request, body: body, tls: tls, route: route, handler: handler)
    }

    /// `request` with the configuration's `httpAdditionalHeaders` that it does not set itself, as
    /// URLSession adds them.
    static func addingHeaders(_ headers: [AnyHashable: Any]?, to request: URLRequest) -> URLRequest {
      guard let headers, !headers.isEmpty else { return request }
      var request = request
      for (key, value) in headers {
        guard let name = key as? String, request.value(forHTTPHeaderField: name) == nil else { continue }
        request.setValue(String(describing: value), forHTTPHeaderField: name)
      }
      return request
    }

    package var isInvalidated: Bool { state.withLock { $0.invalidated } }

    package func finishTasksAndInvalidate() {
      let engine = invalidate()
      otherSchemes.finishTasksAndInvalidate()
      engine?.finishTasksAndInvalidate()
    }

    package func invalidateAndCancel() {
      let engine = invalidate()
      otherSchemes.invalidateAndCancel()
      engine?.invalidateAndCancel()
    }

    /// The engine's `invalidateAndCancel()` only queues a command for its loop.
    package func invalidateAndCancelWithoutWaiting() {
      let engine = invalidate()
      otherSchemes.invalidateAndCancelWithoutWaiting()
      engine?.invalidateAndCancel()
    }

    /// Marks the session invalidated and hands over its engine, if one was made.
    private func invalidate() -> CurlEngine? {
      state.withLock { state in
        state.invalidated = true
        defer { state.engine = nil }
        return state.engine
      }
    }
  }
#endif
