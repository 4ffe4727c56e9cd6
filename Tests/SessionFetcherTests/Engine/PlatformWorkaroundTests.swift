import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Each FoundationNetworking workaround of the URLSession engine is on where FoundationNetworking
/// moves the bytes (`FOUNDATION_NETWORKING`), and off on Apple platforms, where its bug is not. CI
/// runs this suite in both builds on Linux: the usual one, and the one with every
/// FoundationNetworking-only branch off (`SESSIONFETCHER_APPLE_CHECK=1`).
@Suite("Platform workarounds")
struct PlatformWorkaroundTests {
  #if FOUNDATION_NETWORKING
    static let onFoundationNetworking = true
  #else
    static let onFoundationNetworking = false
  #endif

  @Test func eachWorkaroundAppliesOnlyWhereItsBugIs() throws {
    let on = Self.onFoundationNetworking
    let session = URLSessionEngineSession(configuration: .ephemeral)
    defer { session.invalidateAndCancel() }
    let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/upload")))
    // A stream of known length is spooled first (BodySpool) only where it would be framed twice.
    #expect(session.sendsSizedStreams(for: request) == !on)
    // IPv6 literals and upper-case schemes are respelled only for FoundationNetworking's parser.
    #expect(IPv6LiteralHost.isNeeded == on)
    let upper = try #require(URL(string: "HTTP://Example.COM/a"))
    #expect((URLSessionEngineSession.urlForFoundationNetworking(upper) != nil) == on)
    // Range windows by default only where the engine cannot pause a download.
    #expect((URLSessionEngineSession.defaultDownloadWindowLength != nil) == on)
    #expect((session.pausing == .suspendTask) == !on)
  }

  /// A stream body reaches URLSession as it is on FoundationNetworking (which reads it without
  /// stream events), and as a bound pair's input half on Apple platforms (see `BodyStreamPump`).
  @Test func aBodyStreamIsHandedOverAsItIsOnlyOnFoundationNetworking() {
    let task = URLSessionEngineTask(
      dispatcher: URLSessionDelegateRouter(onInvalidate: {}), queue: DispatchQueue(label: "test.platform"))
    let stream = InputStream(data: Data("body".utf8))
    let handed = task.urlSessionBodyStream(stream, length: 4)
    #if canImport(Darwin)
      #expect(handed !== stream)
    #else
      #expect(handed === stream)
    #endif
    #expect(task.bodyStreamLength == 4)
  }
}
