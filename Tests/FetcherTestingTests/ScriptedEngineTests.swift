import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The scripted engine itself: which script answers which request, what it records, and how its
/// steps reach the fetcher.
@Suite("ScriptedEngine")
struct ScriptedEngineTests {
  @Test func anUnscriptedRequestFailsWithAClearError() async throws {
    let engine = ScriptedEngine()
    let result = await engine.fetcher("/nothing").fetchResult()
    #expect(
      result.error as? ScriptedEngineError == .noScript(method: "GET", url: "https://scripted.test/nothing"))
    #expect(engine.requests.first?.wasUnscripted == true)
  }

  @Test func theMostSpecificPatternAnswersAndTheLastExchangeRepeats() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/item", with: .response(body: Data("path".utf8)))
    engine.respond(to: "/item?id=2", with: .response(body: Data("query".utf8)))
    engine.respond(
      to: "https://other.test/item", with: .response(body: Data("first".utf8)),
      .response(body: Data("url".utf8)))
    engine.enqueue(.response(body: Data("queued".utf8)))
    #expect(await engine.fetcher("/item?id=1").fetchResult().data == Data("path".utf8))
    #expect(await engine.fetcher("/item?id=2").fetchResult().data == Data("query".utf8))
    #expect(await engine.fetcher("https://other.test/item").fetchResult().data == Data("first".utf8))
    #expect(await engine.fetcher("https://other.test/item").fetchResult().data == Data("url".utf8))
    #expect(await engine.fetcher("https://other.test/item").fetchResult().data == Data("url".utf8))
    #expect(await engine.fetcher("/elsewhere").fetchResult().data == Data("queued".utf8))
    #expect(await engine.fetcher("/elsewhere").fetchResult().error is ScriptedEngineError)
    #expect(engine.requests(matching: "/item").count == 5)
  }

  @Test func itRecordsTheMethodHeadersAndBody() async throws {
    let engine = ScriptedEngine()
    engine.enqueue(.response(status: 201))
    let fetcher = engine.fetcher("/upload")
    fetcher.bodyData = Data("payload".utf8)
    fetcher.setRequestValue("text/plain", forHTTPHeaderField: "Content-Type")
    let sent = Recorder<Int64>()
    fetcher.sendProgressBlock = { _, total, _ in sent.append(total) }
    #expect(await fetcher.fetchResult().error == nil)
    let request = try #require(engine.requests.first)
    #expect(request.method == "POST")
    #expect(request.url == engine.url("/upload"))
    #expect(request.header("content-type") == "text/plain")
    #expect(request.body == Data("payload".utf8))
    #expect(request.events.map(\.kind) == [.resumed, .completed(failed: false)])
    #expect(await eventually { sent.values == [7] })
  }

  /// A gate holds the exchange between chunks until the test opens it; nothing arrives meanwhile.
  @Test func aGateHoldsTheExchangeUntilOpened() async {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    engine.enqueue(
      ScriptedExchange([.head(status: 200), .body(Data("a".utf8)), .wait(gate), .body(Data("b".utf8))]))
    let fetcher = engine.fetcher("/held")
    let received = Recorder<Int64>()
    fetcher.receivedProgressBlock = { _, total in received.append(total) }
    let result = Task { await fetcher.fetchResult() }
    #expect(await eventually { received.values == [1] })
    #expect(fetcher.isFetching)
    #expect(!gate.isOpen)
    gate.open()
    #expect(await result.value.data == Data("ab".utf8))
    #expect(received.values == [1, 2])
  }

  @Test func anErrorAfterSomeChunksFailsTheFetch() async {
    let engine = ScriptedEngine()
    engine.enqueue(
      ScriptedExchange([
        .head(status: 200), .body(Data("part".utf8)), .fail(URLError(.networkConnectionLost)),
      ]))
    let result = await engine.fetcher("/cut").fetchResult()
    #expect(result.urlError?.code == .networkConnectionLost)
    #expect(engine.requests.first?.events.last?.kind == .completed(failed: true))
    #expect(engine.requests.first?.events.last?.deliveredBodyBytes == 4)
  }

  /// A proxy challenge answered with the fetcher's proxy credential: the engine goes on within the
  /// exchange, and the next steps answer.
  @Test func aProxyChallengeAnsweredWithACredentialGoesOnWithinTheExchange() async {
    let engine = ScriptedEngine()
    engine.enqueue(
      ScriptedExchange([
        .head(status: 407, headers: ["Proxy-Authenticate": #"Basic realm="proxy""#]), .head(status: 200),
        .body(Data("through".utf8)),
      ]))
    let fetcher = engine.fetcher("/proxied")
    fetcher.proxyCredential = URLCredential(user: "p", password: "q", persistence: .none)
    #expect(await fetcher.fetchResult().data == Data("through".utf8))
    #expect(engine.requests.count == 1)
  }

  @Test func bodyBeforeHeadAndNoHeadAreScriptErrors() async {
    let engine = ScriptedEngine()
    engine.enqueue(ScriptedExchange([.body(Data("x".utf8))]), ScriptedExchange([]))
    #expect(await engine.fetcher("/a").fetchResult().error as? ScriptedEngineError == .bodyBeforeHead)
    #expect(await engine.fetcher("/b").fetchResult().error as? ScriptedEngineError == .endedBeforeHead)
  }
}
