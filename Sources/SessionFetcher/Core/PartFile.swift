import Foundation

/// A download in progress: a hidden file beside the destination, renamed into place only when the
/// fetch succeeds, deleted on every other path.
///
/// Writing beside the destination (not in the temp folder) makes the final rename atomic: the same
/// file system, so the destination is either the old file or the complete new one. It also avoids
/// FoundationNetworking's download tasks, whose temp files are never deleted on Linux.
final class PartFile {
  let url: URL
  let destination: URL
  private var handle: FileHandle?
  private(set) var length: Int64 = 0

  /// Creates the destination's folder (and parents) and an empty part file in it.
  init(destination: URL) throws {
    self.destination = destination
    let folder = destination.deletingLastPathComponent()
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    url = folder.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).part")
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
      throw SessionFetcherError.downloadFailed(description: "cannot create a file in \(folder.path)")
    }
    handle = try FileHandle(forWritingTo: url)
  }

  /// Opens a part file kept by an earlier attempt or fetcher, to append after its first `length`
  /// bytes (anything beyond them is cut).
  init(resuming url: URL, destination: URL, length: Int64) throws {
    self.url = url
    self.destination = destination
    let handle = try FileHandle(forWritingTo: url)
    try handle.truncate(atOffset: UInt64(length))
    try handle.seek(toOffset: UInt64(length))
    self.handle = handle
    self.length = length
  }

  /// The size of the file at `url`, nil when there is none.
  static func size(of url: URL) -> Int64? {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
    return (attributes[.size] as? NSNumber)?.int64Value
  }

  func write(_ data: Data) throws {
    guard let handle else { throw SessionFetcherError.downloadFailed(description: "the part file is closed") }
    try handle.write(contentsOf: data)
    length += Int64(data.count)
  }

  /// Empties the file: a new response restarts the body.
  func truncate() throws {
    try handle?.truncate(atOffset: 0)
    try handle?.seek(toOffset: 0)
    length = 0
  }

  /// Renames the complete file onto the destination (replacing an existing file).
  func commit() throws {
    try handle?.close()
    handle = nil
    if rename(url.path, destination.path) != 0 {
      let reason = String(cString: strerror(errno))
      discard()
      throw SessionFetcherError.downloadFailed(description: "cannot move into \(destination.path): \(reason)")
    }
  }

  /// Closes the file and keeps it, for a later resume.
  func close() {
    try? handle?.close()
    handle = nil
  }

  /// Deletes the part file.
  func discard() {
    try? handle?.close()
    handle = nil
    try? FileManager.default.removeItem(at: url)
  }

  /// Checks, before any traffic, that the destination's folder exists or can be made and is writable.
  static func prepareFolder(for destination: URL) throws {
    let folder = destination.deletingLastPathComponent()
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      throw SessionFetcherError.downloadFailed(
        description: "cannot create the folder \(folder.path): \(error.localizedDescription)")
    }
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory),
      isDirectory.boolValue
    {
      throw SessionFetcherError.downloadFailed(description: "\(destination.path) is a folder")
    }
    guard FileManager.default.isWritableFile(atPath: folder.path) else {
      throw SessionFetcherError.downloadFailed(description: "the folder \(folder.path) is not writable")
    }
  }
}
