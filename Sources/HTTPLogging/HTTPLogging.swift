import Foundation
import SessionFetcher

/// Logging of every fetch of the process to files, and of each fetch to ``SessionFetcher/log``.
///
/// ```swift
/// import HTTPLogging
///
/// SessionFetcher.isLoggingEnabled = true   // debug builds; release builds also need
///                                          // `isLoggingAllowedInReleaseBuilds = true`
/// ```
///
/// All settings are process-wide and may be read and changed from any thread.
extension SessionFetcher {
  /// The key under which a finished fetch's text log is kept in `SessionFetcher.properties`.
  public static let logPropertyKey = "SessionFetcher.HTTPLogging.log"

  /// Whether every fetch of the process is logged (default false).
  ///
  /// Turning it on registers the logging `FetcherEventMonitor` (once per process). A debug build
  /// (`DEBUG` defined) then logs; a release build logs only when
  /// ``isLoggingAllowedInReleaseBuilds`` is also true. Fetches that began while logging was off
  /// are not logged. The run folder's path is printed on standard error when the first fetch is
  /// logged to files. In a release build without the opt-in, the first fetch prints instead, once
  /// per process, that logging is off in release builds and which property turns it on.
  public static var isLoggingEnabled: Bool {
    get { LoggingSettings.shared.withLock { $0.isEnabled } }
    set {
      if newValue { LoggingMonitor.registerOnce() }
      LoggingSettings.shared.withLock { $0.isEnabled = newValue }
    }
  }

  /// The explicit opt-in a release build needs to log (default false). Logs hold URLs, headers and
  /// bodies; even redacted, they are for debugging, not for production.
  public static var isLoggingAllowedInReleaseBuilds: Bool {
    get { LoggingSettings.shared.withLock { $0.isAllowedInReleaseBuilds } }
    set { LoggingSettings.shared.withLock { $0.isAllowedInReleaseBuilds = newValue } }
  }

  /// Whether fetches are being logged now: ``isLoggingEnabled``, and in a release build
  /// ``isLoggingAllowedInReleaseBuilds`` as well.
  public static var isLoggingActive: Bool {
    LoggingSettings.shared.withLock { $0.isActive }
  }

  /// The folder that holds one folder per run (default below). Setting it ends the current run:
  /// the next logged fetch begins a new run folder there.
  ///
  /// Default:
  /// - Linux: `$XDG_STATE_HOME/SessionFetcherLogs` when `XDG_STATE_HOME` is an absolute path, else
  ///   `~/.local/state/SessionFetcherLogs`, else (no `HOME`) `<temporary directory>/SessionFetcherLogs`
  ///   (the environment as it is when the default is first needed).
  /// - macOS: `~/Desktop/SessionFetcherLogs`, like the original's `~/Desktop/GTMHTTPDebugLogs`.
  ///
  /// Each run folder, `<process>_log_<yyyy-MM-dd_HH-mm-ss>` (`_2`, `_3`… when taken), holds
  /// `index.html` (one entry per fetch), `fetch_<N>.txt` (the text log of fetch N),
  /// `fetch_<N>_request.<ext>` and `fetch_<N>_response.<ext>` (bodies longer than 256 bytes, and
  /// binary request bodies; earlier redirect hops and attempts `fetch_<N>_<K>_response.<ext>`;
  /// shorter bodies are in the text log or as base64 in the HAR file) and `log.har` (HAR 1.2, one entry per attempt and
  /// redirect hop, valid JSON after every fetch). `<ext>` is never one a browser runs: HTML, XML
  /// and SVG bodies are `.html.txt`, `.xml.txt` and `.svg.txt`. `<process>_log_newest.html` beside
  /// the run folders links to the newest run's index. Run folders are created 0700 (and this
  /// folder too, when logging creates it), log files 0600.
  public static var loggingDirectory: URL {
    get { LoggingSettings.shared.withLock { $0.effectiveDirectory } }
    set {
      LoggingSettings.shared.withLock {
        $0.directory = newValue
        $0.runGeneration += 1
      }
    }
  }

  /// The process name used in run folder and symlink names. Default: the process's name with
  /// spaces replaced by `_`. Setting it ends the current run.
  public static var loggingProcessName: String {
    get { LoggingSettings.shared.withLock { $0.effectiveProcessName } }
    set {
      LoggingSettings.shared.withLock {
        $0.processName = LoggingSettings.cleanedProcessName(newValue)
        $0.runGeneration += 1
      }
    }
  }

  /// Whether logged fetches are written to files (default true). When false, only
  /// ``SessionFetcher/log`` is produced.
  public static var isLoggingToFileEnabled: Bool {
    get { LoggingSettings.shared.withLock { $0.isToFileEnabled } }
    set { LoggingSettings.shared.withLock { $0.isToFileEnabled = newValue } }
  }

  /// Whether secrets are redacted from every log output (default true; see ``LogRedactor``).
  ///
  /// Turning it off is unsafe — logs then hold credentials, cookies and tokens — and prints a
  /// warning on standard error once per process.
  public static var isLogRedactionEnabled: Bool {
    get { LoggingSettings.shared.withLock { $0.isRedactionEnabled } }
    set {
      LoggingSettings.shared.withLock { $0.isRedactionEnabled = newValue }
      guard !newValue else { return }
      let warn = LoggingSettings.warnedAboutRedaction.withLock { warned -> Bool in
        defer { warned = true }
        return !warned
      }
      if warn {
        printLoggingNotice(
          "WARNING: log redaction is off; logs will contain credentials, cookies and tokens in clear.")
      }
    }
  }

  /// What counts as a secret in logs, and the marker that replaces it. Change its sets to add your
  /// own sensitive headers or parameter names:
  ///
  /// ```swift
  /// SessionFetcher.logRedactor.sensitiveHeaderNames.insert("x-my-session")
  /// ```
  public static var logRedactor: LogRedactor {
    get { LoggingSettings.shared.withLock { $0.redactor } }
    set { LoggingSettings.shared.withLock { $0.redactor = newValue } }
  }

  /// Chooses which fetches are logged: when set, only fetchers for which it returns true (checked
  /// when each fetch begins). Use it to leave out health checks or polling, or to log one subsystem.
  ///
  /// ```swift
  /// SessionFetcher.loggingFilter = { $0.request?.url?.host != "metrics.internal" }
  /// ```
  public static var loggingFilter: (@Sendable (SessionFetcher) -> Bool)? {
    get { LoggingSettings.shared.withLock { $0.filter } }
    set { LoggingSettings.shared.withLock { $0.filter = newValue } }
  }

  /// The most bytes of each request and response body kept in memory and logged (default
  /// 1,000,000). Longer bodies are logged up to the cap with a "truncated" note.
  public static var loggingMaximumBodySize: Int {
    get { LoggingSettings.shared.withLock { $0.maximumBodySize } }
    set { LoggingSettings.shared.withLock { $0.maximumBodySize = max(0, newValue) } }
  }

  /// The folder of the current run's files (the original's `setLogDirectoryForCurrentRun:`).
  ///
  /// Reading it: the folder set here, when one is; else the current run's folder once a fetch has
  /// been logged to files in it, nil before. It writes the files of every fetch that has finished
  /// first, as ``flushLogs()`` does.
  ///
  /// Setting it, before the first logged fetch or later, ends the current run: the next fetch
  /// logged to files begins a run whose files (`index.html`, `log.har`, `fetch_<N>.txt` and the
  /// body files) go exactly into this folder, not into a dated folder of ``loggingDirectory``.
  /// The folder is created (0700, with its parents) when missing and used as it is when it exists
  /// (files of an earlier run there with the same names are replaced); no
  /// `<process>_log_newest.html` link is made for it. A path that is a file, or that cannot be
  /// created, turns file logging off with a notice, as any write failure does. Setting nil goes
  /// back to a new dated folder per run.
  ///
  /// ```swift
  /// SessionFetcher.loggingRunDirectory = URL(fileURLWithPath: "/tmp/ci-artifacts/http-logs")
  /// SessionFetcher.isLoggingEnabled = true
  /// ```
  public static var loggingRunDirectory: URL? {
    get {
      if let chosen = LoggingSettings.shared.withLock({ $0.runDirectory }) { return chosen }
      return LoggingMonitor.shared.writer.currentRunFolder
    }
    set {
      LoggingSettings.shared.withLock {
        $0.runDirectory = newValue?.standardizedFileURL
        $0.runGeneration += 1
      }
    }
  }

  /// The stamp in the name of the next run's folder, `<process>_log_<stamp>` (the original's
  /// `setLoggingDateStamp:`). nil (the default): the date and time the run begins,
  /// `yyyy-MM-dd_HH-mm-ss`. Setting it ends the current run. Path separators and control
  /// characters are removed from the stamp; a stamp left empty counts as nil. A folder of that
  /// name that exists gets `_2`, `_3`… as usual. Not used when ``loggingRunDirectory`` is set.
  public static var loggingDateStamp: String? {
    get { LoggingSettings.shared.withLock { $0.dateStamp } }
    set {
      LoggingSettings.shared.withLock {
        $0.dateStamp = LoggingSettings.cleanedDateStamp(newValue)
        $0.runGeneration += 1
      }
    }
  }

  /// Waits until the files of every fetch that has finished are written. File writes happen on a
  /// background queue a few milliseconds after each fetch ends (and at the latest when the process
  /// ends normally); call this before reading the log files from the same process.
  public static func flushLogs() {
    LoggingMonitor.shared.writer.flush()
  }

  /// The text log of this fetch, once it has finished while logging was active; nil otherwise.
  ///
  /// Available in the completion handler, and also when ``isLoggingToFileEnabled`` is false.
  /// Redacted like every other log output.
  public var log: String? {
    property(forKey: SessionFetcher.logPropertyKey) as? String
  }
}
