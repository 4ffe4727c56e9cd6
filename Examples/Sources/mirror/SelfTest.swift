import FetcherService
import Foundation
import SessionFetcher

/// `mirror --selftest`: runs the mirror in this process against `MirrorTestServer`, with the faults
/// it is meant to survive, and checks the files on disk after each run.
enum MirrorSelfTest {
  static func run(engine: FetcherEngine?) async -> Int32 {
    let checks = Checks()
    do {
      let server = try MirrorTestServer()
      defer { server.stop() }
      let root = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-selftest-\(getpid())")
      try? FileManager.default.removeItem(at: root)
      try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: root) }
      let test = Stages(server: server, root: root, engine: engine, checks: checks)
      try await test.retriesAndDroppedConnection()
      try await test.interruption()
      try await test.badInput()
    } catch {
      checks.fail("the self-test could not run: \(error)")
    }
    Console.out(
      checks.failures == 0 ? "mirror: self-test passed (\(checks.count) checks)" : "mirror: self-test FAILED")
    return checks.failures == 0 ? 0 : 1
  }
}

/// Counts checks and prints each one.
final class Checks: Sendable {
  private let counts = MirrorLock((count: 0, failures: 0))
  var count: Int { counts.withLock { $0.count } }
  var failures: Int { counts.withLock { $0.failures } }

  func check(_ condition: Bool, _ what: String) {
    counts.withLock { counts in
      counts.count += 1
      if !condition { counts.failures += 1 }
    }
    Console.out(condition ? "  ok: \(what)" : "  FAILED: \(what)")
  }

  func fail(_ what: String) { check(false, what) }
}

private struct Stages {
  let server: MirrorTestServer
  let root: URL
  let engine: FetcherEngine?
  let checks: Checks

  private func options(_ list: URL, _ folder: URL) -> MirrorOptions {
    MirrorOptions(
      listPath: list.path, folder: folder, perHost: 4, retries: 2, retryInterval: 0.2, engine: engine)
  }

  private func writeList(_ name: String, _ lines: [String]) throws -> URL {
    let list = root.appendingPathComponent(name)
    try Data(lines.joined(separator: "\n").utf8).write(to: list)
    return list
  }

  private func files(in folder: URL) -> (visible: [String], hidden: [String]) {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return (names.filter { !$0.hasPrefix(".") }.sorted(), names.filter { $0.hasPrefix(".") }.sorted())
  }

  /// The size of `name`'s part file in `folder`, nil when there is none.
  private func partSize(of name: String, in folder: URL) -> Int? {
    let part = files(in: folder).hidden.first { $0.hasPrefix(".\(name).") && $0.hasSuffix(".part") }
    let attributes = part.flatMap {
      try? FileManager.default.attributesOfItem(atPath: folder.path + "/" + $0)
    }
    return (attributes?[.size] as? NSNumber)?.intValue
  }

  private func checkContents(_ names: [String], in folder: URL, _ what: String) {
    let wrong = names.filter {
      (try? Data(contentsOf: folder.appendingPathComponent($0))) != server.body(of: $0)
    }
    checks.check(wrong.isEmpty, "\(what): \(names.count) files equal the server's bytes \(wrong)")
  }

  /// Run 1: 503s with `Retry-After: 1`, and a large file whose connection drops half-way through
  /// every answer until the retries run out. Run 2: the large file resumes from its part file.
  func retriesAndDroppedConnection() async throws {
    Console.out("mirror self-test: retries, Retry-After, the per-host limit, a dropped large file resumed")
    let small = (0..<40).map { "small-\($0).bin" }
    for (index, name) in small.enumerated() { server.publish(name, size: 10_000 + index * 997) }
    server.publish("large.bin", size: 3_000_000)
    server.setFault(.unavailable(times: 1), for: "small-3.bin")
    server.setFault(.unavailable(times: 2), for: "small-17.bin")
    server.setFault(.dropHalfWay, for: "large.bin")
    let list = try writeList("list-1.txt", (["large.bin"] + small).map { server.url(of: $0).absoluteString })
    let folder = root.appendingPathComponent("run-1")

    let first = try await MirrorRun(options: options(list, folder), showsProgress: false).run()
    first.printSummary()
    checks.check(first.downloaded == 40 && first.exitStatus == 1, "run 1: 40 files downloaded, exit status 1")
    checks.check(first.failures.map(\.url) == [server.url(of: "large.bin")], "run 1: only large.bin failed")
    checkContents(small, in: folder, "run 1")
    for name in ["small-3.bin", "small-17.bin"] {
      let dates = server.hits(of: name).map(\.date)
      let gaps = zip(dates, dates.dropFirst()).map { $1.timeIntervalSince($0) }
      checks.check(
        gaps.count == (name == "small-3.bin" ? 1 : 2) && gaps.allSatisfy { $0 >= 0.95 },
        "\(name): each 503 retried after Retry-After's 1 s, not the 0.2 s backoff (\(Self.seconds(gaps)))")
    }
    checks.check(
      server.mostInFlight <= 4, "at most 4 requests at once to the host (\(server.mostInFlight) seen)")
    let partBytes = partSize(of: "large.bin", in: folder) ?? 0
    checks.check(
      first.keptForResume == ["large.bin"] && partBytes > 0
        && !files(in: folder).visible.contains("large.bin")
        && files(in: folder).hidden.contains(".large.bin.resume"),
      "run 1: large.bin kept as a part file of \(partBytes) bytes with its token, not in the folder")

    server.setFault(nil, for: "large.bin")
    let hitsBefore = server.hits(of: "large.bin").count
    let second = try await MirrorRun(options: options(list, folder), showsProgress: false).run()
    second.printSummary()
    checks.check(
      second.exitStatus == 0 && second.downloaded == 1 && second.alreadyThere == 40,
      "run 2: exit status 0, large.bin downloaded, 40 already there")
    let resumedRange = server.hits(of: "large.bin").dropFirst(hitsBefore).first?.range ?? "none"
    checks.check(
      resumedRange.hasPrefix("bytes=\(partBytes)-"), "run 2: large.bin resumed with Range \(resumedRange)")
    checkContents(["large.bin"], in: folder, "run 2")
    checks.check(files(in: folder).hidden.isEmpty, "run 2: no part files or tokens left")
  }

  /// A run interrupted by SIGINT while two large files are half-way: both are kept as part files
  /// with tokens, nothing partial is visible, and the next run completes them from where they were.
  func interruption() async throws {
    Console.out("mirror self-test: Ctrl-C half-way, then the next run")
    let large = ["big-a.bin", "big-b.bin"]
    let small = (0..<12).map { "more-\($0).bin" }
    for name in large {
      server.publish(name, size: 2_000_000)
      server.setFault(.stallHalfWay, for: name)
    }
    for (index, name) in small.enumerated() { server.publish(name, size: 5_000 + index * 101) }
    let list = try writeList("list-2.txt", (large + small).map { server.url(of: $0).absoluteString })
    let folder = root.appendingPathComponent("run-2")

    let run = Task { try await MirrorRun(options: options(list, folder), showsProgress: false).run() }
    let deadline = Date().addingTimeInterval(60)
    while large.contains(where: { partSize(of: $0, in: folder) ?? 0 < 1_000_000 }), Date() < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    checks.check(Date() < deadline, "both large files reached half-way before SIGINT")
    kill(getpid(), SIGINT)
    let stopped = try await run.value
    stopped.printSummary()
    checks.check(stopped.interrupted && stopped.exitStatus == 130, "SIGINT: the run stopped, exit status 130")
    let (visible, hidden) = files(in: folder)
    checks.check(Set(large).isDisjoint(with: visible), "SIGINT: no large file appeared in the folder")
    checkContents(visible, in: folder, "SIGINT: files that are there are whole")
    let tokens = hidden.filter { $0.hasSuffix(".resume") }
    checks.check(
      large.allSatisfy { partSize(of: $0, in: folder) == 1_000_000 && tokens.contains(".\($0).resume") }
        && hidden.allSatisfy { $0.hasSuffix(".part") || $0.hasSuffix(".resume") },
      "SIGINT: part files of 1000000 bytes kept with their tokens (\(tokens.count) tokens, nothing else hidden)"
    )

    let hitsBefore = large.map { server.hits(of: $0).count }
    for name in large { server.setFault(nil, for: name) }
    let next = try await MirrorRun(options: options(list, folder), showsProgress: false).run()
    next.printSummary()
    checks.check(next.exitStatus == 0, "the next run: exit status 0")
    let ranges = zip(large, hitsBefore).map { server.hits(of: $0).dropFirst($1).first?.range ?? "none" }
    checks.check(
      ranges.allSatisfy { $0.hasPrefix("bytes=1000000-") }, "the next run: both resumed with Range \(ranges)")
    checkContents(large + small, in: folder, "the next run")
    checks.check(files(in: folder).hidden.isEmpty, "the next run: no part files or tokens left")
  }

  /// Lines that are not URLs are reported and skipped; a folder that cannot be made, and a list
  /// that cannot be read, stop the run before anything is fetched.
  func badInput() async throws {
    Console.out("mirror self-test: bad input")
    let good = ["small-0.bin", "small-1.bin"].map { server.url(of: $0).absoluteString }
    let list = root.appendingPathComponent("list-3.txt")
    let lines = [good[0], "not a url", "ftp://example.com/file", "", "# a comment", good[1]]
    var bytes = Data(lines.joined(separator: "\n").utf8)
    bytes.append(contentsOf: [0x0A, 0xFF, 0xFE, 0x0A])
    try bytes.write(to: list)
    let folder = root.appendingPathComponent("run-3")
    let outcome = try await MirrorRun(options: options(list, folder), showsProgress: false).run()
    outcome.printSummary()
    checks.check(
      outcome.skippedLines == [2, 3, 7] && outcome.downloaded == 2 && outcome.exitStatus == 1,
      "lines 2, 3 and 7 reported and skipped, the 2 URLs downloaded, exit status 1")

    let blocker = root.appendingPathComponent("a-file")
    try Data("not a folder".utf8).write(to: blocker)
    for (listPath, target, expected) in [
      (list.path, blocker.appendingPathComponent("sub"), "cannot write to"),
      (root.appendingPathComponent("missing.txt").path, folder, "cannot read the URL list"),
    ] {
      var options = options(list, target)
      options.listPath = listPath
      do {
        _ = try await MirrorRun(options: options, showsProgress: false).run()
        checks.fail("\(expected): the run went ahead")
      } catch {
        Console.out("  mirror: \(error)")
        checks.check(
          error is MirrorSetupError && "\(error)".hasPrefix(expected),
          "one line, exit status 2: \(expected) …")
      }
    }
  }

  private static func seconds(_ gaps: [TimeInterval]) -> String {
    gaps.map { String(format: "%.2f s", $0) }.joined(separator: ", ")
  }
}
