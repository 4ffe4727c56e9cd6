import Foundation

/// One URL of the list, and the file it is saved as.
struct MirrorEntry: Sendable {
  let line: Int
  let url: URL
  let name: String
}

/// The list file: one URL per line. A line that is not an http(s) URL is reported with its number
/// and skipped; the same URL twice is downloaded once; two URLs whose last path components are the
/// same are saved as `name` and `name-2` (by their order in the list, so every run agrees).
struct URLList {
  var entries: [MirrorEntry] = []
  var skippedLines: [Int] = []

  init(contentsOf path: String, report: (String) -> Void) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var seenURLs = Set<URL>()
    var usedNames = Set<String>()
    let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    let listName = (path as NSString).lastPathComponent
    for (index, bytes) in lines.enumerated() {
      let number = index + 1
      guard let text = String(bytes: bytes, encoding: .utf8) else {
        report("\(listName):\(number): not UTF-8 text; skipped")
        skippedLines.append(number)
        continue
      }
      let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
      if line.isEmpty || line.hasPrefix("#") { continue }
      guard let url = Self.httpURL(line) else {
        report("\(listName):\(number): not an http(s) URL: \(Self.shortened(line)); skipped")
        skippedLines.append(number)
        continue
      }
      guard seenURLs.insert(url).inserted else { continue }
      let name = Self.uniqueName(Self.fileName(of: url), among: &usedNames)
      entries.append(MirrorEntry(line: number, url: url, name: name))
    }
  }

  private static func httpURL(_ line: String) -> URL? {
    guard let components = URLComponents(string: line), let scheme = components.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
    else { return nil }
    return components.url
  }

  /// The URL's last path component, or `index.html`; never hidden, so it cannot collide with the
  /// `.NAME…part` and `.NAME.resume` files that hold unfinished downloads.
  private static func fileName(of url: URL) -> String {
    let last = url.lastPathComponent
    let name = last.isEmpty || last == "/" ? "index.html" : last
    return name.hasPrefix(".") ? "_" + name : name
  }

  private static func uniqueName(_ name: String, among used: inout Set<String>) -> String {
    var candidate = name
    var number = 2
    while !used.insert(candidate).inserted {
      let base = (name as NSString).deletingPathExtension
      let ext = (name as NSString).pathExtension
      candidate = ext.isEmpty ? "\(base)-\(number)" : "\(base)-\(number).\(ext)"
      number += 1
    }
    return candidate
  }

  private static func shortened(_ line: String) -> String {
    line.count > 60 ? "'\(line.prefix(57))...'" : "'\(line)'"
  }
}
