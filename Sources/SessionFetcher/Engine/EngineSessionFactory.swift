import Foundation

/// Maps each ``FetcherEngine`` to its ``EngineSession``: the one place that knows which
/// implementation moves the bytes of each engine.
package enum EngineSessionFactory {
  /// A session of `engine` with `configuration` (already adjusted by the fetcher session). It makes
  /// nothing on the network until its first task.
  package static func makeSession(
    _ engine: FetcherEngine, configuration: URLSessionConfiguration
  ) -> any EngineSession {
    switch engine {
    case .urlSession:
      return URLSessionEngineSession(configuration: configuration)
    case .libcurl:
      #if LIBCURL_ENGINE
        // libcurl moves http and https; URLSession still answers data: and file: URLs.
        return CurlEngineSession(
          configuration: configuration, otherSchemes: URLSessionEngineSession(configuration: configuration))
      #else
        return UnavailableEngineSession(reason: FetcherEngine.libcurl.unavailableReason)
      #endif
    }
  }

  /// The default of `SessionFetcher.downloadWindowLength`, read before an engine is chosen: the
  /// URLSession engine's, whose pausing by ending its transfer is what the windows serve. An
  /// engine that really pauses ignores the setting (see `StreamWindows.beginDownload`).
  package static var defaultDownloadWindowLength: Int64? {
    URLSessionEngineSession.defaultDownloadWindowLength
  }

  /// Sets `engine`'s defaults on the configuration of a session made without one: on Linux, at
  /// most ``defaultConnectionsPerHost(_:)`` connections per host.
  ///
  /// libcurl keeps at most four idle connections per transfer it has attached, and
  /// FoundationNetworking does not raise that cap: with more than four requests in flight to one
  /// host, connections are closed and opened again (a new TLS handshake each over https). Four is
  /// the one per-host limit that never does; iOS uses the same limit by default. The libcurl engine
  /// sizes its connection cache for its own limit, so it never churns. Apple's URLSession keeps its
  /// own default.
  package static func applyDefaults(of engine: FetcherEngine, to configuration: URLSessionConfiguration) {
    configuration.httpMaximumConnectionsPerHost = defaultConnectionsPerHost(engine)
  }

  /// The per-host connection limit of `engine`'s sessions made without a configuration: 4 for
  /// URLSession on FoundationNetworking (see `SharedSession.defaultConfiguration(for:)`), 16 for
  /// the libcurl engine, and the platform's own for Apple's URLSession.
  package static func defaultConnectionsPerHost(_ engine: FetcherEngine) -> Int {
    switch engine {
    case .urlSession:
      #if FOUNDATION_NETWORKING
        return URLSessionEngineSession.defaultConnectionsPerHost
      #else
        return URLSessionConfiguration.ephemeral.httpMaximumConnectionsPerHost
      #endif
    case .libcurl:
      #if LIBCURL_ENGINE
        return CurlEngineSession.defaultConnectionsPerHost
      #else
        return URLSessionConfiguration.ephemeral.httpMaximumConnectionsPerHost
      #endif
    }
  }
}

#if !LIBCURL_ENGINE
  /// The session of an engine that cannot run on this platform: it makes no task. A fetch on such
  /// an engine fails when it begins, with ``SessionFetcherError/engineUnavailable(_:)``, before it
  /// would ask for one.
  package final class UnavailableEngineSession: EngineSession {
    package let unavailableReason: String?
    package init(reason: String?) { self.unavailableReason = reason }
    package var pausing: StreamPausing.Method { .suspendTask }
    package var enforcesRequestTimeout: Bool { false }
    package var tlsSettingsLimitation: String? { nil }
    package var routeLimitation: String? { nil }
    package var sharesOneSessionAmongStreams: Bool { true }
    package func sendsSizedStreams(for request: URLRequest) -> Bool { false }
    package func makeTask(
      request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
      handler: any SessionTaskHandler
    ) -> (any EngineTask)? {
      nil
    }
    package var isInvalidated: Bool { true }
    package func finishTasksAndInvalidate() {}
    package func invalidateAndCancel() {}
    package func invalidateAndCancelWithoutWaiting() {}
  }
#endif
