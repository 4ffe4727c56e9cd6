/// A failure `fetch` reports with a message and one of curl's exit codes.
struct FetchFailure: Error {
  /// The URL was refused before any traffic (curl: unsupported protocol).
  static let refusedURL: Int32 = 1
  /// Anything without a more precise code.
  static let failed: Int32 = 1
  static let couldNotResolveHost: Int32 = 6
  static let couldNotConnect: Int32 = 7
  static let httpError: Int32 = 22
  static let writeError: Int32 = 23
  static let readError: Int32 = 26
  static let timedOut: Int32 = 28

  let exitCode: Int32
  let message: String

  init(_ exitCode: Int32, _ message: String) {
    self.exitCode = exitCode
    self.message = message
  }
}
