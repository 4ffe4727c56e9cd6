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
///
/// The fetcher decides what happens to its part file under its own lock and does the disk work
/// after it, so that no reader of the fetcher ever waits for the disk. A part file is therefore
/// made without touching the disk (``init(creatingFor:)``, ``init(continuing:destination:length:)``),
/// and its disk work runs one operation at a time on the thread that asked for it (``open()``,
/// ``write(_:)``, ``truncate()``, ``commit()``). Ending it (``close()``, ``discard()``) never
/// waits: while an operation is in flight (a write on a slow disk), the end is left to that
/// operation's thread, which performs it when its operation returns. So a stop never closes a
/// descriptor under a write, and never deletes a file another operation is still writing.
final class PartFile: @unchecked Sendable {
  // `@unchecked Sendable`: `state` is behind `condition`; `handle` is touched only by the one
  // thread whose operation is in flight, or by the thread that ends the file when none is.
  let url: URL
  let destination: URL
  /// What ``open()`` does: make a new empty file, or continue a kept one.
  private let origin: Origin
  /// Called before each write with the chunk's size (see `FetcherConfiguration.partFileWillWrite`).
  private let willWrite: (@Sendable (Int) -> Void)?
  private let condition = NSCondition()
  private var state: State
  private var handle: FileHandle?
  /// The device and inode of the file opened: ``commit()`` renames only that file.
  private var identity: (device: UInt64, inode: UInt64)?

  private enum Origin {
    case created
    case continued
  }

  /// How a part file ends.
  private enum End {
    /// Closed and kept (for a resume).
    case close
    /// Closed and deleted.
    case discard
  }

  /// The disk work in flight on a part file.
  private enum Operation: Equatable {
    case open
    /// A write of so many bytes.
    case write(Int)
    case truncate
    case commit
  }

  private struct State {
    var length: Int64
    var inFlight: Operation?
    /// The end asked for while an operation was in flight: done by that operation's thread.
    var pendingEnd: End?
    var isEnded = false
  }

  /// A new part file beside `destination`, with a fresh hidden name; ``open()`` creates it.
  init(creatingFor destination: URL, willWrite: (@Sendable (Int) -> Void)? = nil) {
    self.destination = destination
    let folder = destination.deletingLastPathComponent()
    url = folder.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).part")
    origin = .created
    self.willWrite = willWrite
    state = State(length: 0)
  }

  /// A part file kept by an earlier attempt or fetcher at `url`, to append after its first
  /// `length` bytes; ``open()`` opens it and cuts anything beyond them.
  init(
    continuing url: URL, destination: URL, length: Int64, willWrite: (@Sendable (Int) -> Void)? = nil
  ) {
    self.url = url
    self.destination = destination
    origin = .continued
    self.willWrite = willWrite
    state = State(length: length)
  }

  /// The bytes written so far (a write in flight not counted).
  var length: Int64 {
    condition.lock()
    defer { condition.unlock() }
    return state.length
  }

  /// The bytes the file holds for certain, for keeping it to resume: nil while a write or a
  /// truncation is in flight (how much of it lands is not known yet).
  var settledLength: Int64? {
    condition.lock()
    defer { condition.unlock() }
    switch state.inFlight {
    case nil, .open?: return state.length
    case .write?, .truncate?, .commit?: return nil
    }
  }

  /// Creates the destination's folder (and parents) and the empty file, or opens the kept file
  /// and cuts it to its kept length. A continued file is opened without following a symlink and
  /// must be a regular file with one link. When this throws, the part file is ended: a file it
  /// created is deleted, a kept file left as it is.
  func open() throws {
    let keptLength = length
    do {
      try perform(.open) {
        switch origin {
        case .created:
          let folder = destination.deletingLastPathComponent()
          try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
          guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw SessionFetcherError.downloadFailed(description: "cannot create a file in \(folder.path)")
          }
          (handle, identity) = try Self.openRegularFile(url)
        case .continued:
          let (opened, openedIdentity) = try Self.openRegularFile(url)
          do {
            try opened.truncate(atOffset: UInt64(keptLength))
            try opened.seek(toOffset: UInt64(keptLength))
          } catch {
            try? opened.close()
            throw error
          }
          (handle, identity) = (opened, openedIdentity)
        }
      }
    } catch {
      end(origin == .created ? .discard : .close)
      throw error
    }
  }

  /// Opens `url` for writing without following a symlink, and checks that it is a regular file
  /// with one link: a part file is never a way to write somewhere else.
  private static func openRegularFile(_ url: URL) throws -> (FileHandle, (device: UInt64, inode: UInt64)) {
    let descriptor = openForWriting(url.path)
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
    return (handle, (UInt64(truncatingIfNeeded: status.st_dev), UInt64(status.st_ino)))
  }

  /// What is at `url`, without following a symlink.
  enum Kind: Equatable {
    case absent
    /// A regular file with one link, of `size` bytes.
    case regular(size: Int64)
    /// A folder, a symlink, a hard link to another name, a device...
    case other
  }

  /// The file a destination names: its folder's absolute path with `.`, `..` and symbolic links
  /// resolved, and its own name. Two destination URLs name the same file exactly when these are
  /// equal, however each was written (relative to the working folder, through `..`, through a
  /// symbolic link to the folder); `URL` equality compares the spelling instead.
  static func canonicalPath(of destination: URL) -> String {
    let absolute = destination.absoluteURL.standardizedFileURL
    let folder = absolute.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL.path
    return (folder.hasSuffix("/") ? folder : folder + "/") + absolute.lastPathComponent
  }

  /// Whether two destination URLs name the same file (see ``canonicalPath(of:)``).
  static func namesSameFile(_ first: URL, _ second: URL) -> Bool {
    first == second || canonicalPath(of: first) == canonicalPath(of: second)
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

  /// Appends `data`. Throws when the write fails or the file was ended.
  func write(_ data: Data) throws {
    try perform(.write(data.count)) {
      guard let handle else {
        throw SessionFetcherError.downloadFailed(description: "the part file is closed")
      }
      willWrite?(data.count)
      try handle.write(contentsOf: data)
    }
  }

  /// Empties the file: a new response restarts the body.
  func truncate() throws {
    try perform(.truncate) {
      try handle?.truncate(atOffset: 0)
      try handle?.seek(toOffset: 0)
    }
  }

  /// Renames the complete file onto the destination (replacing an existing file), then ends it.
  func commit() throws {
    try perform(.commit) {
      try handle?.close()
      handle = nil
      var status = stat()
      guard let identity, lstat(url.path, &status) == 0,
        UInt64(truncatingIfNeeded: status.st_dev) == identity.device,
        UInt64(status.st_ino) == identity.inode
      else {
        throw SessionFetcherError.downloadFailed(description: "the part file \(url.path) was replaced")
      }
      if rename(url.path, destination.path) != 0 {
        let reason = String(cString: strerror(errno))
        Self.remove(url)
        throw SessionFetcherError.downloadFailed(
          description: "cannot move into \(destination.path): \(reason)")
      }
    }
  }

  /// Closes the file and keeps it, for a later resume; never waits (see the type's notes).
  func close() {
    end(.close)
  }

  /// Closes and deletes the file; never waits (see the type's notes).
  func discard() {
    end(.discard)
  }

  /// Runs one operation's disk work, after any other in flight, unless the file has ended. An end
  /// asked for meanwhile is performed here, once the work is done.
  private func perform(_ operation: Operation, _ work: () throws -> Void) throws {
    condition.lock()
    while state.inFlight != nil { condition.wait() }
    guard !state.isEnded else {
      condition.unlock()
      throw SessionFetcherError.downloadFailed(description: "the part file is closed")
    }
    state.inFlight = operation
    condition.unlock()

    var failure: (any Error)?
    do { try work() } catch { failure = error }

    condition.lock()
    state.inFlight = nil
    if failure == nil {
      switch operation {
      case .write(let count):
        state.length += Int64(count)
      case .truncate:
        state.length = 0
      case .open, .commit:
        break
      }
    }
    if operation == .commit { state.isEnded = true }
    let end = state.isEnded ? nil : state.pendingEnd
    if end != nil { state.isEnded = true }
    state.pendingEnd = nil
    condition.broadcast()
    condition.unlock()
    if let end { finish(end) }
    if let failure { throw failure }
  }

  /// Ends the file now, or leaves the end to the operation in flight. The end asked for last wins,
  /// except that a discard is never turned back into a close.
  private func end(_ end: End) {
    condition.lock()
    guard !state.isEnded else {
      condition.unlock()
      return
    }
    if state.inFlight != nil {
      state.pendingEnd = state.pendingEnd == .discard ? .discard : end
      condition.unlock()
      return
    }
    state.isEnded = true
    condition.unlock()
    finish(end)
  }

  private func finish(_ end: End) {
    try? handle?.close()
    handle = nil
    if end == .discard { Self.remove(url) }
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

/// Opens `path` for writing without following a symlink (the system's `open`, which
/// ``PartFile/open()`` hides inside the type).
private func openForWriting(_ path: String) -> Int32 {
  open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
}
