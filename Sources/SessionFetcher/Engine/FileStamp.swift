import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What `stat` says of a regular file that changes whenever its contents do: device, inode, size,
/// and the times of the last write and of the last change of any kind (`ctime`, which no call can
/// set back). The TLS checks and the libcurl engine's trust bundles remember what they read from a
/// file under its stamp, and read it again only when the stamp differs.
///
/// A file written again within the resolution of its file system's timestamps, to the same size,
/// keeps its stamp: a stamp is trusted only once the file is ``isSettled``, its last change at
/// least ``settleInterval`` in the past (until then the file is read each time). The times are the
/// file system's: a network file system whose server's clock runs behind this machine's by more
/// than that interval can show a file as settled while it is still being written.
struct FileStamp: Hashable, Sendable {
  var device: UInt64
  var inode: UInt64
  var size: Int64
  var modified: Int64
  var modifiedNanoseconds: Int64
  var changed: Int64
  var changedNanoseconds: Int64

  /// How old a file's last change must be for its stamp to tell every later change: 2 s, past the
  /// one-second timestamps of the coarsest file systems in use.
  static let settleInterval: Int64 = 2

  /// The stamp of the regular file at `path`; nil when it is missing, unreadable or not a regular
  /// file.
  init?(path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    self.init(info)
  }

  /// The stamp of the regular file open as `descriptor`.
  init?(descriptor: Int32) {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    self.init(info)
  }

  init?(_ info: stat) {
    guard info.st_mode & S_IFMT == S_IFREG else { return nil }
    device = UInt64(truncatingIfNeeded: info.st_dev)
    inode = UInt64(truncatingIfNeeded: info.st_ino)
    size = Int64(info.st_size)
    #if canImport(Darwin)
      let (mtime, ctime) = (info.st_mtimespec, info.st_ctimespec)
    #else
      let (mtime, ctime) = (info.st_mtim, info.st_ctim)
    #endif
    modified = Int64(mtime.tv_sec)
    modifiedNanoseconds = Int64(mtime.tv_nsec)
    changed = Int64(ctime.tv_sec)
    changedNanoseconds = Int64(ctime.tv_nsec)
  }

  /// Whether the file's last write and change are ``settleInterval`` or more in the past: any later
  /// change gives it another stamp.
  var isSettled: Bool {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) - max(modified, changed) >= Self.settleInterval
  }
}
