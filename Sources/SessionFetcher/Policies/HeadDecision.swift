import Foundation

/// Where a final response head's body goes and whether the head waits for
/// ``SessionFetcher/didReceiveResponseBlock``: value in, action out, no lock and no I/O.
///
/// `SessionFetcher.receive(head:from:)` reads the input under the fetcher's lock and acts on the
/// answer there and after it. What is not decided here depends on the disk or on a stream's
/// windows: the part file a download continues (`DownloadResume.choosePartFile`), and the Range
/// windows of a stream (`StreamWindows`).
enum HeadDecision {
  struct Input: Equatable {
    /// The status (nil: not HTTP, a `file:` or `data:` URL).
    var status: Int?
    /// The engine reported where this hop redirects to.
    var hasRedirectTarget = false
    /// The fetch streams its body (``SessionFetcher/beginStreaming(highWaterMark:lowWaterMark:)``).
    var isStreaming = false
    /// The fetch has an ``SessionFetcher/accumulateDataBlock``.
    var accumulates = false
    /// The fetch downloads to ``SessionFetcher/destinationFileURL``.
    var hasDestination = false
    /// The most bytes of a body kept in memory (nil: no limit).
    var maximumInMemoryBodyLength: Int64?
    /// The body has a `Content-Encoding`: its `Content-Length` is not the decoded length.
    var isEncoded = false
    /// The head's `Content-Length` (-1: none).
    var expectedContentLength: Int64 = -1
    /// The request's method, upper-cased.
    var method = "GET"
    /// The fetch has a ``SessionFetcher/didReceiveResponseBlock``.
    var hasResponseBlock = false
    /// A 401 whose challenge the fetcher answers itself (no test block): it waits for that answer,
    /// not for the response block.
    var isAnsweredChallenge = false

    init(status: Int?) {
      self.status = status
    }
  }

  struct Action: Equatable {
    /// Where the body goes.
    var sink: ResponseSink
    /// The body announced is past the in-memory limit: refuse it before its first byte.
    var tooLarge: Int64?
    /// Hold the head and its body for ``SessionFetcher/didReceiveResponseBlock`` (unless the
    /// attempt fails first).
    var asksResponseBlock: Bool
  }

  static func decide(_ input: Input) -> Action {
    let status = input.status ?? 0
    let sink: ResponseSink
    if input.hasRedirectTarget, RedirectPolicy.isRedirect(status) {
      sink = .redirect
    } else if (200..<300).contains(status) || input.status == nil {
      if input.isStreaming {
        sink = .stream
      } else if input.accumulates {
        sink = .accumulate
      } else if input.hasDestination {
        sink = .file
      } else {
        sink = .memory
      }
    } else {
      sink = .memory
    }
    var tooLarge: Int64?
    if let limit = input.maximumInMemoryBodyLength, sink == .memory || sink == .redirect, !input.isEncoded,
      input.expectedContentLength > limit, status != 204, status != 304, input.method != "HEAD"
    {
      tooLarge = limit
    }
    let asks = input.hasResponseBlock && sink != .redirect && !input.isAnsweredChallenge
    return Action(sink: sink, tooLarge: tooLarge, asksResponseBlock: asks)
  }
}
