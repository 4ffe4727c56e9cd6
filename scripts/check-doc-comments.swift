// Lists the public symbols that have no doc comment in the symbol graph files given as arguments
// (`swift build -Xswiftc -emit-symbol-graph …` output) and exits 1 when there are any.
//
//   swift scripts/check-doc-comments.swift .build/symbol-graphs/*.symbols.json
//
// Symbols the compiler synthesizes (Equatable's `==`, Hashable's `hash(into:)`, Codable's members…)
// have no source to document and are skipped, as are `extension` blocks. A symbol that implements a protocol requirement
// counts as documented when the compiler carries the requirement's comment over to it.
import Foundation

struct Missing: Comparable {
  let location: String
  let description: String

  static func < (lhs: Missing, rhs: Missing) -> Bool {
    (lhs.location, lhs.description) < (rhs.location, rhs.description)
  }
}

/// Only symbols declared in files under the current directory (the package root) are checked.
let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.path + "/"
var missing: [Missing] = []
var checked = 0
for path in CommandLine.arguments.dropFirst() {
  guard let data = FileManager.default.contents(atPath: path),
    let graph = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
    let symbols = graph["symbols"] as? [[String: Any]]
  else {
    FileHandle.standardError.write(Data("check-doc-comments: cannot read \(path)\n".utf8))
    exit(2)
  }
  for symbol in symbols {
    let identifier = (symbol["identifier"] as? [String: Any])?["precise"] as? String ?? ""
    guard !identifier.contains("::SYNTHESIZED::") else { continue }
    // An `extension` block is not API itself; its members are checked one by one.
    let kindIdentifier = (symbol["kind"] as? [String: Any])?["identifier"] as? String ?? ""
    guard kindIdentifier != "swift.extension" else { continue }
    let access = symbol["accessLevel"] as? String ?? ""
    guard access == "public" || access == "open" else { continue }
    // Symbols re-exported from other modules (FoundationNetworking) have no location here.
    guard let place = symbol["location"] as? [String: Any], let uri = place["uri"] as? String,
      let file = URL(string: uri)?.path, file.hasPrefix(root)
    else { continue }
    checked += 1
    let lines = ((symbol["docComment"] as? [String: Any])?["lines"] as? [[String: Any]]) ?? []
    let text = lines.compactMap { $0["text"] as? String }.joined().trimmingCharacters(in: .whitespaces)
    guard text.isEmpty else { continue }
    let kind = (symbol["kind"] as? [String: Any])?["displayName"] as? String ?? "symbol"
    let name = ((symbol["pathComponents"] as? [String]) ?? []).joined(separator: ".")
    let line = ((place["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 } ?? 0
    let location = String(file.dropFirst(root.count)) + ":\(line)"
    missing.append(Missing(location: location, description: "\(kind) \(name)"))
  }
}

for entry in Set(missing.map { "\($0.location): \($0.description)" }).sorted() {
  print("\(entry): public symbol without a doc comment")
}
let count = Set(missing.map { "\($0.location)\($0.description)" }).count
print("check-doc-comments: \(checked) public symbols, \(count) without a doc comment")
exit(count == 0 ? 0 : 1)
