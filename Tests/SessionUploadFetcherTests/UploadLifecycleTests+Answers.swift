import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

// The upload lifecycle's answers, commands and chunk reads (see `UploadLifecycleTests`).
extension UploadLifecycleTests {
  // MARK: - Answers

  struct AnswerCase: Sendable, CustomTestStringConvertible {
    var name: String
    var from: Situation
    var answer: Machine.Answer
    var settings = UploadLifecycleTests.retrying
    var expected: Action
    var testDescription: String { name }
  }

  static let answerCases: [AnswerCase] = [
    AnswerCase(
      name: "start without the protocol's headers", from: .sendingStart, answer: .success(response([:])),
      expected: .finish(.protocolError, progress: nil)),
    AnswerCase(
      name: "start answering a file URL", from: .sendingStart,
      answer: .success(
        response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": "file:///etc/passwd"])),
      expected: .finish(.invalidUploadLocation(URL(string: "file:///etc/passwd")!), progress: nil)),
    AnswerCase(
      name: "start with granularity 66666: chunks of 66666", from: .sendingStart,
      answer: .success(
        response([
          "X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": location.absoluteString,
          "X-Goog-Upload-Chunk-Granularity": "66666",
        ])),
      expected: .read(
        .init(token: 2, offset: 0, length: 66_666, isFinal: false, totalLength: total), progress: nil,
        announcingLocation: true)),
    AnswerCase(
      name: "start failing with 502, retrying off", from: .sendingStart, answer: failure(502),
      settings: .init(isEnabled: false, minInterval: 1, factor: 2, maxInterval: 600, hasRetryBlock: false),
      expected: .finish(.commandFailed, progress: nil)),
    AnswerCase(
      name: "start failing with 502, retrying on: the first backoff", from: .sendingStart,
      answer: failure(502),
      expected: .startRetryWait(interval: 1, token: 2, isFirst: true)),
    AnswerCase(
      name: "chunk accepted: progress to its end, next chunk", from: .sendingChunk,
      answer: .success(activeAnswer(received: chunk)),
      expected: .read(
        .init(token: 4, offset: chunk, length: chunk, isFinal: false, totalLength: total),
        progress: .init(sent: chunk, total: chunk, expected: total), announcingLocation: false)),
    AnswerCase(
      name: "chunk final: progress, completed", from: .sendingChunk, answer: .success(finalAnswer),
      expected: .finish(.completed, progress: .init(sent: chunk, total: chunk, expected: total))),
    AnswerCase(
      name: "chunk answered cancelled", from: .sendingChunk,
      answer: .success(response(["X-Goog-Upload-Status": "cancelled"])),
      expected: .finish(.protocolError, progress: nil)),
    AnswerCase(
      name: "chunk refused with 400: query", from: .sendingChunk, answer: failure(400),
      expected: .send(.query(location), token: 4)),
    AnswerCase(
      name: "chunk refused with 404: fail", from: .sendingChunk, answer: failure(404),
      expected: .finish(.commandFailed, progress: nil)),
    AnswerCase(
      name: "chunk 503, a retry block: ask it", from: .sendingChunk, answer: failure(503), settings: deciding,
      expected: .askRetryBlock(token: 4, suggestion: true)),
    AnswerCase(
      name: "chunk 404, a retry block: ask it, suggesting no retry", from: .sendingChunk,
      answer: failure(404),
      settings: deciding, expected: .askRetryBlock(token: 4, suggestion: false)),
    AnswerCase(
      name: "chunk offline, a retry block: ask it, suggesting no retry", from: .sendingChunk,
      answer: .failure(URLError(.notConnectedToInternet)), settings: deciding,
      expected: .askRetryBlock(token: 4, suggestion: false)),
    AnswerCase(
      name: "chunk 503, first delay at the limit", from: .sendingChunk, answer: failure(503),
      settings: .init(isEnabled: true, minInterval: 10, factor: 2, maxInterval: 10, hasRetryBlock: true),
      expected: .finish(.retryLimitReached, progress: nil)),
    AnswerCase(
      name: "query: final", from: .sendingQuery, answer: .success(finalAnswer),
      expected: .finish(.completed, progress: nil)),
    AnswerCase(
      name: "query: resume where the server stands", from: .sendingQuery,
      answer: .success(activeAnswer(received: 150_000)),
      expected: .read(
        .init(token: 5, offset: 150_000, length: 49_000, isFinal: true, totalLength: total), progress: nil,
        announcingLocation: false)),
    AnswerCase(
      name: "query without a size", from: .sendingQuery,
      answer: .success(response(["X-Goog-Upload-Status": "active"])),
      expected: .finish(.protocolError, progress: nil)),
    AnswerCase(
      name: "start with a negative granularity", from: .sendingStart,
      answer: .success(
        response([
          "X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": location.absoluteString,
          "X-Goog-Upload-Chunk-Granularity": "-5",
        ])),
      expected: .finish(
        .invalidProtocolValue(header: "X-Goog-Upload-Chunk-Granularity", value: "-5"), progress: nil)),
    AnswerCase(
      name: "chunk answering a negative size received", from: .sendingChunk,
      answer: .success(response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": "-1"])),
      expected: .finish(
        .invalidProtocolValue(header: "X-Goog-Upload-Size-Received", value: "-1"), progress: nil)),
    AnswerCase(
      name: "chunk answering more than was sent", from: .sendingChunk,
      answer: .success(activeAnswer(received: chunk + 1)),
      expected: .finish(
        .invalidProtocolValue(header: "X-Goog-Upload-Size-Received", value: String(chunk + 1)), progress: nil)
    ),
    AnswerCase(
      name: "query answering more than the upload's length", from: .sendingQuery,
      answer: .success(activeAnswer(received: total + 1)),
      expected: .finish(
        .invalidProtocolValue(header: "X-Goog-Upload-Size-Received", value: String(total + 1)), progress: nil)
    ),
    AnswerCase(
      name: "query answering a size that is not a number", from: .sendingQuery,
      answer: .success(response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": "ten"])),
      expected: .finish(
        .invalidProtocolValue(header: "X-Goog-Upload-Size-Received", value: "ten"), progress: nil)),
  ]

  @Test(arguments: answerCases)
  func answer(_ row: AnswerCase) {
    var d = Self.drive(row.from)
    let action = d.machine.commandEnded(
      d.fetcher!, answer: row.answer, reportsProgress: true, retrying: row.settings)
    #expect(action == row.expected)
    #expect(d.machine.currentFetcher == nil)
    if case .finish = action { #expect(!d.machine.isFetching) }
  }

  @Test func answersWithoutAProgressBlockReportNothing() {
    var d = Self.drive(.sendingChunk)
    #expect(
      d.machine.commandEnded(
        d.fetcher!, answer: .success(Self.finalAnswer), reportsProgress: false, retrying: Self.retrying)
        == .finish(.completed, progress: nil))
  }

  /// An answer of a command the upload no longer waits for changes nothing, in every state.
  @Test(arguments: Situation.allCases.filter { $0 != .idle })
  func lateAnswerOfAnotherCommand(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let before = d.machine
    #expect(
      d.machine.commandEnded(
        Self.fetcher(), answer: .success(Self.finalAnswer), reportsProgress: true, retrying: Self.retrying)
        == .none)
    #expect(d.machine == before)
  }

  @Test func threeResyncsWithoutProgressThenTheChunksError() {
    var d = Self.drive(.sendingChunk)
    var fetcher = d.fetcher!
    for token in [4, 7, 10] {
      #expect(
        d.machine.commandEnded(
          fetcher, answer: Self.failure(400), reportsProgress: false, retrying: Self.retrying)
          == .send(.query(Self.location), token: token))
      let query = Self.fetcher()
      #expect(d.machine.commandMade(query, token: token) == true)
      #expect(
        d.machine.commandEnded(
          query, answer: .success(Self.activeAnswer(received: 0)), reportsProgress: false,
          retrying: Self.retrying)
          == .read(Self.firstChunk.with(token: token + 1), progress: nil, announcingLocation: false))
      #expect(
        d.machine.chunkRead(token: token + 1, result: .read(length: Self.chunk, reportedFullLength: nil))
          == .send(Self.chunkPlan, token: token + 2))
      fetcher = Self.fetcher()
      #expect(d.machine.commandMade(fetcher, token: token + 2) == true)
    }
    #expect(
      d.machine.commandEnded(
        fetcher, answer: Self.failure(400), reportsProgress: false, retrying: Self.retrying)
        == .finish(.commandFailed, progress: nil))
  }

  // MARK: - Commands being made

  @Test(arguments: Situation.allCases.filter { $0 != .idle })
  func commandMadeForTheCurrentStep(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let made = d.machine.commandMade(Self.fetcher(), token: d.token)
    // Only a step that is making its command takes it; every other one (paused, stopped, …) drops
    // the fetcher unbegun.
    #expect(made == (situation == .makingStart))
  }

  @Test func aFetcherMadeForAStepLeftByPauseAndResumeIsDropped() {
    var d = Self.drive(.makingStart)
    _ = d.machine.pause()
    #expect(d.machine.resume() == .send(.start(totalLength: Self.total), token: 3))
    #expect(d.machine.commandMade(Self.fetcher(), token: 1) == false)
    #expect(d.machine.commandMade(Self.fetcher(), token: 3) == true)
  }

  // MARK: - Chunks

  struct ReadCase: Sendable, CustomTestStringConvertible {
    var name: String
    var totalLength: Int64?
    var result: Machine.ChunkReadResult
    var expected: Action
    var testDescription: String { name }
  }

  @Test(
    arguments: [
      ReadCase(
        name: "a full chunk", totalLength: total, result: .read(length: chunk, reportedFullLength: nil),
        expected: .send(chunkPlan, token: 3)),
      ReadCase(
        name: "unknown length, a full chunk", totalLength: nil,
        result: .read(length: chunk, reportedFullLength: nil),
        expected: .send(chunkPlan, token: 3)),
      ReadCase(
        name: "unknown length, a short chunk ends the upload", totalLength: nil,
        result: .read(length: 10, reportedFullLength: nil),
        expected: .send(.chunk(location, offset: 0, length: 10, command: .uploadAndFinalize), token: 3)),
      ReadCase(
        name: "unknown length, an empty chunk: finalize", totalLength: nil,
        result: .read(length: 0, reportedFullLength: nil),
        expected: .send(.chunk(location, offset: 0, length: 0, command: .finalize), token: 3)),
      ReadCase(
        name: "the provider tells a length the chunk reaches", totalLength: nil,
        result: .read(length: chunk, reportedFullLength: chunk),
        expected: .send(.chunk(location, offset: 0, length: chunk, command: .uploadAndFinalize), token: 3)),
      ReadCase(
        name: "the provider tells a longer length", totalLength: nil,
        result: .read(length: chunk, reportedFullLength: total), expected: .send(chunkPlan, token: 3)),
      ReadCase(
        name: "the source fails", totalLength: total, result: .failed,
        expected: .finish(.sourceFailed, progress: nil)),
    ])
  func read(_ row: ReadCase) {
    var machine = Machine(location: nil)
    _ = machine.begin(
      source: .measured(row.totalLength), requestedChunkSize: Self.chunk, wholeFileByURL: false)
    let start = Self.fetcher()
    _ = machine.commandMade(start, token: 1)
    _ = machine.commandEnded(
      start, answer: .success(Self.startAnswer), reportsProgress: false, retrying: Self.retrying)
    #expect(machine.chunkRead(token: 2, result: row.result) == row.expected)
    if case .read(_, let told?) = row.result {
      #expect(machine.totalLength == told, "planned to the told length")
    }
  }

  /// A chunk read ending after the upload left its step changes nothing.
  @Test(arguments: Situation.allCases.filter { ![.idle, .makingStart, .sendingStart].contains($0) })
  func lateChunkRead(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let before = d.machine
    let action = d.machine.chunkRead(token: 2, result: .read(length: Self.chunk, reportedFullLength: nil))
    if situation == .readingChunk {
      #expect(action == .send(Self.chunkPlan, token: 3))
    } else {
      #expect(action == .none)
      #expect(d.machine == before)
    }
  }

  @Test(arguments: Situation.allCases.filter { $0 != .idle })
  func progress(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let reports = [40_000, 30_000, 75_000].map { d.machine.progressSent(total: Int64($0)) }
    switch situation {
    case .makingStart, .sendingStart, .readingChunk, .sendingChunk, .sendingQuery, .decidingRetry:
      // Totals only grow: the second report is dropped, the third is the growth since the first.
      #expect(
        reports == [
          .init(sent: 40_000, total: 40_000, expected: Self.total), nil,
          .init(sent: 35_000, total: 75_000, expected: Self.total),
        ])
    case .waitingUnarmed, .waitingArmed, .paused, .pausedDecidingRetry, .finished, .stopped, .idle:
      #expect(reports == [nil, nil, nil])
    }
  }
}
