#if os(Linux)
  @testable import FetcherTesting
  import Testing

  @Suite("Child process output")
  struct ChildProcessOutputTests {
    static let table = [
      "-----------------------------------------------------",
      "Suppressions used:",
      "  count      bytes template",
      "      3         96 libcurl",
      "-----------------------------------------------------",
    ]

    /// LeakSanitizer's table is written before the child's buffered standard output is flushed:
    /// the child's lines after it are kept.
    @Test func leakSanitizersTableIsTakenOutWhereverItStands() {
      #expect(ChildProcess.ownLines(["a"] + Self.table + ["b", ""]) == ["a", "b"])
      #expect(ChildProcess.ownLines(Self.table + ["b"]) == ["b"])
      #expect(ChildProcess.ownLines(["a"] + Self.table) == ["a"])
      #expect(ChildProcess.ownLines(["a", "-----", "b", ""]) == ["a", "-----", "b"])
    }
  }
#endif
