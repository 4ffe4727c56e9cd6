import Foundation

/// What moves a fetch's bytes beneath the fetcher.
///
/// The fetcher decides everything HTTP (retries and backoff, redirects, authorization and
/// challenges, cookies, ETags, timeouts, progress, notifications, logging) and hands one exchange
/// at a time to its engine:
///
/// - ``urlSession``: URLSession (FoundationNetworking on Linux), with every workaround the library
///   needs there. The default.
/// - ``libcurl``: on Linux, the process's own `libcurl.so.4` (the library FoundationNetworking runs
///   on), on macOS the system's `/usr/lib/libcurl.4.dylib`, driven directly through its multi
///   interface on one event-loop thread per session: less CPU per small request than URLSession
///   (see the README's benchmarks), real
///   backpressure, phase timings (``FetchTiming/transferMetrics``), and a connection cache sized
///   for the per-host limit. It is
///   loaded at run time: nothing links it, and no -dev package is needed.
///
/// ```swift
/// let service = FetcherService()
/// service.engine = .libcurl          // for the sessions it makes from now on
/// let fetcher = SessionFetcher.fetcher(urlString: url)
/// fetcher.engine = .libcurl          // a fetcher made without a service, read at begin
/// ```
///
/// Set `SESSIONFETCHER_ENGINE=libcurl` (or `urlSession`) in the environment to change
/// ``default`` for a whole process, for example to run a test suite on each engine.
public enum FetcherEngine: Sendable, Equatable, CustomStringConvertible {
  /// URLSession: FoundationNetworking on Linux, the system's URL loading on Apple platforms.
  case urlSession
  /// libcurl's multi interface, driven directly (Linux and macOS; unavailable on iOS, tvOS, watchOS
  /// and visionOS, which ship no libcurl an app may load).
  case libcurl

  /// The engine of services and fetchers that do not choose one: ``urlSession``, unless the
  /// environment variable `SESSIONFETCHER_ENGINE` was `libcurl` (or `urlSession`) when the
  /// process started.
  public static var `default`: FetcherEngine { environmentDefault }

  private static let environmentDefault: FetcherEngine =
    parse(
      ProcessInfo.processInfo.environment["SESSIONFETCHER_ENGINE"]) ?? .urlSession

  /// The engine an environment value names (case-insensitive, `url-session` and `curl` accepted),
  /// or nil for none or any other value.
  package static func parse(_ value: String?) -> FetcherEngine? {
    guard let value = value?.trimmingCharacters(in: .whitespaces).lowercased() else { return nil }
    switch value {
    case "libcurl", "curl": return .libcurl
    case "urlsession", "url-session", "url_session": return .urlSession
    default: return nil
    }
  }

  /// Whether fetches can run on this engine here. ``libcurl`` is unavailable when its library
  /// (`libcurl.so.4` on Linux, `/usr/lib/libcurl.4.dylib` on macOS) cannot be loaded or is older
  /// than 7.68.0, and on iOS, tvOS, watchOS and visionOS; ``unavailableReason`` says why, in one
  /// sentence. A fetch on an unavailable engine fails at once with
  /// ``SessionFetcherError/engineUnavailable(_:)``.
  public var isAvailable: Bool { unavailableReason == nil }

  /// Why the engine cannot be used here, or nil when it can.
  public var unavailableReason: String? {
    switch self {
    case .urlSession:
      return nil
    case .libcurl:
      return CurlLibrary.unavailableReason
    }
  }

  /// `urlSession` or `libcurl`.
  public var description: String {
    switch self {
    case .urlSession: return "urlSession"
    case .libcurl: return "libcurl"
    }
  }
}

extension FetcherEngine: LosslessStringConvertible {
  /// The engine a name gives, as a command-line option or a configuration file would: `libcurl`
  /// (or `curl`), `urlSession` (or `url-session`), in any case; nil for any other name. The
  /// inverse of ``description``.
  ///
  /// ```swift
  /// let engine = FetcherEngine("libcurl") ?? .default
  /// ```
  public init?(_ description: String) {
    guard let engine = Self.parse(description) else { return nil }
    self = engine
  }
}
