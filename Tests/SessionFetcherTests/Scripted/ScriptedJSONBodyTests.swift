import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `setJSONBody` on the scripted engine: which body, method and Content-Type the request carries,
/// and that a value that fails to encode changes nothing. How the body is framed on the wire is in
/// `JSONBodyTests`.
@Suite("setJSONBody (scripted)")
struct ScriptedJSONBodyTests {
  @Test func theValueIsSentAsJSONWithItsContentType() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/notes", with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher("/notes")
    try fetcher.setJSONBody(JSONBodyTests.Note(title: "Hi", stars: 3))
    #expect(try await fetcher.beginFetch() == Data("ok".utf8))
    let request = try #require(engine.requests.first)
    #expect(request.method == "POST")
    #expect(request.header("Content-Type") == "application/json")
    #expect(
      try JSONDecoder().decode(JSONBodyTests.Note.self, from: request.body)
        == JSONBodyTests.Note(title: "Hi", stars: 3))
  }

  @Test func anExistingContentTypeIsKeptAndTheEncoderIsUsed() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/notes", with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher("/notes")
    fetcher.setRequestValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    struct Shape: Encodable { var sideCount = 4 }
    try fetcher.setJSONBody(Shape(), using: encoder)
    _ = try await fetcher.beginFetch()
    #expect(engine.requests.first?.body == Data(#"{"side_count":4}"#.utf8))
    #expect(engine.requests.first?.header("Content-Type") == "application/vnd.api+json")
  }

  @Test func aValueThatFailsToEncodeThrowsAndChangesNothing() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/notes", with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher("/notes")
    fetcher.bodyData = Data("previous".utf8)
    #expect(throws: EncodingError.self) { try fetcher.setJSONBody(JSONBodyTests.Broken()) }
    #expect(fetcher.bodyData == Data("previous".utf8))
    #expect(fetcher.request?.value(forHTTPHeaderField: "Content-Type") == nil)
    // What goes out is the body that was there before, not a partial one.
    _ = try await fetcher.beginFetch()
    #expect(engine.requests.first?.body == Data("previous".utf8))
    #expect(engine.requests.first?.header("Content-Type") == nil)
  }
}
