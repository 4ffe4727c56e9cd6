import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `sessionFetcherCompletionInvoked` when a real engine's exchange is cut short: a stop, a stop of
/// all, or a cancelled task each reach the engine's own cancellation, whose late completion must
/// post nothing more. Every way a fetch ends is tested on the scripted engine
/// (`ScriptedCompletionNotificationTests`).
@Suite("sessionFetcherCompletionInvoked")
struct CompletionNotificationTests {
  /// The ways a fetch on the wire is cut short.
  enum EndKind: String, CaseIterable, CustomTestStringConvertible {
    case stopWithoutCompletionFlag, stopAllWithCompletionFlag, asyncTaskCancelledWhileRunning

    var testDescription: String { rawValue }
  }

  @Test("one post per completion call", arguments: EndKind.allCases)
  func onePostPerCompletion(kind: EndKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let fetcher = service.fetcher(url: server.url("/hang"))
    let recorder = NotificationRecorder([fetcher])
    let completions = Recorder<String>()
    let waitForRequest = { #expect(await eventually { server.requestCount(path: "/hang") == 1 }) }

    switch kind {
    case .asyncTaskCancelledWhileRunning:
      let task = Task {
        do { _ = try await fetcher.beginFetch() } catch {}
      }
      await waitForRequest()
      task.cancel()
      await task.value
      completions.append("resumed")
    case .stopWithoutCompletionFlag, .stopAllWithCompletionFlag:
      fetcher.stopFetchingTriggersCompletionHandler = kind == .stopAllWithCompletionFlag
      fetcher.beginFetch { _, error in completions.append(error.map { "\($0)" } ?? "success") }
      await waitForRequest()
      if kind == .stopAllWithCompletionFlag { service.stopAllFetchers() } else { fetcher.stopFetching() }
    }

    let expected = kind == .stopWithoutCompletionFlag ? 0 : 1
    #expect(await eventually { completions.count >= expected })
    // Anything late has had its chance: the fetch is over, the engine's cancellation has had time
    // to report, and the queue is drained.
    #expect(await eventually { !fetcher.isFetching })
    await pause(0.2)
    await drain(fetcher.callbackQueue)
    #expect(completions.count == expected, "\(completions.values)")
    #expect(recorder.completionInvoked == expected)
    #expect(recorder.started == recorder.stopped)
  }
}
