import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Fetches that end before their request exists, on the scripted engine: each ends with its error,
/// is no longer fetching, posted no notification, and the engine was asked for no exchange (the
/// scripted engine records an exchange when the fetcher makes it, so nothing sent is checked at
/// once, with no wait for a late request).
@Suite("Ending before the request (scripted)")
struct ScriptedNothingSentTests {
  /// How the caller ends the fetch before its request exists.
  enum Ending: Sendable, CaseIterable, CustomTestStringConvertible {
    /// `fetchResponse()` in a task cancelled before the call.
    case fetchResponseInACancelledTask
    /// `beginFetch()` (async) in a task cancelled before the call.
    case beginFetchInACancelledTask
    /// `download()` with no `destinationFileURL`.
    case downloadWithoutADestination
    /// `maxRetryCount` set to -1.
    case negativeMaxRetryCount
    /// `maximumRedirects` set to -1.
    case negativeMaximumRedirects
    /// `maximumRedirects` set to `Int.min`.
    case leastMaximumRedirects

    var testDescription: String {
      switch self {
      case .fetchResponseInACancelledTask: "fetchResponse in a cancelled task: cancelled"
      case .beginFetchInACancelledTask: "beginFetch in a cancelled task: cancelled"
      case .downloadWithoutADestination: "download without a destination: invalid configuration"
      case .negativeMaxRetryCount: "a negative maxRetryCount: invalid configuration"
      case .negativeMaximumRedirects: "maximumRedirects -1: invalid configuration"
      case .leastMaximumRedirects: "maximumRedirects Int.min: invalid configuration"
      }
    }

    /// Runs the fetch this way and returns its error.
    func run(_ fetcher: SessionFetcher) async -> (any Error)? {
      switch self {
      case .fetchResponseInACancelledTask:
        return await Task {
          withUnsafeCurrentTask { $0?.cancel() }
          return try await fetcher.fetchResponse()
        }.result.error
      case .beginFetchInACancelledTask:
        return await Task {
          withUnsafeCurrentTask { $0?.cancel() }
          return try await fetcher.beginFetch()
        }.result.error
      case .downloadWithoutADestination:
        do {
          _ = try await fetcher.download()
          return nil
        } catch {
          return error
        }
      case .negativeMaxRetryCount:
        fetcher.isRetryEnabled = true
        fetcher.maxRetryCount = -1
        return await fetcher.fetchResult().error
      case .negativeMaximumRedirects:
        fetcher.maximumRedirects = -1
        return await fetcher.fetchResult().error
      case .leastMaximumRedirects:
        fetcher.maximumRedirects = .min
        return await fetcher.fetchResult().error
      }
    }

    /// Whether `error` is the one this ending must give.
    func expects(_ error: (any Error)?) -> Bool {
      switch (self, error as? SessionFetcherError) {
      case (.fetchResponseInACancelledTask, .cancelled?), (.beginFetchInACancelledTask, .cancelled?):
        return true
      case (.downloadWithoutADestination, .invalidConfiguration?):
        return true
      case (.negativeMaxRetryCount, .invalidConfiguration(let text)?):
        return text.contains("maxRetryCount")
      case (.negativeMaximumRedirects, .invalidConfiguration(let text)?),
        (.leastMaximumRedirects, .invalidConfiguration(let text)?):
        return text.contains("maximumRedirects")
      default:
        return false
      }
    }
  }

  @Test(arguments: Ending.allCases)
  func endsWithItsErrorAndSendsNothing(_ ending: Ending) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/item", with: .response(body: Data("item".utf8)))
    let fetcher = engine.fetcher("/item")
    let counter = NotificationRecorder([fetcher])
    let error = await ending.run(fetcher)
    #expect(ending.expects(error), "\(String(describing: error))")
    #expect(!fetcher.isFetching)
    await drain(fetcher.callbackQueue)
    #expect(engine.requests.isEmpty)
    #expect(counter.started == 0 && counter.stopped == 0)
  }
}
