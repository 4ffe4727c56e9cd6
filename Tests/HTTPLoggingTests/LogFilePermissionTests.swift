import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

/// The permission bits of the file or folder at `url` (not following a symlink).
func permissionBits(_ url: URL) throws -> mode_t {
  var info = stat()
  guard lstat(url.path, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
  return info.st_mode & 0o7777
}

extension LoggingFileTests {
  @Test("run folders are 0700 and every log file 0600")
  func filePermissions() async throws {
    try await withLogging { folder in
      // A logging directory the writer creates is the owner's only as well.
      let created = folder.appendingPathComponent("made-by-the-writer", isDirectory: true)
      SessionFetcher.loggingDirectory = created
      let paths = ["/bytes/1000", "/json", "/status/500"]
      for path in paths { _ = await server.fetcher(path).fetchResult() }
      let upload = server.fetcher("/echo")
      upload.bodyData = Data([0, 1, 2, 3])
      _ = await upload.fetchResult()
      SessionFetcher.flushLogs()

      #expect(try permissionBits(created) == 0o700)
      let run = try #require(try runFolders(in: created).first)
      #expect(try permissionBits(run) == 0o700)
      let names = try FileManager.default.contentsOfDirectory(atPath: run.path)
      // index.html, log.har, four text logs, the /bytes/1000 body, and the binary upload's request.
      #expect(names.count >= 8, "\(names)")
      for name in names {
        #expect(try permissionBits(run.appendingPathComponent(name)) == 0o600, "\(name)")
      }
      let link = created.appendingPathComponent("LogTest_log_newest.html")
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == run.lastPathComponent
          + "/index.html")
    }
  }
}
