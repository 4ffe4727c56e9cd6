/// Per-host admission control: at most `maxRunningPerHost` elements run per host; the others wait
/// and start as slots free, lowest priority value first, first come first served within a priority.
///
/// A pure value type (no I/O, no locks): ``FetcherService`` keeps one behind its lock and starts
/// the fetchers this type says to start.
struct HostThrottle<Element: Hashable> {
  /// An element waiting for a slot.
  struct Waiting {
    var element: Element
    var priority: Int
    /// Arrival order, for first come first served within a priority.
    var sequence: Int
  }

  /// The largest number of elements running per host; 0 means unlimited.
  private(set) var maxRunningPerHost: Int
  /// Running elements per host, in admission order. Hosts without elements have no key.
  private(set) var running: [String: [Element]] = [:]
  /// Waiting elements per host, in arrival order. Hosts without elements have no key.
  private(set) var waiting: [String: [Waiting]] = [:]
  /// The host each tracked element was admitted under (a redirect does not move it).
  private var hostOfElement: [Element: String] = [:]
  private var nextSequence = 0

  init(maxRunningPerHost: Int) {
    self.maxRunningPerHost = max(0, maxRunningPerHost)
  }

  /// The priority that never waits (as the original's `NSIntegerMin`).
  static var neverDelayedPriority: Int { Int.min }

  /// The number of elements tracked (running or waiting).
  var count: Int { hostOfElement.count }
  /// The number of running elements.
  var runningCount: Int { running.values.reduce(0) { $0 + $1.count } }
  /// The number of waiting elements.
  var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }

  /// The waiting elements per host, in the order they would start.
  var waitingByHost: [String: [Element]] {
    waiting.mapValues { queue in HostThrottle.startOrder(queue).map(\.element) }
  }

  /// Whether `element` waits for a slot.
  func isWaiting(_ element: Element) -> Bool {
    guard let host = hostOfElement[element] else { return false }
    return waiting[host]?.contains { $0.element == element } ?? false
  }

  /// The host `element` was admitted under, if tracked.
  func host(of element: Element) -> String? { hostOfElement[element] }

  /// Admits `element` for `host`: returns true when it runs now, false when it waits.
  /// An element already tracked is left as it is (true if it runs).
  mutating func admit(_ element: Element, host: String, priority: Int) -> Bool {
    if hostOfElement[element] != nil { return !isWaiting(element) }
    hostOfElement[element] = host
    let runningCount = running[host]?.count ?? 0
    if maxRunningPerHost == 0 || priority == HostThrottle.neverDelayedPriority
      || runningCount < maxRunningPerHost
    {
      running[host, default: []].append(element)
      return true
    }
    waiting[host, default: []].append(Waiting(element: element, priority: priority, sequence: nextSequence))
    nextSequence += 1
    return false
  }

  /// Forgets `element` (finished or stopped) and returns the waiting elements that now run, in
  /// start order (they are already counted as running). Removing an untracked element does nothing.
  mutating func remove(_ element: Element) -> [Element] {
    guard let host = hostOfElement.removeValue(forKey: element) else { return [] }
    // Through indices: one hash of the host per dictionary, not one per access (once per fetch).
    // An element is in one list at most, once (see `admit`): the search stops at it.
    if let index = running.index(forKey: host),
      let position = running.values[index].firstIndex(where: { $0 == element })
    {
      running.values[index].remove(at: position)
      if running.values[index].isEmpty { running.remove(at: index) }
    } else if let index = waiting.index(forKey: host),
      let position = waiting.values[index].firstIndex(where: { $0.element == element })
    {
      waiting.values[index].remove(at: position)
      if waiting.values[index].isEmpty { waiting.remove(at: index) }
    }
    return promote(host: host)
  }

  /// Changes the limit; returns the waiting elements that now run (a raised limit frees slots).
  mutating func setMaxRunningPerHost(_ limit: Int) -> [Element] {
    maxRunningPerHost = max(0, limit)
    return waiting.keys.sorted().flatMap { promote(host: $0) }
  }

  /// Forgets every element; returns the waiting ones (in start order) and the running ones.
  mutating func removeAll() -> (waiting: [Element], running: [Element]) {
    let waitingElements = waiting.keys.sorted().flatMap { waitingByHost[$0] ?? [] }
    let runningElements = running.keys.sorted().flatMap { running[$0] ?? [] }
    running = [:]
    waiting = [:]
    hostOfElement = [:]
    return (waitingElements, runningElements)
  }

  /// Moves waiting elements of `host` to running while there is room.
  private mutating func promote(host: String) -> [Element] {
    var started: [Element] = []
    while var queue = waiting[host], !queue.isEmpty,
      maxRunningPerHost == 0 || (running[host]?.count ?? 0) < maxRunningPerHost
    {
      let next = HostThrottle.startOrder(queue)[0]
      queue.removeAll { $0.sequence == next.sequence }
      waiting[host] = queue.isEmpty ? nil : queue
      running[host, default: []].append(next.element)
      started.append(next.element)
    }
    return started
  }

  private static func startOrder(_ queue: [Waiting]) -> [Waiting] {
    queue.sorted { ($0.priority, $0.sequence) < ($1.priority, $1.sequence) }
  }
}
