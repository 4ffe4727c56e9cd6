// libFuzzer target for the resumable upload's handling of the server's answers: the status, the
// X-Goog-Upload-* headers and the order of the commands they lead to.
//
// The input's first three bytes choose the upload (byte 0: the source, a Data or a provider of
// unknown length, and whether transient failures are retried; byte 1: the chunk size, 1 to 64;
// byte 2: the upload's length, 0 to 255). The rest is the server's answers in order, split at 0xFF
// bytes, each "STATUS\nName: value\n…" (status 200 when the first line is not a number). A command
// answered after the answers ran out gets 404, which ends the upload. A FetcherService's test block
// answers every command fetcher, so the upload fetcher's whole decision path runs without sockets.
// Beyond not crashing, it traps (a finding) when the upload completes other than exactly once,
// succeeds without a `final` answer, or sends a chunk that is not a slice of its bytes.
//
//   Fuzz/run.sh 60 UploadResponseFuzzer

import FetcherService
import Foundation
import SessionFetcher
import SessionUploadFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

private let startURL = URL(string: "https://upload.example.com/files.location")!
private let callbackQueue = DispatchQueue(label: "UploadResponseFuzzer.callbacks")

/// One answer of the scripted server.
private struct Answer {
  var status: Int
  var headers: [String: String]
}

private func parseAnswer(_ bytes: ArraySlice<UInt8>) -> Answer {
  let text = String(decoding: bytes, as: UTF8.self)
  var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
    $0.hasSuffix("\r") ? $0.dropLast() : $0
  }
  var status = 200
  if let first = lines.first, let code = Int(first.trimmingCharacters(in: .whitespaces)) {
    status = min(max(code, 200), 599)
    lines.removeFirst()
  }
  var headers: [String: String] = [:]
  for line in lines {
    guard let colon = line.firstIndex(of: ":") else { continue }
    let name = line[..<colon].trimmingCharacters(in: .whitespaces)
    guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { continue }
    headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
  }
  return Answer(status: status, headers: headers)
}

/// What the scripted server saw and answered, shared with its test block.
private final class Script: @unchecked Sendable {
  // `@unchecked Sendable`: every field is read and written under `lock`.
  private let lock = NSLock()
  private var answers: [Answer]
  private var lastStatusWasFinal = false
  private(set) var completions = 0
  /// Every command fetcher answered, weakly: the run ends once all are freed.
  private var commands: [Weak] = []
  private(set) var succeeded = false
  let upload: Data

  init(answers: [Answer], upload: Data) {
    self.answers = answers
    self.upload = upload
  }

  /// The next answer for `fetcher`'s command, after checking what the command sends.
  func answer(_ fetcher: SessionFetcher) -> Answer {
    checkChunk(fetcher)
    lock.lock()
    defer { lock.unlock() }
    commands.append(Weak(fetcher))
    let next = answers.isEmpty ? Answer(status: 404, headers: [:]) : answers.removeFirst()
    let status = next.headers.first { $0.key.lowercased() == "x-goog-upload-status" }?.value
    lastStatusWasFinal = status?.trimmingCharacters(in: .whitespaces).lowercased() == "final"
    return next
  }

  /// A chunk must be the upload's bytes at its `X-Goog-Upload-Offset`.
  private func checkChunk(_ fetcher: SessionFetcher) {
    guard let request = fetcher.request,
      let command = request.value(forHTTPHeaderField: "X-Goog-Upload-Command"),
      command.contains("upload") || command.contains("finalize")
    else { return }
    guard let offsetText = request.value(forHTTPHeaderField: "X-Goog-Upload-Offset"),
      let offset = Int(offsetText)
    else { preconditionFailure("a chunk without a numeric offset: \(command)") }
    var body = fetcher.bodyData ?? Data()
    if let file = fetcher.bodyFileURL { body = (try? Data(contentsOf: file)) ?? Data() }
    precondition(
      offset >= 0 && offset + body.count <= upload.count,
      "chunk \(offset)+\(body.count) is outside the upload")
    precondition(
      body == upload.subdata(in: offset..<offset + body.count), "chunk at \(offset) is not the upload's bytes"
    )
  }

  var commandsFreed: Bool {
    lock.lock()
    defer { lock.unlock() }
    return commands.allSatisfy { $0.object == nil }
  }

  func completed(error: (any Error)?) {
    lock.lock()
    defer { lock.unlock() }
    completions += 1
    succeeded = error == nil
    precondition(error != nil || lastStatusWasFinal, "the upload succeeded without a final answer")
  }
}

private struct Weak {
  weak var object: AnyObject?
  init(_ object: AnyObject) { self.object = object }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func uploadResponseFuzzerTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: start, count: count))
  guard bytes.count >= 3 else { return 0 }
  let usesProvider = bytes[0] & 1 != 0
  let retries = bytes[0] & 2 != 0
  let chunkSize = Int64(bytes[1] % 64) + 1
  var upload = Data(count: Int(bytes[2]))
  for index in upload.indices { upload[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
  let answers = bytes[3...].split(separator: 0xFF, omittingEmptySubsequences: false).map(parseAnswer)
  let script = Script(answers: answers, upload: upload)

  let (uploadFetcher, service) = runUpload(
    usesProvider: usesProvider, retries: retries, chunkSize: chunkSize, script: script)
  // Ends only once the upload, its service and every command fetcher are freed: what they hold (a
  // chunk's bytes) is then released within this run, and a fetcher kept alive by a cycle is a
  // finding.
  let deadline = Date().addingTimeInterval(5)
  while uploadFetcher.object != nil || service.object != nil || !script.commandsFreed {
    precondition(Date() < deadline, "the upload or a command fetcher was not freed")
    usleep(200)
  }
  return 0
}

/// Runs the upload to its completion; returns the upload fetcher and its service, weakly.
private func runUpload(usesProvider: Bool, retries: Bool, chunkSize: Int64, script: Script) -> (Weak, Weak) {
  let upload = script.upload
  let service = FetcherService()
  service.testBlock = { fetcher, respond in
    let answer = script.answer(fetcher)
    let response = HTTPURLResponse(
      url: fetcher.request?.url ?? startURL, statusCode: answer.status, httpVersion: "HTTP/1.1",
      headerFields: answer.headers)
    respond(response, Data(), nil)
  }
  var request = URLRequest(url: startURL)
  request.httpMethod = "POST"
  let fetcher = SessionUploadFetcher(
    request: request, uploadMIMEType: "application/octet-stream", chunkSize: chunkSize,
    fetcherService: service)
  if usesProvider {
    let source = upload
    fetcher.setUploadDataLength(SessionUploadFetcher.unknownLength) { offset, length, respond in
      guard offset >= 0, length >= 0, offset <= Int64(source.count) else {
        preconditionFailure("the provider was asked for \(length) bytes at \(offset)")
      }
      let end = Int(min(Int64(source.count), offset + length))
      respond(source.subdata(in: Int(offset)..<end), nil)
    }
  } else {
    fetcher.uploadData = upload
  }
  fetcher.callbackQueue = callbackQueue
  fetcher.isRetryEnabled = retries
  fetcher.minRetryInterval = 0.001
  fetcher.maxRetryInterval = 0.01
  let done = DispatchSemaphore(value: 0)
  fetcher.beginFetch { _, error in
    script.completed(error: error)
    done.signal()
  }
  precondition(done.wait(timeout: .now() + 10) == .success, "the upload did not complete")
  // A second completion would have been queued by now.
  callbackQueue.sync {}
  precondition(script.completions == 1, "the upload completed \(script.completions) times")
  return (Weak(fetcher), Weak(service))
}
