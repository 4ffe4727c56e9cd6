import Foundation

// How user callbacks and notifications reach the callback queue.
extension SessionFetcher {
  /// Runs a user callback on `queue` unless the fetcher was stopped, or its completion ran, before
  /// it runs.
  func deliver(on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
    queue.async {
      // Nothing after the completion: a timeout may end the fetch while the engine's thread is
      // between a chunk it handed over and that chunk's callbacks.
      guard self.storage.withLock({ $0.lifecycle.runsQueuedCallbacks }) else { return }
      LockAudit.userBlock("a progress, data or metrics block")
      body()
    }
  }

  func post(_ name: Notification.Name, on queue: DispatchQueue) {
    // No hop at all for a fetch that posts nothing.
    guard isPostingNotifications else { return }
    queue.async { self.post(name) }
  }

  /// ``postsNotifications`` as the fetch began with it.
  private var isPostingNotifications: Bool {
    storage.withLock { $0.plan?.postsNotifications ?? $0.config.postsNotifications }
  }

  /// Posts `name` now, on the current thread (which must be the callback queue's), unless the
  /// fetch began with ``postsNotifications`` off. `userInfo` is built only for a post.
  func post(_ name: Notification.Name, userInfo: () -> [AnyHashable: Any]? = { nil }) {
    guard isPostingNotifications else { return }
    LockAudit.userBlock("an observer of \(name.rawValue)")
    NotificationCenter.default.post(name: name, object: self, userInfo: userInfo())
  }
}
