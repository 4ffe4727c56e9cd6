import Foundation

// GTMSessionFetcher's block types under the names its Swift users spell out (as Swift imports
// `GTMSessionFetcherRetryResponse` and the others), so a port compiles with renames only. Each is
// the exact type of the property or parameter it is used for here.
extension SessionFetcher {
  /// GTM's `GTMSessionFetcherCompletionHandler`: the body (or nil) and the error (or nil on success).
  public typealias CompletionHandler = FetcherCompletionHandler
  /// GTM's `GTMSessionFetcherRetryResponse`: the answer a ``RetryBlock`` gives, true to retry.
  public typealias RetryResponse = @Sendable (Bool) -> Void
  /// GTM's `GTMSessionFetcherTestResponse`: the response, body and error a ``TestBlock`` gives the
  /// fetch.
  public typealias TestResponse = @Sendable (HTTPURLResponse?, Data?, (any Error)?) -> Void
  /// GTM's `GTMSessionFetcherWillRedirectResponse`: the request a ``WillRedirectBlock`` follows, or
  /// nil to refuse the redirect.
  public typealias WillRedirectResponse = @Sendable (URLRequest?) -> Void
  /// GTM's `GTMSessionFetcherAccumulateDataBlock`, the type of ``accumulateDataBlock``: each chunk
  /// of the body as it arrives (nil once a retry restarts the body).
  public typealias AccumulateDataBlock = @Sendable (Data?) -> Void
  /// GTM's `GTMSessionFetcherSendProgressBlock`, the type of ``sendProgressBlock``: bytes sent now,
  /// in all, and expected (-1 when unknown).
  public typealias SendProgressBlock = @Sendable (Int64, Int64, Int64) -> Void
  /// GTM's `GTMSessionFetcherReceivedProgressBlock`, the type of ``receivedProgressBlock``: bytes
  /// received now and in all.
  public typealias ReceivedProgressBlock = @Sendable (Int64, Int64) -> Void
  /// GTM's `GTMSessionFetcherDownloadProgressBlock`, the type of ``downloadProgressBlock``: bytes
  /// written now, in all, and expected (-1 when unknown).
  public typealias DownloadProgressBlock = @Sendable (Int64, Int64, Int64) -> Void
}
