import Foundation

/// Works around a process crash in FoundationNetworking's `uploadTask(with:fromFile:)`.
///
/// FoundationNetworking feeds a file body to libcurl with dispatch I/O: while a read is pending it
/// pauses libcurl's send, and when the read completes it un-pauses the transfer with `try!`. When
/// the transfer ended in between (the connection was reset mid-upload, the server answered early
/// and closed, the task was cancelled), `curl_easy_pause` fails with CURLE_BAD_FUNCTION_ARGUMENT
/// and the whole process traps ("EasyHandle.swift:484: Fatal error: 'try!' expression unexpectedly
/// raised an error: Error Domain=libcurl.Easy Code=43"). The network soak (`Soak/`, resets in the
/// middle of uploads) hit it within a minute.
///
/// A body handed over as `Data` goes through `uploadTask(with:from:)`, whose source never pauses,
/// so file bodies up to ``inMemoryLimit`` are read into memory first and sent that way (also faster:
/// the file path moves about 180 MB/s). Larger files still take the file path, where the race
/// remains: for uploads of large files over unreliable networks, use the libcurl engine or
/// `sendsBodyFileChunked` (a stream body, which never pauses either).
package enum FileBodyInMemory {
  /// The largest file body sent from memory on the URLSession engine (16 MiB; FoundationNetworking
  /// copies it once more, so each such upload holds twice its size while it runs).
  package static let inMemoryLimit: Int64 = 16 * 1024 * 1024

  /// The file's bytes, when the URLSession engine should send it from memory; nil to send the file.
  ///
  /// The bytes are mapped from the file, not read into a malloc'd buffer: releasing them is an
  /// `munmap`. Freeing a large block that glibc's malloc had served by `mmap` raises its mmap
  /// threshold for the rest of the process (up to 32 MiB), after which large buffers come from
  /// malloc's arenas, which rarely give memory back (see "Linux notes" in the documentation).
  package static func inMemoryBody(for url: URL, limit: Int64 = inMemoryLimit) -> Data? {
    guard let size = PartFile.size(of: url), size <= limit else { return nil }
    return try? Data(contentsOf: url, options: .alwaysMapped)
  }
}
