import Foundation

extension Notification.Name {
  /// Posted when an attempt of a fetch goes on the wire (once per attempt, retries included).
  /// The object is the ``SessionFetcher``. Every Started is followed by exactly one
  /// ``sessionFetcherStopped``.
  public static let sessionFetcherStarted = Notification.Name("SessionFetcherStarted")
  /// Posted when an attempt ends: it finished, failed into a retry delay, or was stopped.
  public static let sessionFetcherStopped = Notification.Name("SessionFetcherStopped")
  /// Posted when a fetcher begins waiting before a retry.
  public static let sessionFetcherRetryDelayStarted = Notification.Name("SessionFetcherRetryDelayStarted")
  /// Posted when a retry delay ends: the retry starts, or the fetcher was stopped.
  public static let sessionFetcherRetryDelayStopped = Notification.Name("SessionFetcherRetryDelayStopped")
  /// Posted right after the completion handler returned. `userInfo` holds
  /// ``SessionFetcher/completionDataKey`` and ``SessionFetcher/completionErrorKey`` when present.
  public static let sessionFetcherCompletionInvoked = Notification.Name("SessionFetcherCompletionInvoked")
}

extension SessionFetcher {
  /// The `userInfo` key of ``Foundation/NSNotification/Name/sessionFetcherCompletionInvoked`` for the data.
  public static let completionDataKey = "data"
  /// The `userInfo` key of ``Foundation/NSNotification/Name/sessionFetcherCompletionInvoked`` for the error.
  public static let completionErrorKey = "error"
}
