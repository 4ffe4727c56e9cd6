import Foundation
import SessionFetcher

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The standard User-Agent of a fetcher service, as the original's
/// `GTMFetcherStandardUserAgentString`: `app/version system/version`.
enum StandardUserAgent {
  /// Computed once per process (reading the bundle and `uname` is not free).
  static let value: String = make(
    bundleIdentifier: Bundle.main.bundleIdentifier,
    bundleVersion: Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String
      ?? Bundle.main.object(forInfoDictionaryKey: "CFBundleVersion") as? String,
    processName: ProcessInfo.processInfo.processName, system: systemNameAndRelease())

  /// `app/version system/release`: app is the bundle identifier or `proc_` + the process name;
  /// version is the bundle's, else `unknown`; release is the leading numeric part of the kernel
  /// release (`6.1.0-18-amd64` → `6.1.0`). Each part is cleaned with ``cleaned(_:)``.
  static func make(
    bundleIdentifier: String?, bundleVersion: String?, processName: String,
    system: (name: String, release: String)
  ) -> String {
    let app = bundleIdentifier.flatMap { $0.isEmpty ? nil : $0 } ?? "proc_\(processName)"
    let version = bundleVersion.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
    let release = String(system.release.prefix { $0.isNumber || $0 == "." })
    return
      "\(cleaned(app))/\(cleaned(version)) \(cleaned(system.name))/\(release.isEmpty ? "unknown" : release)"
  }

  /// As `GTMFetcherCleanedUserAgentString`: spaces and commas become `_`; whitespace and the HTTP
  /// token separators `()<>@;:\"/[]?={}` are deleted. `"frog in tree/[1.2.3]"` → `"frog_in_tree1.2.3"`.
  static func cleaned(_ string: String) -> String {
    let separators = Set("()<>@;:\\\"/[]?={}")
    var result = ""
    for character in string {
      if character == " " || character == "," {
        result.append("_")
      } else if character.isWhitespace || separators.contains(character) {
        continue
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// `uname`'s system name and release, e.g. `("Linux", "6.1.0-18-amd64")`.
  static func systemNameAndRelease() -> (name: String, release: String) {
    var info = utsname()
    guard uname(&info) == 0 else { return ("unknown", "") }
    func string<T>(_ field: T) -> String {
      withUnsafeBytes(of: field) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
    }
    return (string(info.sysname), string(info.release))
  }
}
