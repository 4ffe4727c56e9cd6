import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A resumed download whose destination is set again: the same file however it is named continues
/// the part file with `Range`; another file gets the whole resource from byte 0. Never the rest of
/// the file alone, renamed into place as if whole (which `URL` equality of the two spellings did).
@Suite("Resumed downloads and their destination (scripted)")
struct ScriptedResumeDestinationTests {
  /// How the resumed fetcher names its destination, given the folder of the first download's
  /// `file.bin`.
  enum Naming: String, CaseIterable, Sendable {
    /// `file.bin` relative to the folder (a URL with a base).
    case relativeToTheFolder
    /// A path relative to the working folder, climbing with `..` to the root first.
    case relativeToTheWorkingFolder
    /// `sub/../file.bin` inside the folder.
    case dotDot
    /// Through a symbolic link to the folder.
    case symlinkedFolder
    /// `other.bin` in the same folder: another file.
    case anotherFile

    var isSameFile: Bool { self != .anotherFile }

    func destination(in folder: URL) throws -> URL {
      switch self {
      case .relativeToTheFolder:
        return URL(
          fileURLWithPath: "file.bin", relativeTo: URL(fileURLWithPath: folder.path, isDirectory: true))
      case .relativeToTheWorkingFolder:
        let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
        let climb = String(repeating: "../", count: depth)
        return URL(
          fileURLWithPath: climb + String(folder.appendingPathComponent("file.bin").path.dropFirst()))
      case .dotDot:
        try FileManager.default.createDirectory(
          at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        return URL(fileURLWithPath: folder.path + "/sub/../file.bin")
      case .symlinkedFolder:
        let link = folder.deletingLastPathComponent().appendingPathComponent(
          folder.lastPathComponent + "-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
        return link.appendingPathComponent("file.bin")
      case .anotherFile:
        return folder.appendingPathComponent("other.bin")
      }
    }
  }

  @Test(arguments: Naming.allCases)
  func aResumedDownloadIsWholeOrStartsAgain(_ naming: Naming) async throws {
    let engine = ScriptedEngine()
    let whole = ScriptedResumeTests.whole
    let again = ScriptedExchange.response(
      headers: ScriptedResumeTests.validators.merging(["Content-Length": "1000"]) { $1 }, body: whole)
    engine.respond(
      to: "/file", with: ScriptedResumeTests.interrupted(by: .fail(URLError(.networkConnectionLost))),
      naming.isSameFile ? ScriptedResumeTests.rest : again)
    let (fetcher, folder, destination) = try ScriptedResumeTests.download(on: engine)
    defer {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(
        at: folder.deletingLastPathComponent().appendingPathComponent(folder.lastPathComponent + "-link"))
    }
    fetcher.keepsPartialDownloadForResume = true
    #expect(await fetcher.fetchResult().urlError?.code == .networkConnectionLost)
    let token = try #require(fetcher.downloadResumeData)

    let resumed = try #require(SessionFetcher(resumeData: token))
    resumed.callbackQueue = DispatchQueue(label: "test.scripted.destination")
    resumed.run(on: engine)
    let named = try naming.destination(in: folder)
    #expect(named != destination)  // the spelling differs: URL equality alone would not match
    resumed.destinationFileURL = named
    let result = await resumed.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(engine.requests.count == 2)
    if naming.isSameFile {
      #expect(engine.requests.last?.header("Range") == "bytes=400-")
      #expect(try Data(contentsOf: destination) == whole)
    } else {
      #expect(engine.requests.last?.header("Range") == nil)
      #expect(try Data(contentsOf: named) == whole)
      #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
    // Nothing else is left in the folder: no part file, no other file.
    let expected =
      naming == .anotherFile ? ["other.bin"] : naming == .dotDot ? ["file.bin", "sub"] : ["file.bin"]
    #expect(DownloadTests.contents(folder).sorted() == expected)
  }

  /// Two URLs name the same file when their folders resolve to one folder and their names match.
  @Test func destinationsCompareAsTheFilesTheyName() throws {
    let folder = try makeTemporaryFolder()
    let link = folder.deletingLastPathComponent().appendingPathComponent(folder.lastPathComponent + "-alias")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
    defer {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(at: link)
    }
    let file = folder.appendingPathComponent("a.bin")
    let same = [
      URL(fileURLWithPath: "a.bin", relativeTo: URL(fileURLWithPath: folder.path, isDirectory: true)),
      URL(fileURLWithPath: folder.path + "/./a.bin"),
      URL(fileURLWithPath: folder.path + "/x/../a.bin"),
      link.appendingPathComponent("a.bin"),
      URL(fileURLWithPath: folder.path + "//a.bin"),
    ]
    for url in same {
      #expect(PartFile.namesSameFile(file, url), "\(url)")
    }
    let different = [
      folder.appendingPathComponent("b.bin"),
      folder.appendingPathComponent("A.bin"),
      folder.appendingPathComponent("sub").appendingPathComponent("a.bin"),
      URL(fileURLWithPath: "a.bin", relativeTo: folder),  // no trailing slash: the folder's parent
    ]
    for url in different {
      #expect(!PartFile.namesSameFile(file, url), "\(url)")
    }
  }
}
