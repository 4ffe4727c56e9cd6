import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An upload made with a service takes what the service gives its own fetchers, as the original's
/// upload fetcher does; its command fetchers carry the service's test block and User-Agent.
@Suite("Upload settings from the service")
struct ServiceInheritanceTests {
  static let start = URL(string: "https://upload.example.com/files.location")!
  static let location = "https://upload.example.com/files.upload"

  /// A service whose test block answers `start` with the upload URL and any chunk with `chunk`,
  /// recording every command's request.
  static func scriptedService(
    chunk: @escaping @Sendable () -> (HTTPURLResponse?, (any Error)?), requests: Recorder<URLRequest>
  ) -> FetcherService {
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "inheritance test callbacks")
    service.testBlock = { fetcher, respond in
      let request = fetcher.request ?? URLRequest(url: start)
      requests.append(request)
      if request.value(forHTTPHeaderField: "X-Goog-Upload-Command") == "start" {
        respond(
          HTTPURLResponse(
            url: start, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": location]), Data(), nil)
      } else {
        let (response, error) = chunk()
        respond(response, Data(), error)
      }
    }
    return service
  }

  static let finalAnswer = HTTPURLResponse(
    url: URL(string: location)!, statusCode: 200, httpVersion: "HTTP/1.1",
    headerFields: ["X-Goog-Upload-Status": "final"])

  @Test func retrySettingsComeFromTheService() {
    let service = FetcherService()
    service.isRetryEnabled = true
    service.retryBlock = { _, _, respond in respond(false) }
    service.minRetryInterval = 0.25
    service.maxRetryInterval = 7
    let upload = SessionUploadFetcher(
      request: URLRequest(url: Self.start), uploadMIMEType: "a/b", fetcherService: service)
    #expect(upload.isRetryEnabled)
    #expect(upload.retryBlock != nil)
    #expect(upload.minRetryInterval == 0.25)
    #expect(upload.maxRetryInterval == 7)
    let plain = SessionUploadFetcher(request: URLRequest(url: Self.start), uploadMIMEType: "a/b")
    #expect(plain.retryBlock == nil)
    #expect(plain.minRetryInterval == 1)
    #expect(plain.maxRetryInterval == 600)
  }

  @Test func securityAndDeliverySettingsComeFromTheService() {
    let service = FetcherService()
    let queue = DispatchQueue(label: "service queue")
    service.callbackQueue = queue
    service.allowedInsecureSchemes = ["http"]
    service.allowLocalhostRequest = true
    service.stopFetchingTriggersCompletionHandler = true
    let upload = SessionUploadFetcher(
      request: URLRequest(url: Self.start), uploadMIMEType: "a/b", fetcherService: service)
    #expect(upload.callbackQueue === queue)
    #expect(upload.allowedInsecureSchemes == ["http"])
    #expect(upload.allowLocalhostRequest)
    #expect(upload.stopFetchingTriggersCompletionHandler)
  }

  @Test func commandsCarryTheServicesTestBlockUserAgentAndTheUploadsComment() async throws {
    let requests = Recorder<URLRequest>()
    let service = Self.scriptedService(chunk: { (Self.finalAnswer, nil) }, requests: requests)
    service.userAgent = "Inheritance/1.0"
    let upload = SessionUploadFetcher(
      request: URLRequest(url: Self.start), uploadMIMEType: "a/b", fetcherService: service)
    upload.uploadData = Data(count: 10)
    upload.comment = "photo"
    let comments = Recorder<String>()
    upload.willBeginCommandFetcher = { comments.append($0.comment ?? "") }
    _ = try await upload.beginFetch()
    #expect(comments.values == ["photo (start)", "photo (0-9)"])
    #expect(requests.values.count == 2)
    #expect(
      requests.values.first?.value(forHTTPHeaderField: "User-Agent")?.contains("Inheritance/1.0") == true)
  }

  @Test func theRetryBlockIsAskedWhenOfflineWithTheRealSuggestion() async throws {
    let requests = Recorder<URLRequest>()
    let service = Self.scriptedService(
      chunk: { (nil, URLError(.notConnectedToInternet)) }, requests: requests)
    let asked = Recorder<Bool>()
    service.isRetryEnabled = true
    service.retryBlock = { suggestion, error, respond in
      #expect((error as? URLError)?.code == .notConnectedToInternet)
      asked.append(suggestion)
      respond(false)
    }
    let upload = SessionUploadFetcher(
      request: URLRequest(url: Self.start), uploadMIMEType: "a/b", fetcherService: service)
    upload.uploadData = Data(count: 10)
    await #expect(throws: URLError.self) { try await upload.beginFetch() }
    #expect(asked.values == [false])
  }

  @Test func theServicesDecoratorsDecorateEveryCommand() async throws {
    final class Tagging: FetcherDecorator {
      func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
        var request = request
        request.setValue("yes", forHTTPHeaderField: "X-Decorated")
        return request
      }
    }
    let server = try TestServer()
    defer { server.stop() }
    let service = FetcherService()
    service.addDecorator(Tagging())
    let upload = makeUploadFetcher(
      server, "/d.location?uploadStatus=400&uploadStatusChunks=1", service: service)
    upload.uploadData = bigData
    let (_, error) = await run(upload)
    #expect(error == nil)
    let requests = server.requests(path: "/d.location") + server.requests(path: "/d.upload")
    #expect(requests.count == 6)
    #expect(requests.allSatisfy { $0.header("X-Decorated") == "yes" })
  }
}
