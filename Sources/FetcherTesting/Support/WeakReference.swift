import Foundation

/// A weak reference that any thread may read and set: to see an object freed.
///
/// A test keeps one of these beside the object it watches, lets go of its own strong references,
/// and waits for ``object`` to become nil:
///
/// ```swift
/// let watched = WeakReference<SessionFetcher>()
/// do {
///   let fetcher = server.fetcher("/bytes/10")
///   watched.object = fetcher
///   _ = try await fetcher.beginFetch()
/// }
/// #expect(await eventually { watched.object == nil })
/// ```
///
/// A class, so that a `@Sendable` closure can capture one and set it later. It is `Sendable` when
/// `Object` is: every read and write of the reference holds the box's own lock.
public final class WeakReference<Object: AnyObject> {
  private let lock = NSLock()
  private weak var stored: Object?

  /// A reference to `object` (nil: none yet; set ``object`` later).
  public init(_ object: Object? = nil) {
    stored = object
  }

  /// The object while something else keeps it alive; nil once it was freed (or never set).
  public var object: Object? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

// `@unchecked`: the only state, `stored`, is read and written under `lock`.
extension WeakReference: @unchecked Sendable where Object: Sendable {}
