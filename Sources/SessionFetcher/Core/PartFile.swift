import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

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
  /// The device and inode of the file opened: ``commit()`` renames only that file.
  private var identity: (device: UInt64, inode: UInt64)?

  /// Creates the destination's folder (and parents) and an empty part file in it.
  init(destination: URL) throws {
    self.destination = destination
    let folder = destination.deletingLastPathComponent()
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    url = folder.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).part")
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
      throw SessionFetcherError.downloadFailed(description: "cannot create a file in \(folder.path)")
    }
    let (handle, identity) = try Self.openRegularFile(url)
    self.handle = handle
    self.identity = identity
  }

  /// Opens a part file kept by an earlier attempt or fetcher, to append after its first `length`
  /// bytes (anything beyond them is cut). Throws unless `url` is a regular file with one link
  /// (never following a symlink).
  init(resuming url: URL, destination: URL, length: Int64) throws {
    self.url = url
    self.destination = destination
    let (handle, identity) = try Self.openRegularFile(url)
    do {
      try handle.truncate(atOffset: UInt64(length))
      try handle.seek(toOffset: UInt64(length))
    } catch {
      try? handle.close()
      throw error
    }
    self.handle = handle
    self.identity = identity
    self.length = length
  }

  /// Opens `url` for writing without following a symlink, and checks that it is a regular file
  /// with one link: a part file is never a way to write somewhere else.
  private static func openRegularFile(_ url: URL) throws -> (FileHandle, (device: UInt64, inode: UInt64)) {
    let descriptor = open(url.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard descriptor >= 0 else {
      let reason = String(cString: strerror(errno))
      throw SessionFetcherError.downloadFailed(description: "cannot open \(url.path): \(reason)")
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var status = stat()
    guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_nlink == 1 else {
      try? handle.close()
      throw SessionFetcherError.downloadFailed(description: "\(url.path) is not a part file of its own")
    }
    return (handle, (UInt64(status.st_dev), UInt64(status.st_ino)))
  }

  /// What is at `url`, without following a symlink.
  enum Kind: Equatable {
    case absent
    /// A regular file with one link, of `size` bytes.
    case regular(size: Int64)
    /// A folder, a symlink, a hard link to another name, a device...
    case other
  }

  static func kind(of url: URL) -> Kind {
    var status = stat()
    guard lstat(url.path, &status) == 0 else { return errno == ENOENT ? .absent : .other }
    guard (status.st_mode & S_IFMT) == S_IFREG, status.st_nlink == 1 else { return .other }
    return .regular(size: Int64(status.st_size))
  }

  /// Deletes the part file at `url`: unlinks that name only (never a folder's contents, never what
  /// a symlink points to).
  static func remove(_ url: URL) {
    _ = unlink(url.path)
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
    var status = stat()
    guard let identity, lstat(url.path, &status) == 0, UInt64(status.st_dev) == identity.device,
      UInt64(status.st_ino) == identity.inode
    else {
      throw SessionFetcherError.downloadFailed(description: "the part file \(url.path) was replaced")
    }
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
    Self.remove(url)
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
