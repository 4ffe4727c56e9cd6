import Foundation
import SessionFetcher

/// The process-wide logging settings, behind one lock.
struct LoggingSettings: Sendable {
  var isEnabled = false
  var isAllowedInReleaseBuilds = false
  var directory: URL?
  var processName: String?
  var isToFileEnabled = true
  var filter: (@Sendable (SessionFetcher) -> Bool)?
  var isRedactionEnabled = true
  var redactor = LogRedactor()
  var maximumBodySize = 1_000_000
  /// Bumped whenever the current run must end (directory or process name changed).
  var runGeneration = 0
  /// The folder the caller chose for the run's files (``SessionFetcher/loggingRunDirectory``).
  var runDirectory: URL?
  /// The stamp the caller chose for run folder names (``SessionFetcher/loggingDateStamp``).
  var dateStamp: String?

  static let shared = Locked(LoggingSettings())
  /// Whether the unsafe opt-out warning was printed.
  static let warnedAboutRedaction = Locked(false)

  /// Whether logging is on, given the build: a debug build logs when enabled; a release build
  /// also needs the explicit opt-in.
  static func isActive(enabled: Bool, allowedInReleaseBuilds: Bool, isDebugBuild: Bool) -> Bool {
    enabled && (isDebugBuild || allowedInReleaseBuilds)
  }

  /// Whether the notice that this build does not log was printed.
  static let notedLoggingOffInThisBuild = Locked(false)

  /// The line for a process that enabled logging in a release build without the opt-in: nil when
  /// fetches are logged, or when logging is not enabled.
  static func loggingOffNotice(enabled: Bool, allowedInReleaseBuilds: Bool, isDebugBuild: Bool) -> String? {
    guard enabled, !isDebugBuild, !allowedInReleaseBuilds else { return nil }
    return "SessionFetcher.isLoggingEnabled is true, but logging is off in release builds and no fetch "
      + "is logged. To log in this build, also set SessionFetcher.isLoggingAllowedInReleaseBuilds = true."
  }

  /// Prints ``loggingOffNotice(enabled:allowedInReleaseBuilds:isDebugBuild:)`` when one is due, the
  /// first time only (`printed` remembers it). Asked when a fetch begins, not when logging is
  /// enabled: the opt-in may be set just after ``SessionFetcher/isLoggingEnabled``.
  static func noteWhenLoggingIsOffInThisBuild(
    _ settings: LoggingSettings, isDebugBuild: Bool = isDebugBuild,
    printed: Locked<Bool> = notedLoggingOffInThisBuild, print: (String) -> Void = { printLoggingNotice($0) }
  ) {
    guard
      let notice = loggingOffNotice(
        enabled: settings.isEnabled, allowedInReleaseBuilds: settings.isAllowedInReleaseBuilds,
        isDebugBuild: isDebugBuild)
    else { return }
    let first = printed.withLock { printed -> Bool in
      defer { printed = true }
      return !printed
    }
    if first { print(notice) }
  }

  static var isDebugBuild: Bool {
    #if DEBUG
      return true
    #else
      return false
    #endif
  }

  var isActive: Bool {
    Self.isActive(
      enabled: isEnabled, allowedInReleaseBuilds: isAllowedInReleaseBuilds, isDebugBuild: Self.isDebugBuild)
  }

  var effectiveDirectory: URL {
    directory ?? Self.processDefaultDirectory
  }

  var effectiveProcessName: String {
    processName ?? Self.processDefaultName
  }

  /// The default directory of this process, from its environment when first needed. Every logged
  /// fetch asks for it, and reading the environment and cleaning the name each time is costly.
  static let processDefaultDirectory = defaultDirectory(
    environment: ProcessInfo.processInfo.environment,
    temporaryDirectory: FileManager.default.temporaryDirectory)

  /// The default process name of this process (see ``processDefaultDirectory``).
  static let processDefaultName = cleanedProcessName(ProcessInfo.processInfo.processName)

  /// The default ``SessionFetcher/loggingDirectory``.
  ///
  /// - macOS: `~/Desktop/SessionFetcherLogs`.
  /// - Linux and others: `$XDG_STATE_HOME/SessionFetcherLogs` when that is an absolute path, else
  ///   `$HOME/.local/state/SessionFetcherLogs`, else `<temporary directory>/SessionFetcherLogs`.
  static func defaultDirectory(environment: [String: String], temporaryDirectory: URL) -> URL {
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
    #if os(macOS)
      if let home {
        return home.appendingPathComponent("Desktop", isDirectory: true).appendingPathComponent(
          "SessionFetcherLogs", isDirectory: true)
      }
    #else
      if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
        return URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent(
          "SessionFetcherLogs", isDirectory: true)
      }
      if let home {
        return home.appendingPathComponent(".local/state", isDirectory: true).appendingPathComponent(
          "SessionFetcherLogs", isDirectory: true)
      }
    #endif
    return temporaryDirectory.appendingPathComponent("SessionFetcherLogs", isDirectory: true)
  }

  /// A date stamp usable in a folder name: path separators and control characters removed;
  /// nil when nothing is left.
  static func cleanedDateStamp(_ stamp: String?) -> String? {
    guard let stamp else { return nil }
    let cleaned = String(
      String.UnicodeScalarView(
        stamp.unicodeScalars.filter {
          $0 != "/" && $0 != "\\" && !CharacterSet.controlCharacters.contains($0)
        }))
    return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? nil : cleaned
  }

  /// Spaces become `_`; path separators are removed.
  static func cleanedProcessName(_ name: String) -> String {
    let cleaned = name.replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "/", with: "")
    return cleaned.isEmpty ? "process" : cleaned
  }
}

/// Prints a line on standard error (logging's own notices; never fails).
func printLoggingNotice(_ message: String) {
  FileHandle.standardError.write(Data("SessionFetcher HTTPLogging: \(message)\n".utf8))
}
