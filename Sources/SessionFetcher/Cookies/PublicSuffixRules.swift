import Foundation

/// The Public Suffix List's rules, matched as its algorithm says (https://publicsuffix.org/list/):
/// the matching rule with the most labels prevails, an exception rule (`!www.ck`) over any other,
/// a wildcard (`*.ck`) matches one label, and a name no rule matches has its last label as its
/// public suffix. A pure value: the fallback list of ``PublicSuffixList`` where libpsl is missing.
struct PublicSuffixRules: Sendable {
  /// Plain rules (`co.uk`).
  private(set) var rules: Set<String> = []
  /// The part after `*.` of each wildcard rule (`ck` for `*.ck`).
  private(set) var wildcards: Set<String> = []
  /// Exception rules without their `!` (`www.ck`).
  private(set) var exceptions: Set<String> = []

  /// Rules from `text`, one per line; blank lines and `//` comments are skipped.
  init(text: String) {
    for line in text.split(whereSeparator: \.isNewline) {
      let rule = line.trimmingCharacters(in: .whitespaces).lowercased()
      if rule.isEmpty || rule.hasPrefix("//") { continue }
      if rule.hasPrefix("!") {
        exceptions.insert(String(rule.dropFirst()))
      } else if rule.hasPrefix("*.") {
        wildcards.insert(String(rule.dropFirst(2)))
      } else {
        rules.insert(rule)
      }
    }
  }

  /// The whole list, parsed once per process when first used.
  static let list = PublicSuffixRules(text: listText)

  /// The public suffix of `host` (canonical: lowercased, no trailing dot): always a suffix of it,
  /// at least its last label.
  func publicSuffix(of host: some StringProtocol) -> Substring {
    let host = Substring(host)
    var candidate = host
    // From the longest candidate to the shortest: the first rule met has the most labels.
    while true {
      let text = String(candidate)
      if exceptions.contains(text) {
        // An exception's public suffix is the rule without its first label.
        return Self.droppingFirstLabel(candidate) ?? candidate
      }
      if rules.contains(text) { return candidate }
      if let parent = Self.droppingFirstLabel(candidate), wildcards.contains(String(parent)) {
        return candidate
      }
      guard let shorter = Self.droppingFirstLabel(candidate) else { return candidate }
      candidate = shorter
    }
  }

  /// Whether `domain` is a public suffix itself.
  func isPublicSuffix(_ domain: some StringProtocol) -> Bool {
    publicSuffix(of: domain).utf8.count == domain.utf8.count
  }

  /// `host`'s public suffix with one more label, or nil when `host` is a public suffix.
  func registrableDomain(_ host: String) -> String? {
    let suffix = publicSuffix(of: host)
    guard suffix.startIndex > host.startIndex else { return nil }
    let beforeDot = host.utf8.index(before: suffix.startIndex)
    let label = host[..<beforeDot]
    let start =
      label.utf8.lastIndex(of: UInt8(ascii: ".")).map { host.utf8.index(after: $0) } ?? host.startIndex
    return String(host[start...])
  }

  /// `name` without its first label, or nil when it has one label.
  private static func droppingFirstLabel(_ name: Substring) -> Substring? {
    guard let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) else { return nil }
    return name[name.utf8.index(after: dot)...]
  }
}
