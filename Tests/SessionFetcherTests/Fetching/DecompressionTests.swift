import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Records every piece of body the fetcher hands over (to its monitors), and the largest.
private final class BodyPieceRecorder: FetcherEventMonitor, @unchecked Sendable {
  // `@unchecked Sendable`: every field is behind `lock`.
  private let lock = NSLock()
  private var total = 0
  private var largest = 0

  var totals: (total: Int, largest: Int) { lock.withLock { (total, largest) } }

  func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
    lock.withLock {
      total += data.count
      largest = max(largest, data.count)
    }
  }
}

@Suite("Decompression", .serialized)
struct DecompressionTests {
  @Test(arguments: ContentCoding.allCases, [false, true])
  func encodedBodiesArriveDecoded(_ coding: ContentCoding, _ chunked: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let count = 200_000
    let fetcher = server.fetcher("/encoded?bytes=\(count)&coding=\(coding)\(chunked ? "&chunked=1" : "")")
    let progress = Recorder<(Int64, Int64)>()
    fetcher.receivedProgressBlock = { bytes, total in progress.append((bytes, total)) }
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: count))
    #expect(fetcher.downloadedLength == Int64(count))
    #expect(await eventually { progress.values.last?.1 == Int64(count) })
    #expect(progress.values.reduce(0) { $0 + $1.0 } == Int64(count))
  }

  @Test func downloadProgressCountsDecodedBytes() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("decoded.bin")
    let count = 300_000
    let fetcher = server.fetcher("/encoded?bytes=\(count)")
    fetcher.destinationFileURL = destination
    let progress = Recorder<(Int64, Int64, Int64)>()
    fetcher.downloadProgressBlock = { bytes, written, expected in progress.append((bytes, written, expected))
    }
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil)
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: count))
    #expect(await eventually { progress.values.last?.1 == Int64(count) })
    // The Content-Length is that of the encoded body: the decoded total is not known ahead.
    #expect(progress.values.allSatisfy { $0.2 == -1 || $0.2 == Int64(count) })
  }

  @Test func aRequestsOwnAcceptEncodingIsSentAsGiven() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/encoded?bytes=5000")
    fetcher.setRequestValue("gzip;q=1.0, identity;q=0.5", forHTTPHeaderField: "Accept-Encoding")
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.data == TestServer.patternBytes(count: 5000))
    #expect(server.requests.last?.header("Accept-Encoding") == "gzip;q=1.0, identity;q=0.5")

    let plain = server.fetcher("/encoded?bytes=10&coding=deflate")
    #expect(await plain.fetchResult(timeout: 60).data == TestServer.patternBytes(count: 10))
    let offered = server.requests.last?.header("Accept-Encoding") ?? ""
    #expect(offered.contains("gzip") && offered.contains("deflate"))
  }

  @Test(arguments: ContentCoding.allCases, [false, true])
  func aBombEndsAtTheLimitOfDecodedBytes(_ coding: ContentCoding, _ chunked: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let limit: Int64 = 4 << 20
    // 64 MiB decoded, 16 times the limit. Not more: FoundationNetworking inflates on the work queue
    // all URLSessions of the process share, and other tests' requests wait for it (see Linux notes).
    let fetcher = server.fetcher("/bomb?decoded=\(64 << 20)&coding=\(coding)\(chunked ? "&chunked=1" : "")")
    fetcher.maximumResponseBodyLength = limit
    let recorder = BodyPieceRecorder()
    fetcher.eventMonitors = [recorder]
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError == .responseTooLarge(limit: limit))
    let (total, largest) = recorder.totals
    // Handed over in small pieces, and no more than the limit and one piece.
    #expect(largest <= 1 << 20)
    #expect(Int64(total) <= limit + Int64(largest))
    #expect(Int64(total) > limit - Int64(largest))
    #expect(fetcher.downloadedData == nil || fetcher.downloadedData?.isEmpty == true)
  }

  @Test func aBombToAFileIsCutByTheTimeoutAndLeavesNothing() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("bomb.bin")
    // The in-memory limit does not apply to a download: a stop does (here, the monitor's).
    let fetcher = server.fetcher("/bomb?decoded=\(1 << 30)")
    fetcher.destinationFileURL = destination
    fetcher.eventMonitors = [StopAtLengthMonitor(8 << 20)]
    fetcher.stopFetchingTriggersCompletionHandler = true
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError == .cancelled)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
  }

  @Test(arguments: ContentCoding.allCases)
  func aCorruptBodyFailsWithCannotDecodeContentData(_ coding: ContentCoding) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/corrupt-encoding?coding=\(coding)")
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.urlError?.code == .cannotDecodeContentData)
  }

  @Test(arguments: ContentCoding.allCases)
  func aTruncatedBodyIsNotTakenForAWholeOne(_ coding: ContentCoding) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/corrupt-encoding?coding=\(coding)&truncate=1")
    let result = await fetcher.fetchResult(timeout: 60)
    // libcurl (7.88) does not check that a gzip or zlib stream ended when the HTTP message does:
    // the fetch succeeds with the bytes decoded so far, on both engines (see Linux notes).
    withKnownIssue("libcurl does not report a content-coded stream cut at a clean message end") {
      #expect(result.urlError?.code == .cannotDecodeContentData)
    }
    #expect(fetcher.downloadedLength < 65_536)
  }

  @Test func aCorruptDownloadLeavesNoFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("corrupt.bin")
    let fetcher = server.fetcher("/corrupt-encoding")
    fetcher.destinationFileURL = destination
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.urlError?.code == .cannotDecodeContentData)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).isEmpty)
  }

  @Test func endlessOneByteMembersEndWithAClearError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var request = URLRequest(url: server.url("/gzip-members"))
    request.timeoutInterval = 3
    let fetcher = server.fetcher("/gzip-members")
    fetcher.request = request
    fetcher.maximumResponseBodyLength = 64 << 10
    fetcher.resourceTimeoutInterval = 6
    let result = await fetcher.fetchResult(timeout: 40)
    // libcurl decodes the first member only: it refuses the bytes after it, or (when they came in
    // the same read) drops them, and then no decoded byte arrives until the idle timeout.
    let code = try #require(result.urlError?.code)
    #expect(code == .cannotDecodeContentData || code == .timedOut)
    #expect(fetcher.downloadedLength <= 1)
  }

  /// Peak memory, measured in a child process (`decoding-probe`, built beside the tests) so that no
  /// other test's memory counts: a 1 GiB bomb with a 16 MiB limit. libcurl driven directly inflates
  /// only as the fetcher takes the bytes; FoundationNetworking hands them over asynchronously, so
  /// what it inflated before the cancellation reached it (about 20 MiB here) comes on top.
  @Test(
    .linuxOnly("needs Linux: measures peak memory in decoding-probe, a child process"),
    arguments: [false, true])
  func aBombsPeakMemoryStaysNearTheLimit(_ chunked: Bool) async throws {
    #if os(Linux)
      let limit = 16 << 20
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "decoding-probe", arguments: [String(limit)] + (chunked ? ["chunked"] : []), timeout: 150)
      let line = lines.last ?? ""
      #expect(exit.exitCode == 0, "\(exit): \(line)")
      #expect(line.contains("larger than the limit of \(limit) bytes"), "\(line)")
      let words = line.split(separator: " ")
      let baseline = try #require(words.firstIndex(of: "baseline").flatMap { Int(words[$0 + 1]) })
      let peak = try #require(words.firstIndex(of: "peak").flatMap { Int(words[$0 + 1]) })
      let growthKiB = peak - baseline
      let allowance = FetcherEngine.default == .libcurl ? 8 << 10 : 64 << 10
      #expect(growthKiB <= limit / 1024 + allowance, "\(line)")
    #endif
  }
}
