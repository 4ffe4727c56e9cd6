import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The original's testFetchDataSchemeToFile (and its _WithoutFetcherService twin): a `data:` URL
/// fetched to a destination file.
@Suite("data: URLs to a file")
struct DataSchemeDownloadTests {
  static let text = """
    Four score and seven years ago our fathers brought forth on this continent, a new nation, \
    conceived in Liberty, and dedicated to the proposition that all men are created equal.
    """

  @Test(arguments: [false, true])
  func dataSchemeToFile(withService: Bool) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "data-scheme-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("gettysburg.txt")
    let escaped = try #require(Self.text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed))
    let urlString = "data:,\(escaped)"
    let fetcher: SessionFetcher
    if withService {
      let service = makeService()
      service.allowedInsecureSchemes = ["data"]
      fetcher = service.fetcher(urlString: urlString)
    } else {
      fetcher = SessionFetcher.fetcher(urlString: urlString)
      fetcher.allowedInsecureSchemes = ["data"]
      fetcher.callbackQueue = DispatchQueue(label: "test.data-scheme.callbacks")
    }
    fetcher.destinationFileURL = destination
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == nil)
    #expect(try String(contentsOf: destination, encoding: .utf8) == Self.text)
    // Only the destination: no part file left beside it.
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["gettysburg.txt"])
    #expect(await eventually { recorder.completionInvoked == 1 })
    #expect(recorder.started == 1 && recorder.stopped == 1)
    #expect(recorder.retryDelayStarted == 0 && recorder.retryDelayStopped == 0)
  }
}
