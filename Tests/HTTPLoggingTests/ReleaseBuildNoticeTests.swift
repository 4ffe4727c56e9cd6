import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

@Suite("Logging in a release build without the opt-in")
struct ReleaseBuildNoticeTests {
  @Test(
    "the notice is due only when enabled, in a release build, without the opt-in",
    arguments: [
      (true, false, false, true),
      (true, true, false, false),
      (true, false, true, false),
      (true, true, true, false),
      (false, false, false, false),
    ])
  func decision(enabled: Bool, allowed: Bool, debug: Bool, due: Bool) {
    let notice = LoggingSettings.loggingOffNotice(
      enabled: enabled, allowedInReleaseBuilds: allowed, isDebugBuild: debug)
    #expect((notice != nil) == due)
    // The notice is due exactly when logging is enabled but not active.
    #expect(
      due
        == (enabled
          && !LoggingSettings.isActive(enabled: enabled, allowedInReleaseBuilds: allowed, isDebugBuild: debug))
    )
  }

  @Test("the notice names the opt-in property, and is printed once")
  func printedOnce() {
    var settings = LoggingSettings()
    settings.isEnabled = true
    let printed = Locked(false)
    let lines = Locked<[String]>([])
    for _ in 0..<3 {
      LoggingSettings.noteWhenLoggingIsOffInThisBuild(
        settings, isDebugBuild: false, printed: printed, print: { line in lines.withLock { $0.append(line) } }
      )
    }
    let printedLines = lines.withLock { $0 }
    #expect(printedLines.count == 1)
    let line = printedLines.first
    #expect(line?.contains("SessionFetcher.isLoggingAllowedInReleaseBuilds = true") == true)
    #expect(line?.contains("off in release builds") == true)

    // Not in a debug build, nor with the opt-in.
    let other = Locked(false)
    LoggingSettings.noteWhenLoggingIsOffInThisBuild(
      settings, isDebugBuild: true, printed: other, print: { line in lines.withLock { $0.append(line) } })
    settings.isAllowedInReleaseBuilds = true
    LoggingSettings.noteWhenLoggingIsOffInThisBuild(
      settings, isDebugBuild: false, printed: other, print: { line in lines.withLock { $0.append(line) } })
    #expect(lines.withLock { $0.count } == 1)
    #expect(other.withLock { $0 } == false)
  }
}
