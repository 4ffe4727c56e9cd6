import Foundation
import Testing

@testable import SessionFetcher

/// `HeadDecision`: where a final head's body goes, whether it is refused before its first byte, and
/// whether it waits for `didReceiveResponseBlock`.
@Suite("Head decision")
struct HeadDecisionTests {
  struct Row: @unchecked Sendable, CustomTestStringConvertible {
    var name: String
    var input: HeadDecision.Input
    var sink: ResponseSink
    var tooLarge: Int64? = nil
    var asks = false
    var testDescription: String { name }
  }

  static func input(_ status: Int?, _ change: (inout HeadDecision.Input) -> Void = { _ in })
    -> HeadDecision.Input
  {
    var input = HeadDecision.Input(status: status)
    change(&input)
    return input
  }

  static let rows: [Row] = [
    Row(name: "200 into memory", input: input(200), sink: .memory),
    Row(name: "not HTTP (file:, data:) into memory", input: input(nil), sink: .memory),
    Row(name: "204 into memory", input: input(204), sink: .memory),
    Row(name: "200 streamed", input: input(200) { $0.isStreaming = true }, sink: .stream),
    Row(name: "200 accumulated", input: input(200) { $0.accumulates = true }, sink: .accumulate),
    Row(name: "200 to a file", input: input(200) { $0.hasDestination = true }, sink: .file),
    Row(
      name: "streaming wins over a destination",
      input: input(200) {
        $0.isStreaming = true; $0.hasDestination = true
      },
      sink: .stream),
    Row(
      name: "accumulating wins over a destination",
      input: input(200) {
        $0.accumulates = true; $0.hasDestination = true
      }, sink: .accumulate),
    Row(
      name: "an error status is kept in memory, not written", input: input(404) { $0.hasDestination = true },
      sink: .memory),
    Row(name: "an error status is not streamed", input: input(503) { $0.isStreaming = true }, sink: .memory),
    Row(
      name: "a redirect the engine follows", input: input(302) { $0.hasRedirectTarget = true },
      sink: .redirect),
    Row(name: "a 3xx without a target is final", input: input(302), sink: .memory),
    Row(
      name: "a 304 with a target is not a redirect", input: input(304) { $0.hasRedirectTarget = true },
      sink: .memory),
    // The in-memory limit, before the first byte.
    Row(
      name: "announced past the limit",
      input: input(200) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101
      }, sink: .memory,
      tooLarge: 100),
    Row(
      name: "announced at the limit",
      input: input(200) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 100
      }, sink: .memory),
    Row(
      name: "an error body past the limit",
      input: input(500) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 1000
      }, sink: .memory,
      tooLarge: 100),
    Row(
      name: "a redirect's body past the limit",
      input: input(301) {
        $0.hasRedirectTarget = true; $0.maximumInMemoryBodyLength = 10; $0.expectedContentLength = 11
      },
      sink: .redirect, tooLarge: 10),
    Row(
      name: "an encoded body: its length is not the decoded one",
      input: input(200) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101; $0.isEncoded = true
      },
      sink: .memory),
    Row(
      name: "a HEAD has no body",
      input: input(200) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101; $0.method = "HEAD"
      },
      sink: .memory),
    Row(
      name: "a 304 has no body",
      input: input(304) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101
      }, sink: .memory),
    Row(
      name: "a 204 has no body",
      input: input(204) {
        $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101
      }, sink: .memory),
    Row(
      name: "a download is not held to the in-memory limit",
      input: input(200) {
        $0.hasDestination = true; $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101
      },
      sink: .file),
    Row(
      name: "a stream is not held to the in-memory limit",
      input: input(200) {
        $0.isStreaming = true; $0.maximumInMemoryBodyLength = 100; $0.expectedContentLength = 101
      },
      sink: .stream),
    // The response block sees the final head only.
    Row(
      name: "a final 200 asks the block", input: input(200) { $0.hasResponseBlock = true }, sink: .memory,
      asks: true),
    Row(
      name: "a final 404 asks the block", input: input(404) { $0.hasResponseBlock = true }, sink: .memory,
      asks: true),
    Row(
      name: "a redirect followed does not ask it",
      input: input(302) {
        $0.hasResponseBlock = true; $0.hasRedirectTarget = true
      }, sink: .redirect),
    Row(
      name: "a 401 the fetcher answers waits for the answer",
      input: input(401) {
        $0.hasResponseBlock = true; $0.isAnsweredChallenge = true
      }, sink: .memory),
    Row(
      name: "a 401 it does not answer asks the block", input: input(401) { $0.hasResponseBlock = true },
      sink: .memory, asks: true),
  ]

  @Test(arguments: rows)
  func decision(_ row: Row) {
    let action = HeadDecision.decide(row.input)
    #expect(action.sink == row.sink)
    #expect(action.tooLarge == row.tooLarge)
    #expect(action.asksResponseBlock == row.asks)
  }
}
