import SessionFetcher
import Testing

@Suite("Curl engine: trust bundle files kept")
struct TrustFileIndexTests {
  /// One step of a script: what is done, and what the index must answer.
  enum Step {
    /// A bundle for `key` is made at `path` (in use by its transfer); the paths to delete.
    case add(String, path: String, deletes: [String])
    /// A transfer takes the bundle of `key`; the path it gets (nil: none is kept).
    case use(String, gets: String?)
    /// A transfer takes the bundle at `path` (by a remembered stamp); whether it is still kept.
    case usePath(String, kept: Bool)
    /// A transfer using `path` closes; the paths to delete.
    case release(String, deletes: [String])
  }

  static let scripts: [(name: String, limit: Int, steps: [Step], kept: Int)] = [
    (
      "under the limit nothing goes", 2,
      [.add("a", path: "A", deletes: []), .release("A", deletes: []), .add("b", path: "B", deletes: [])], 2
    ),
    (
      "past the limit the least recently used idle file goes", 2,
      [
        .add("a", path: "A", deletes: []), .release("A", deletes: []),
        .add("b", path: "B", deletes: []), .release("B", deletes: []),
        .use("a", gets: "A"), .release("A", deletes: []),
        .add("c", path: "C", deletes: ["B"]), .use("b", gets: nil), .use("a", gets: "A"),
      ], 2
    ),
    (
      "a file in use stays until its transfer closes", 1,
      [
        .add("a", path: "A", deletes: []), .add("b", path: "B", deletes: []),
        .add("c", path: "C", deletes: []), .release("B", deletes: ["B"]),
        .release("A", deletes: ["A"]), .release("C", deletes: []),
      ], 1
    ),
    (
      "a file two transfers use stays until both close", 1,
      [
        .add("a", path: "A", deletes: []), .use("a", gets: "A"), .release("A", deletes: []),
        .add("b", path: "B", deletes: []), .release("A", deletes: ["A"]), .release("B", deletes: []),
      ], 1
    ),
    (
      "a stamp that leads to a removed file finds nothing", 1,
      [
        .add("a", path: "A", deletes: []), .release("A", deletes: []),
        .add("b", path: "B", deletes: ["A"]), .usePath("A", kept: false), .usePath("B", kept: true),
      ], 1
    ),
    (
      "a key made again keeps its new file when the old one goes", 1,
      [
        .add("a", path: "A", deletes: []), .release("A", deletes: []),
        .add("a", path: "B", deletes: ["A"]), .use("a", gets: "B"), .release("B", deletes: []),
      ], 1
    ),
    (
      "a path nobody holds is given back without harm", 1,
      [.release("X", deletes: []), .add("a", path: "A", deletes: []), .release("A", deletes: [])], 1
    ),
  ]

  @Test(arguments: 0..<scripts.count)
  func script(_ index: Int) {
    let script = Self.scripts[index]
    var files = TrustFileIndex<String>(limit: script.limit)
    for (number, step) in script.steps.enumerated() {
      let label = Comment(rawValue: "\(script.name), step \(number): \(step)")
      switch step {
      case .add(let key, let path, let deletes):
        #expect(files.add(key, path: path) == deletes, label)
      case .use(let key, let gets):
        #expect(files.use(key) == gets, label)
      case .usePath(let path, let kept):
        #expect(files.use(path: path) == kept, label)
      case .release(let path, let deletes):
        #expect(files.release(path) == deletes, label)
      }
    }
    #expect(files.count == script.kept, Comment(rawValue: script.name))
  }

  /// File names are never given twice, whatever was removed: libcurl matches connections and its
  /// certificate-store cache by the CA file's path.
  @Test func fileNamesAreNeverReused() {
    var files = TrustFileIndex<Int>(limit: 1)
    var names: Set<String> = []
    for key in 0..<50 {
      let name = files.nextFileName()
      #expect(names.insert(name).inserted, "\(name) given twice")
      _ = files.add(key, path: name)
      _ = files.release(name)
    }
    #expect(files.count == 1)
  }
}
