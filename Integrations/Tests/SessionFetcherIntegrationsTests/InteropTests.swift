import FetcherService
import Foundation
import HTTPBinAPI
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import SessionFetcher
import SessionFetcherLog
import SessionFetcherOpenAPI
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The real httpbin of the interop suite: `.ci/run` (`.ci/servers.sh`) starts it and sets
/// `SESSIONFETCHER_HTTPBIN_URL`; without it these tests are skipped.
enum HTTPBin {
  static let url = ProcessInfo.processInfo.environment["SESSIONFETCHER_HTTPBIN_URL"].flatMap(
    URL.init(string:))
  static let isAvailable = url != nil
  static let skipMessage: Comment =
    "httpbin not running: set SESSIONFETCHER_HTTPBIN_URL (.ci/servers.sh's interop_start does)"

  /// A service for httpbin on 127.0.0.1 (plain http allowed).
  static func service() -> FetcherService {
    let service = FetcherService()
    service.allowedInsecureSchemes = ["http"]
    service.allowLocalhostRequest = true
    service.callbackQueue = DispatchQueue(label: "interop.callbacks")
    return service
  }
}

@Suite("The generated client against real httpbin", .enabled(if: HTTPBin.isAvailable, HTTPBin.skipMessage))
struct InteropTests {
  /// The same operations through `transport`, returning what each decoded.
  private func exercise(_ transport: any ClientTransport) async throws -> [String] {
    let client = Client(serverURL: HTTPBin.url!, transport: transport)
    var results: [String] = []

    let echoed = try await client.echoJSON(body: .json(.init(message: "héllo", count: 42))).ok.body.json
    results.append("echo \(echoed.method) \(echoed.json?.message ?? "-") \(echoed.json?.count ?? -1)")

    let headers = try await client.getHeaders(headers: .init(X_hyphen_Greeting: "bonjour")).ok.body.json
    results.append("header \(headers.headers.additionalProperties["X-Greeting"] ?? "-")")

    let teapot = try await client.getStatus(path: .init(code: 418))
    if case .default(let code, _) = teapot { results.append("status \(code)") }
    let missing = try await client.getStatus(path: .init(code: 404))
    if case .notFound = missing { results.append("status 404") }

    // httpbin streams at most 100 KiB.
    let stream = try await client.streamBytes(path: .init(n: 90_000), query: .init(seed: 7, chunk_size: 1024))
    var total = 0
    for try await chunk in try stream.ok.body.binary { total += chunk.count }
    results.append("stream \(total) bytes")

    let file = Data((0..<5000).map { UInt8($0 % 251) })
    let upload = try await client.uploadForm(
      body: .multipartForm([
        .note(.init(payload: .init(body: HTTPBody("a note")))),
        .file(.init(payload: .init(body: HTTPBody(file)), filename: "data.bin")),
      ])
    ).ok.body.json
    results.append("form note=\(upload.form.additionalProperties["note"] ?? "-")")
    results.append("files \(upload.files.additionalProperties.keys.sorted())")
    return results
  }

  @Test("Every operation of the document works, with the same results as on OpenAPIURLSession")
  func sideBySide() async throws {
    let service = HTTPBin.service()
    let ours = try await exercise(SessionFetcherTransport(service: service))
    let theirs = try await exercise(URLSessionTransport())
    #expect(ours == theirs)
    #expect(
      ours == [
        "echo POST héllo 42", "header bonjour", "status 418", "status 404", "stream 90000 bytes",
        "form note=a note", "files [\"file\"]",
      ])
  }

  @Test("Request bodies reach httpbin: known-length ones whole; longer ones go out chunked")
  func uploads() async throws {
    let transport = SessionFetcherTransport(service: HTTPBin.service())
    let text = String(repeating: "0123456789", count: 6000)  // 60,000 bytes: collected, Content-Length
    let (response, responseBody) = try await transport.send(
      HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/anything"), body: HTTPBody(text),
      baseURL: HTTPBin.url!, operationID: "upload")
    #expect(response.status.code == 200)
    let json = try await echo(responseBody)
    #expect(json["data"] as? String == text)
    #expect((json["headers"] as? [String: String])?["Content-Length"] == "60000")

    // Unknown length: streamed with chunked framing. (httpbin under gunicorn does not read chunked
    // bodies, so only the framing can be checked here; the in-process server checks the bytes.)
    let produced = Box(0)
    let streamed = HTTPBody(
      GeneratedChunks(count: 8, size: 32 * 1024, produced: produced), length: .unknown,
      iterationBehavior: .single)
    let (streamedResponse, streamedBody) = try await transport.send(
      HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/anything"), body: streamed,
      baseURL: HTTPBin.url!, operationID: "upload")
    #expect(streamedResponse.status.code == 200)
    let streamedJSON = try await echo(streamedBody)
    #expect((streamedJSON["headers"] as? [String: String])?["Transfer-Encoding"] == "chunked")
    #expect(produced.value == 8 * 32 * 1024)
  }

  private func echo(_ body: HTTPBody?) async throws -> [String: Any] {
    let data = try await Data(collecting: try #require(body), upTo: 8 * 1024 * 1024)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }
}
