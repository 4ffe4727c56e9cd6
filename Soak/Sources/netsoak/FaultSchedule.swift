import Foundation
import SoakSupport

/// Faults on the link and the server, one at a time with a pause between them: the link down for
/// 1–5 s (on either side), a blackhole (sometimes longer than the retry window), a narrow slow
/// link, nginx reloaded or restarted.
final class FaultSchedule: @unchecked Sendable {
  // `@unchecked Sendable`: the settings are constants; `counts` and `running` are guarded, and the
  // generator is used by the schedule's thread only.
  let lab: NetworkLab
  let nginx: NginxServer
  let gap: ClosedRange<Double>
  let timeout: TimeInterval
  let counts = Guarded<[String: Int]>([:])
  private let running = Guarded(false)
  private let finished = DispatchSemaphore(value: 0)
  private var generator: SplitMix64

  init(lab: NetworkLab, nginx: NginxServer, gap: ClosedRange<Double>, seed: UInt64, timeout: TimeInterval) {
    self.lab = lab
    self.nginx = nginx
    self.gap = gap
    self.timeout = timeout
    generator = SplitMix64(seed: seed)
  }

  enum Kind: String, CaseIterable {
    case linkDownHost = "link down (host side)"
    case linkDownNamespace = "link down (server side)"
    case blackhole = "blackhole"
    case slowLink = "slow link (tbf)"
    case reload = "nginx reload"
    case restart = "nginx restart"
  }

  func start() {
    running.with { $0 = true }
    Thread.detachNewThread { [self] in
      var order: [Kind] = []
      while running.with({ $0 }) {
        pause(Double.random(in: gap, using: &generator))
        guard running.with({ $0 }) else { break }
        if order.isEmpty { order = Kind.allCases.shuffled(using: &generator) }
        act(order.removeFirst())
      }
      finished.signal()
    }
  }

  /// Ends the fault in progress at once (the link back up, no blackhole, full speed) and stops.
  func stop() {
    guard running.with({ $0 }) else { return }
    running.with { $0 = false }
    finished.wait()
  }

  /// Sleeps, but wakes early when the schedule stops.
  private func pause(_ seconds: Double) {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end && running.with({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
  }

  private func act(_ kind: Kind) {
    counts.with { $0[kind.rawValue, default: 0] += 1 }
    switch kind {
    case .linkDownHost, .linkDownNamespace:
      let hostSide = kind == .linkDownHost
      lab.setLink(up: false, hostSide: hostSide)
      pause(Double.random(in: 1...5, using: &generator))
      lab.setLink(up: true, hostSide: hostSide)
    case .blackhole:
      // One in three outlasts the retry window (timeouts, then final errors); the others recover.
      let long = Int.random(in: 0..<3, using: &generator) == 0
      lab.setBlackhole(true)
      pause(
        long ? Double.random(in: 25...30, using: &generator) : Double.random(in: 2...10, using: &generator))
      lab.setBlackhole(false)
    case .slowLink:
      let rate = ["8mbit", "20mbit", "50mbit"].randomElement(using: &generator)!
      lab.setSlowLink(rate: rate)
      pause(Double.random(in: 8...20, using: &generator))
      lab.setSlowLink(rate: nil)
    case .reload:
      nginx.reload()
    case .restart:
      nginx.restart(downtime: Double.random(in: 0.3...2, using: &generator))
    }
  }
}
