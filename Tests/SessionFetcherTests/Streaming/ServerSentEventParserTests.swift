import Foundation
import SessionFetcher
import Testing

/// The `text/event-stream` grammar, table-driven; the first rows are the WHATWG HTML spec's examples.
@Suite("ServerSentEventParser")
struct ServerSentEventParserTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var input: String
    var events: [ServerSentEvent]
    var lastEventID = ""
    var reconnectionTime: Int?
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "spec: stock ticker, three data lines", input: "data: YHOO\ndata: +2\ndata: 10\n\n",
      events: [ServerSentEvent(data: "YHOO\n+2\n10")]),
    Row(
      name: "spec: comment, ids, id reset",
      input: ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
      events: [
        ServerSentEvent(id: "1", data: "first event"), ServerSentEvent(data: "second event"),
      ]),
    Row(
      name: "spec: empty data lines", input: "data\n\ndata\ndata\n\ndata:",
      events: [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")]),
    Row(
      name: "spec: space after the colon is optional", input: "data:test\n\ndata: test\n\n",
      events: [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")]),
    Row(
      name: "spec: named events", input: "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n",
      events: [
        ServerSentEvent(event: "add", data: "73857293"), ServerSentEvent(event: "remove", data: "2153"),
      ]),
    Row(
      name: "only one leading space is removed", input: "data:  two\n\n",
      events: [ServerSentEvent(data: " two")]),
    Row(
      name: "CRLF line ends", input: "id: 7\r\ndata: a\r\n\r\n",
      events: [ServerSentEvent(id: "7", data: "a")], lastEventID: "7"),
    Row(name: "CR line ends", input: "data: a\rdata: b\r\r", events: [ServerSentEvent(data: "a\nb")]),
    Row(
      name: "mixed line ends", input: "data: a\r\ndata: b\rdata: c\n\r\n",
      events: [ServerSentEvent(data: "a\nb\nc")]),
    Row(name: "leading BOM is skipped", input: "\u{FEFF}data: x\n\n", events: [ServerSentEvent(data: "x")]),
    Row(
      name: "a second BOM is data", input: "\u{FEFF}\u{FEFF}data: x\n\n", events: []),
    Row(
      name: "retry with digits", input: "retry: 2500\ndata: r\n\n",
      events: [ServerSentEvent(data: "r", retry: 2500)], reconnectionTime: 2500),
    Row(
      name: "retry without data dispatches nothing", input: "retry: 10\n\n", events: [], reconnectionTime: 10),
    Row(
      name: "retry with non-digits is ignored", input: "retry: 1.5\ndata: r\n\n",
      events: [ServerSentEvent(data: "r")]),
    Row(
      name: "id with NUL is ignored", input: "id: a\u{0}b\ndata: d\n\n", events: [ServerSentEvent(data: "d")]),
    Row(
      name: "id persists across events", input: "id: 5\ndata: a\n\ndata: b\n\n",
      events: [ServerSentEvent(id: "5", data: "a"), ServerSentEvent(id: "5", data: "b")], lastEventID: "5"),
    Row(
      name: "unknown fields are ignored", input: "foo: bar\ndata: d\n\n", events: [ServerSentEvent(data: "d")]
    ),
    Row(
      name: "event type resets after dispatch", input: "event: e\ndata: 1\n\ndata: 2\n\n",
      events: [ServerSentEvent(event: "e", data: "1"), ServerSentEvent(data: "2")]),
    Row(
      name: "event without data is dropped", input: "event: e\n\ndata: 2\n\n",
      events: [ServerSentEvent(data: "2")]),
    Row(name: "unterminated event is not dispatched", input: "data: a\n", events: []),
    Row(name: "field names are case-sensitive", input: "Data: a\n\n", events: []),
    Row(name: "UTF-8 data", input: "data: héllo ✓ 🎉\n\n", events: [ServerSentEvent(data: "héllo ✓ 🎉")]),
  ]

  @Test(arguments: rows)
  func grammar(_ row: Row) throws {
    var parser = ServerSentEventParser()
    let events = try parser.parse(Data(row.input.utf8))
    #expect(events == row.events)
    #expect(parser.lastEventID == row.lastEventID || row.lastEventID.isEmpty)
    #expect(parser.reconnectionTime == row.reconnectionTime)
  }

  /// Feeding the bytes one at a time (splitting CRLF pairs, the BOM and UTF-8 sequences) gives the
  /// same events as feeding them at once.
  @Test(arguments: rows)
  func bytewiseFeedingGivesTheSameEvents(_ row: Row) throws {
    var parser = ServerSentEventParser()
    var events: [ServerSentEvent] = []
    for byte in Data(row.input.utf8) { events += try parser.parse(Data([byte])) }
    #expect(events == row.events)
    #expect(parser.reconnectionTime == row.reconnectionTime)
  }

  @Test func invalidUTF8BecomesReplacementCharacters() throws {
    var parser = ServerSentEventParser()
    let events = try parser.parse(Data([0x64, 0x61, 0x74, 0x61, 0x3A, 0xFF, 0x0A, 0x0A]))
    #expect(events == [ServerSentEvent(data: "\u{FFFD}")])
  }

  @Test func hugeRetryDoesNotOverflow() throws {
    var parser = ServerSentEventParser()
    _ = try parser.parse(Data("retry: 99999999999999999999999\n\n".utf8))
    #expect(parser.reconnectionTime == Int.max)
  }

  /// A resumed stream's parser starts from the ID it resumed from: events without `id:` carry it,
  /// an empty `id:` clears it, another `id:` replaces it.
  @Test func aParserStartsFromTheLastEventIDItIsGiven() throws {
    var parser = ServerSentEventParser(lastEventID: "41")
    #expect(parser.lastEventID == "41")
    #expect(try parser.parse(Data(": ping\n\n".utf8)).isEmpty)
    #expect(parser.lastEventID == "41")
    #expect(try parser.parse(Data("data: a\n\n".utf8)) == [ServerSentEvent(id: "41", data: "a")])
    #expect(try parser.parse(Data("id: 42\ndata: b\n\n".utf8)) == [ServerSentEvent(id: "42", data: "b")])
    #expect(try parser.parse(Data("id\ndata: c\n\n".utf8)) == [ServerSentEvent(data: "c")])
    #expect(parser.lastEventID == "")
  }
}
