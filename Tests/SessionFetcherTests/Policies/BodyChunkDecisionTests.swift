import Foundation
import Testing

@testable import SessionFetcher

/// What the fetcher decides, under its lock, for a chunk of the response body
/// (`FetcherStorage.bodyChunkArrived`): no socket, no disk.
@Suite("Body chunk decision")
struct BodyChunkDecisionTests {
  /// One row: a running fetch whose exchange has sink `sink` (cancelled for `reason`, with a head
  /// held for the response block when `gated`) gets a 4-byte chunk from its own task or another.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var sink: ResponseSink
    var reason: String? = nil
    var gated = false
    var bypassingGate = false
    var fromOtherTask = false
    /// The in-memory limit (8 bytes are kept already).
    var limit: Int64? = nil
    var windows = false
    var accumulateBlock = false
    /// The decision, as text.
    var answer: String
    /// Body bytes the fetch counted, and those the stream (or windowed download) delivered.
    var counted: Int64
    var delivered: Int64 = 0

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(name: "memory", sink: .memory, answer: "deliver none, total 12 of 20, received", counted: 4),
    Row(name: "another task's", sink: .memory, fromOtherTask: true, answer: "drop", counted: 0),
    Row(name: "paused", sink: .stream, reason: "paused", answer: "drop", counted: 0),
    Row(name: "failed", sink: .memory, reason: "failed", answer: "drop", counted: 0),
    Row(name: "held for the response block", sink: .memory, gated: true, answer: "held 4", counted: 0),
    Row(
      name: "the response block's replay", sink: .memory, gated: true, bypassingGate: true,
      answer: "deliver none, total 12 of 20, received", counted: 4),
    Row(name: "past the in-memory limit", sink: .memory, limit: 10, answer: "fail, task taken", counted: 4),
    Row(
      name: "within the in-memory limit", sink: .redirect, limit: 12,
      answer: "deliver none, total 12 of 20, received", counted: 4),
    Row(
      name: "accumulated", sink: .accumulate, accumulateBlock: true,
      answer: "deliver accumulate, total 12 of 20, received, accumulated", counted: 4),
    Row(
      name: "accumulate sink without a block", sink: .accumulate,
      answer: "deliver none, total 12 of 20, received, accumulated", counted: 4),
    Row(
      name: "file without a part file", sink: .file,
      answer: "deliver none, total 12 of 20, received, download", counted: 4),
    Row(
      name: "file in windows", sink: .file, windows: true,
      answer: "deliver none, total 12 of 20, received, download", counted: 4, delivered: 4),
    Row(
      name: "stream without a consumer", sink: .stream, answer: "deliver none, total 12 of 20, received",
      counted: 4, delivered: 4),
  ]

  static func storage(for row: Row, task: LifecycleInertTask) -> FetcherStorage {
    let url = URL(string: "http://127.0.0.1/chunk")!
    var storage = FetcherStorage(request: URLRequest(url: url), urlString: url.absoluteString)
    storage.plan = FetchPlan(
      baseRequest: URLRequest(url: url), body: .none, bodyLength: nil, destination: nil, accumulates: false,
      maximumInMemoryBodyLength: row.limit, idleTimeout: 60, resourceTimeout: nil,
      callbackQueue: DispatchQueue(label: "chunk"), monitors: [], cookieStorage: nil,
      session: SharedSession(configuration: nil, engine: .libcurl), ownsSession: false, testBlock: nil,
      postsNotifications: false)
    storage.config.receivedProgressBlock = { _, _ in }
    storage.config.downloadProgressBlock = { _, _, _ in }
    if row.accumulateBlock { storage.config.accumulateDataBlock = { _ in } }
    _ = storage.lifecycle.begin()
    if row.windows { storage.run.stream.windowLength = 100 }
    _ = storage.lifecycle.attemptStarted(at: Date())
    let exchange = HopState(
      hop: 1, request: URLRequest(url: url), hopRequest: URLRequest(url: url), keepsBody: false, now: Date())
    exchange.task = task
    exchange.sink = row.sink
    exchange.expectedContentLength = 20
    exchange.responseBodyLength = 8
    if row.sink == .memory || row.sink == .redirect { exchange.responseData = Data(count: 8) }
    switch row.reason {
    case "paused"?: exchange.cancelReason = .pausedForBackpressure
    case "failed"?: exchange.cancelReason = .failed(URLError(.unknown))
    default: break
    }
    if row.gated { exchange.responseGate = ResponseGate(hop: 1) }
    _ = storage.lifecycle.hopStarted(exchange)
    return storage
  }

  static func answer(_ delivery: ChunkAction, _ storage: FetcherStorage, task: LifecycleInertTask) -> String {
    switch delivery {
    case .drop:
      return "drop"
    case .held:
      return "held \(storage.lifecycle.current.responseGate?.held.reduce(0) { $0 + $1.count } ?? 0)"
    case .fail(let failure):
      guard failure.task === task, storage.lifecycle.current.task == nil,
        case .failed? = storage.lifecycle.current.cancelReason
      else { return "fail, task not taken" }
      return "fail, task taken"
    case .deliver(let handOff):
      var text = "deliver "
      switch handOff.target {
      case .none: text += "none"
      case .file: text += "file"
      case .accumulate: text += "accumulate"
      case .stream: text += "stream"
      }
      text += ", total \(handOff.total) of \(handOff.expected)"
      if handOff.received != nil { text += ", received" }
      if handOff.download != nil { text += ", download" }
      if storage.run.accumulatedSinceResponse { text += ", accumulated" }
      return text
    }
  }

  @Test(arguments: rows)
  func chunk(_ row: Row) {
    let task = LifecycleInertTask()
    var storage = Self.storage(for: row, task: task)
    let now = Date()
    let delivery = storage.bodyChunkArrived(
      Data(count: 4), from: row.fromOtherTask ? LifecycleInertTask() : task, bypassingGate: row.bypassingGate,
      at: now)
    #expect(Self.answer(delivery, storage, task: task) == row.answer)
    #expect(storage.run.timing.bytesReceived == row.counted)
    #expect(storage.run.timing.firstByteDate == (row.counted > 0 ? now : nil))
    #expect(storage.run.stream.deliveredBytes == row.delivered)
  }
}
