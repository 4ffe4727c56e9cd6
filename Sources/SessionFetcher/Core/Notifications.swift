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
  /// Posted on the callback queue right after the fetcher called a completion handler: the closure
  /// of ``SessionFetcher/beginFetch(completionHandler:)`` returned, or the `async`
  /// ``SessionFetcher/beginFetch()`` was resumed (returned or threw). The object is the
  /// ``SessionFetcher``; `userInfo` holds ``SessionFetcher/completionDataKey`` and
  /// ``SessionFetcher/completionErrorKey`` when present.
  ///
  /// The rule: one post for every completion call, and none without one, whatever ended the fetch.
  ///
  /// | How the fetch ended | Completion called | Posted |
  /// | --- | --- | --- |
  /// | Success or failure | yes | once |
  /// | `Task` of `async` `beginFetch()` cancelled, before or after it began | yes (throws `.cancelled`) | once |
  /// | ``SessionFetcher/stopFetching()`` of an `async` fetch | yes (throws `.cancelled`) | once |
  /// | ``SessionFetcher/stopFetching()``, ``SessionFetcher/stopFetchingTriggersCompletionHandler`` on | yes | once |
  /// | ``SessionFetcher/stopFetching()``, ``SessionFetcher/stopFetchingTriggersCompletionHandler`` off | no | never |
  /// | `FetcherService.stopAllFetchers()` | as ``SessionFetcher/stopFetching()`` | as ``SessionFetcher/stopFetching()`` |
  /// | A second begin of the same fetcher (rejected with `.invalidConfiguration`) | yes | once more |
  ///
  /// Nothing is posted when ``SessionFetcher/postsNotifications`` is off.
  public static let sessionFetcherCompletionInvoked = Notification.Name("SessionFetcherCompletionInvoked")
}

extension SessionFetcher {
  /// The `userInfo` key of ``Foundation/NSNotification/Name/sessionFetcherCompletionInvoked`` for the data.
  public static let completionDataKey = "data"
  /// The `userInfo` key of ``Foundation/NSNotification/Name/sessionFetcherCompletionInvoked`` for the error.
  public static let completionErrorKey = "error"
}
