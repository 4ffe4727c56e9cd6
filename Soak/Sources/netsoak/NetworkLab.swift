import Foundation
import SoakSupport

/// The soak's network: a namespace of its own holding the servers, joined to this host by a veth
/// pair, and the faults it can put on that link. Every name starts with ``prefix`` so that the soak
/// removes only its own leftovers (from an earlier run that was killed) and nothing else.
///
/// Lab 0 (the default) is `sfsoak-*` on 10.77.0.0/30; lab N (`--lab N`, 1...63) is `sfsoakN-*` on
/// 10.77.N.0/30, so that runs in different labs can go at once and never touch each other.
final class NetworkLab: @unchecked Sendable {
  // `@unchecked Sendable`: the names are constants; `blackholeTool` is set once in `setUp`.
  let prefix: String
  let namespace: String
  let hostLink: String
  let namespaceLink: String
  let hostAddress: String
  let serverAddress: String
  /// While the host side of the link is down its route is gone: this route (a higher metric than
  /// the link's) then answers "unreachable", so that nothing for the soak's addresses ever follows
  /// the default route off the machine.
  let fenceRoute: [String]
  private var blackholeTool = "link down"

  init(index: Int = 0) {
    prefix = index == 0 ? "sfsoak-" : "sfsoak\(index)-"
    namespace = "\(prefix)ns"
    hostLink = "\(prefix)h"
    namespaceLink = "\(prefix)n"
    hostAddress = "10.77.\(index).1"
    serverAddress = "10.77.\(index).2"
    fenceRoute = ["unreachable", "10.77.\(index).0/30", "metric", "4242"]
  }

  /// Why the soak cannot run here, or nil.
  func unavailableReason() -> String? {
    if getuid() != 0 { return "not running as root (network namespaces need it)" }
    if !Shell.has("ip") { return "`ip` (iproute2) is not installed" }
    if !Shell.has("nginx") { return "`nginx` is not installed" }
    if !Shell.has("tc") { return "`tc` (iproute2) is not installed" }
    let probe = "\(prefix)probe"
    Shell.run(["ip", "netns", "del", probe])
    guard Shell.run(["ip", "netns", "add", probe]).succeeded else {
      return "`ip netns add` is not permitted here"
    }
    Shell.run(["ip", "netns", "del", probe])
    return nil
  }

  /// Removes namespaces (and the processes in them) and links with this lab's prefix.
  func removeLeftovers(report: Bool = true) {
    let namespaces = Shell.run(["ip", "-o", "netns", "list"]).output.split(separator: "\n")
      .compactMap { $0.split(separator: " ").first.map(String.init) }
      .filter { $0.hasPrefix(prefix) }
    for namespace in namespaces {
      // Only processes inside the soak's own namespace: its nginx from a killed run.
      for pid in Shell.run(["ip", "netns", "pids", namespace]).output.split(separator: "\n") {
        if let pid = Int32(pid.trimmingCharacters(in: .whitespaces)) { kill(pid, SIGKILL) }
      }
      Shell.run(["ip", "netns", "del", namespace])
    }
    let links = Shell.run(["ip", "-o", "link", "show"]).output.split(separator: "\n").compactMap { line in
      line.split(separator: ":").dropFirst().first?.trimmingCharacters(in: .whitespaces)
        .split(separator: "@").first.map(String.init)
    }.filter { $0.hasPrefix(prefix) }
    for link in links { Shell.run(["ip", "link", "del", link]) }
    Shell.run(["ip", "route", "del"] + fenceRoute)
    if report && (!namespaces.isEmpty || !links.isEmpty) {
      say("removed leftovers of an earlier run: \((namespaces + links).joined(separator: ", "))")
    }
  }

  func setUp() throws {
    removeLeftovers()
    try Shell.require(["ip", "route", "replace"] + fenceRoute)
    try Shell.require(["ip", "netns", "add", namespace])
    try Shell.require(["ip", "link", "add", hostLink, "type", "veth", "peer", "name", namespaceLink])
    try Shell.require(["ip", "link", "set", namespaceLink, "netns", namespace])
    try Shell.require(["ip", "addr", "add", "\(hostAddress)/30", "dev", hostLink])
    try Shell.require(["ip", "link", "set", hostLink, "up"])
    try inside(["ip", "addr", "add", "\(serverAddress)/30", "dev", namespaceLink])
    try inside(["ip", "link", "set", namespaceLink, "up"])
    try inside(["ip", "link", "set", "lo", "up"])
    if Shell.has("nft") {
      blackholeTool = "nft"
    } else if Shell.has("iptables") {
      blackholeTool = "iptables"
    }
    say(
      "network: namespace \(namespace), veth \(hostLink) \(hostAddress) <-> \(namespaceLink) \(serverAddress)"
    )
    say("blackhole by: \(blackholeTool)")
  }

  func tearDown() {
    removeLeftovers(report: false)
  }

  func inside(_ arguments: [String]) throws {
    try Shell.require(["ip", "netns", "exec", namespace] + arguments)
  }

  // MARK: - Faults

  /// Takes the link down: on the host side (the route disappears: connects fail at once) or inside
  /// the namespace (the host side loses carrier: packets vanish).
  func setLink(up: Bool, hostSide: Bool) {
    let state = up ? "up" : "down"
    if hostSide {
      Shell.run(["ip", "link", "set", hostLink, state])
    } else {
      Shell.run(["ip", "netns", "exec", namespace, "ip", "link", "set", namespaceLink, state])
    }
  }

  /// Drops every packet that reaches the servers (nothing answers, not even a reset).
  func setBlackhole(_ on: Bool) {
    let exec = ["ip", "netns", "exec", namespace]
    switch blackholeTool {
    case "nft":
      if on {
        Shell.run(exec + ["nft", "add", "table", "inet", "sfsoak"])
        Shell.run(
          exec + [
            "nft", "add", "chain", "inet", "sfsoak", "blackhole",
            "{ type filter hook input priority 0 ; policy drop ; }",
          ])
      } else {
        Shell.run(exec + ["nft", "delete", "table", "inet", "sfsoak"])
      }
    case "iptables":
      Shell.run(exec + ["iptables", on ? "-I" : "-D", "INPUT", "-j", "DROP"])
    default:
      setLink(up: !on, hostSide: false)
    }
  }

  /// A narrow link in both directions (token bucket filter; the kernel here has no netem).
  func setSlowLink(rate: String?) {
    for (device, prefix) in [(hostLink, [String]()), (namespaceLink, ["ip", "netns", "exec", namespace])] {
      if let rate {
        Shell.run(
          prefix + [
            "tc", "qdisc", "replace", "dev", device, "root", "tbf", "rate", rate, "burst", "32kb",
            "latency", "400ms",
          ])
      } else {
        Shell.run(prefix + ["tc", "qdisc", "del", "dev", device, "root"])
      }
    }
  }
}
