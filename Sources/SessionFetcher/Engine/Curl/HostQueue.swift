/// Which exchanges the libcurl engine hands to libcurl now and which wait their turn, per origin.
///
/// libcurl caps the connections to a host (`CURLMOPT_MAX_HOST_CONNECTIONS`) by keeping transfers
/// past the cap on a pending list, but a transfer added while others wait can take a connection as
/// it frees, ahead of them: with many exchanges in flight to one HTTP/1.1 host, some waited while
/// hundreds started after them went through. So the engine keeps its own queue for the origins that take one exchange per
/// connection: at most `limit` of their exchanges run at once, and the rest start in the order they
/// came.
///
/// An origin takes one exchange per connection when its last response came in HTTP/1.x, or, before
/// any response, when it is plain `http` (libcurl speaks HTTP/1.1 there). An `https` origin not
/// known yet is not held: libcurl negotiates HTTP/2 by ALPN and waits for it before opening more
/// connections (`CURLOPT_PIPEWAIT`), so its exchanges share one. One that answers in HTTP/2 or
/// HTTP/3 lets its waiting exchanges go, and none waits here for it after that (libcurl's stream
/// limits apply). What each origin's last response said is kept for ``versionMemoryLimit`` origins.
///
/// A value with no I/O: every call says which waiting elements may start now, each having taken a
/// slot, which the caller gives back with ``finished(_:)`` when that exchange is over.
package struct HostQueue<Element> {
  /// An origin: scheme, host and port, and the route to it.
  package struct Origin: Hashable, Sendable {
    package var scheme: String
    package var host: String
    package var port: Int
    /// The proxy or Unix socket the exchanges go through, if any.
    package var route: String?

    package init(scheme: String, host: String, port: Int, route: String? = nil) {
      self.scheme = scheme
      self.host = host
      self.port = port
      self.route = route
    }
  }

  private struct Host {
    var running = 0
    var waiting: [Element] = []
    /// The first element of `waiting` still queued (the ones before it have started).
    var head = 0

    var waitingCount: Int { waiting.count - head }
    var isIdle: Bool { running == 0 && waitingCount == 0 }

    /// Takes a slot now when `limit` (nil: none) allows and nothing waits; else queues `element`.
    mutating func start(_ element: Element, limit: Int?) -> Bool {
      if let limit, running >= limit || waitingCount > 0 {
        waiting.append(element)
        return false
      }
      running += 1
      return true
    }

    /// The next waiting element, which takes a slot, if `limit` (nil: none) allows one.
    mutating func takeNext(limit: Int?) -> Element? {
      guard waitingCount > 0, limit.map({ running < $0 }) ?? true else { return nil }
      let element = waiting[head]
      head += 1
      if head == waiting.count {
        waiting.removeAll(keepingCapacity: waiting.count <= 64)
        head = 0
      } else if head >= 64, head * 2 >= waiting.count {
        waiting.removeFirst(head)
        head = 0
      }
      running += 1
      return element
    }

    mutating func remove(where matches: (Element) -> Bool) -> Bool {
      guard let index = waiting[head...].firstIndex(where: matches) else { return false }
      waiting.remove(at: index)
      return true
    }
  }

  /// The most exchanges that run at once to an origin that takes one per connection; 0 or less:
  /// no limit.
  package let limit: Int
  private var hosts: [Origin: Host] = [:]
  /// Whether each origin's last response came in HTTP/2 or HTTP/3.
  private var multiplexes: [Origin: Bool] = [:]

  /// The most origins whose last response's version is kept; past it they are forgotten (and
  /// learned again from their next response).
  package static var versionMemoryLimit: Int { 1024 }

  package init(limit: Int) {
    self.limit = limit
  }

  /// How many elements wait, across origins.
  package var waitingCount: Int { hosts.values.reduce(0) { $0 + $1.waitingCount } }

  /// How many exchanges hold a slot to `origin`.
  package func runningCount(_ origin: Origin) -> Int { hosts[origin]?.running ?? 0 }

  /// The limit that holds for `origin` now, or nil when none does.
  private func limit(for origin: Origin) -> Int? {
    guard limit > 0 else { return nil }
    let held = multiplexes[origin].map { !$0 } ?? (origin.scheme != "https")
    return held ? limit : nil
  }

  /// Whether `element`, an exchange to `origin`, may start now (it then holds a slot); otherwise it
  /// waits behind those queued before it.
  package mutating func start(_ element: Element, to origin: Origin) -> Bool {
    let limit = limit(for: origin)
    return hosts[origin, default: Host()].start(element, limit: limit)
  }

  // The calls of every exchange below hash the origin (two strings) once per table: each finds its
  // entry's index and works through it.

  /// An exchange to `origin` that held a slot is over: the next waiting one, which takes its slot,
  /// or nil. An origin with nothing running and nothing waiting is let go.
  package mutating func finished(_ origin: Origin) -> Element? {
    guard let index = hosts.index(forKey: origin) else { return nil }
    hosts.values[index].running -= 1
    if hosts.values[index].isIdle {
      hosts.remove(at: index)
      return nil
    }
    let next = hosts.values[index].takeNext(limit: limit(for: origin))
    if hosts.values[index].isIdle { hosts.remove(at: index) }
    return next
  }

  /// A response from `origin` came in `httpVersion` (`"HTTP/1.1"`, `"HTTP/2"`…). Returns the
  /// waiting elements that may start now (every one, when the origin multiplexes), each holding a
  /// slot.
  package mutating func learned(httpVersion: String, of origin: Origin) -> [Element] {
    let multiplexing = Self.multiplexes(httpVersion: httpVersion)
    if let known = multiplexes.index(forKey: origin) {
      if multiplexes.values[known] != multiplexing { multiplexes.values[known] = multiplexing }
    } else {
      if multiplexes.count >= Self.versionMemoryLimit { multiplexes.removeAll() }
      multiplexes[origin] = multiplexing
    }
    guard let index = hosts.index(forKey: origin), hosts.values[index].waitingCount > 0 else { return [] }
    let limit = limit(for: origin)
    var ready: [Element] = []
    while let next = hosts.values[index].takeNext(limit: limit) { ready.append(next) }
    return ready
  }

  /// Takes the first waiting element to `origin` that `matches` off the queue (one given up on
  /// while it waited); whether there was one.
  @discardableResult
  package mutating func removeWaiting(to origin: Origin, where matches: (Element) -> Bool) -> Bool {
    guard hosts[origin]?.remove(where: matches) == true else { return false }
    if hosts[origin]!.isIdle { hosts[origin] = nil }
    return true
  }

  /// Every waiting element, taken off the queues (an engine ending with its transfers cancelled).
  package mutating func removeAllWaiting() -> [Element] {
    var all: [Element] = []
    for origin in Array(hosts.keys) {
      let host = hosts[origin]!
      all += host.waiting[host.head...]
      hosts[origin] = host.running == 0 ? nil : Host(running: host.running)
    }
    return all
  }

  static func multiplexes(httpVersion: String) -> Bool {
    httpVersion == "HTTP/2" || httpVersion == "HTTP/3"
  }
}
