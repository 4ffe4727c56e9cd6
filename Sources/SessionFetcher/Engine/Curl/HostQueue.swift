/// Which exchanges the libcurl engine hands to libcurl now and which wait their turn, per origin.
///
/// libcurl caps the connections to a host (`CURLMOPT_MAX_HOST_CONNECTIONS`) by keeping transfers
/// past the cap on a pending list, but a transfer added while others wait can take a connection as
/// it frees, ahead of them: with 256 exchanges kept in flight to one HTTP/1.1 host over 16
/// connections, half waited under 2 ms and some over 130 ms while hundreds started after them went
/// through. So the engine keeps its own queue: to an origin whose responses come in HTTP/1.x (or
/// whose version is not known yet), at most `limit` exchanges run at once and the rest start in
/// the order they came. An origin that answers in HTTP/2 or HTTP/3 multiplexes its exchanges over a
/// connection: its queue is let go, and none waits here for it (libcurl's stream limits apply).
///
/// A value with no I/O: every call says which waiting elements may start now, each having taken a
/// slot, which the caller gives back with ``finished(_:)`` when that exchange is over. Elements the
/// caller has given up on while they waited (cancelled) stay queued; when one comes out, the caller
/// gives its slot straight back.
package struct HostQueue<Element> {
  /// An origin: what libcurl's per-host cap counts connections by, and the route to it.
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
    var multiplexes = false

    var waitingCount: Int { waiting.count - head }

    mutating func takeNext() -> Element {
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
  }

  /// The most exchanges that run at once to an origin not known to multiplex; 0 or less: no limit.
  package let limit: Int
  private var hosts: [Origin: Host] = [:]

  package init(limit: Int) {
    self.limit = limit
  }

  /// How many elements wait, across origins (cancelled ones still queued included).
  package var waitingCount: Int { hosts.values.reduce(0) { $0 + $1.waitingCount } }

  /// How many exchanges hold a slot to `origin`.
  package func runningCount(_ origin: Origin) -> Int { hosts[origin]?.running ?? 0 }

  /// Whether `element`, an exchange to `origin`, may start now (it then holds a slot); otherwise it
  /// waits behind those queued before it.
  package mutating func start(_ element: Element, to origin: Origin) -> Bool {
    var host = hosts[origin] ?? Host()
    defer { hosts[origin] = host }
    if limit <= 0 || host.multiplexes || (host.running < limit && host.waitingCount == 0) {
      host.running += 1
      return true
    }
    host.waiting.append(element)
    return false
  }

  /// An exchange to `origin` that held a slot is over: the next waiting one, which takes its slot,
  /// or nil. An origin with nothing running and nothing waiting is forgotten.
  package mutating func finished(_ origin: Origin) -> Element? {
    guard var host = hosts[origin] else { return nil }
    host.running -= 1
    var next: Element?
    if host.waitingCount > 0, host.multiplexes || host.running < limit {
      next = host.takeNext()
    }
    hosts[origin] = host.running == 0 && host.waitingCount == 0 ? nil : host
    return next
  }

  /// A response from `origin` came in `httpVersion` (`"HTTP/1.1"`, `"HTTP/2"`…): whether it
  /// multiplexes. Returns the waiting elements that may start now (every one, when it does), each
  /// holding a slot.
  package mutating func learned(httpVersion: String, of origin: Origin) -> [Element] {
    guard var host = hosts[origin] else { return [] }
    host.multiplexes = Self.multiplexes(httpVersion: httpVersion)
    var ready: [Element] = []
    while host.waitingCount > 0, host.multiplexes || host.running < limit {
      ready.append(host.takeNext())
    }
    hosts[origin] = host
    return ready
  }

  /// Every waiting element, taken off the queues (an engine ending with its transfers cancelled).
  package mutating func removeAllWaiting() -> [Element] {
    var all: [Element] = []
    for (origin, host) in hosts {
      all += host.waiting[host.head...]
      hosts[origin] = host.running == 0 ? nil : Host(running: host.running, multiplexes: host.multiplexes)
    }
    return all
  }

  static func multiplexes(httpVersion: String) -> Bool {
    httpVersion == "HTTP/2" || httpVersion == "HTTP/3"
  }
}
