// libFuzzer target for the resumable upload's handling of what a server answers: the status and
// X-Goog-Upload-* headers of every command (start, upload, query, finalize) in the order the
// upload sends them.
//
// The input's first line is the upload: "LENGTH CHUNK" (bytes to upload and the chunk size, each
// taken modulo a small bound). Each further block, up to a blank line, answers the next command the
// upload sends: "STATUS" on its first line, then header lines ("X-Goog-Upload-Size-Received: -1").
// When the blocks run out, every later command gets a 503. A global test block answers the upload's
// command fetchers, so nothing goes on the wire.
// Beyond not crashing, it traps (a finding) when the upload completes other than exactly once, or
// completes without an error when an answer claimed an offset outside what was sent.
//
//   Fuzz/run.sh 60 UploadResponsesFuzzer

import Foundation
import SessionFetcher
import SessionUploadFetcher

private let startURL = URL(string: "https://upload.example.com/resumable.location")!
private let callbackQueue = DispatchQueue(label: "UploadResponsesFuzzer.callbacks")

private struct Answer {
  var status: Int
  var headers: [String: String]
}

private func parse(_ text: String) -> (length: Int, chunk: Int64, answers: [Answer]) {
  var blocks = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
  // The first line is the upload; the rest of the first block is the first answer.
  var firstLines = (blocks.first ?? "").split(separator: "\n", omittingEmptySubsequences: false)
  let numbers = (firstLines.first ?? "").split(separator: " ").compactMap { Int($0) }
  let length = numbers.first.map { Int($0.magnitude % 4096) } ?? 10
  let chunk = Int64(numbers.dropFirst().first.map { Int($0.magnitude % 1024) + 1 } ?? 4)
  if !firstLines.isEmpty { firstLines.removeFirst() }
  if !blocks.isEmpty { blocks[0] = firstLines.joined(separator: "\n") }
  var answers: [Answer] = []
  for block in blocks.prefix(64) {
    var lines = block.split(separator: "\n", omittingEmptySubsequences: true)
    guard !lines.isEmpty else { continue }
    let statusText = lines.removeFirst().trimmingCharacters(in: .whitespaces)
    let status = Int(statusText).map { min(max($0, 100), 999) } ?? 200
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].trimmingCharacters(in: .whitespaces)
      guard !name.isEmpty else { continue }
      headers[name] = String(line[line.index(after: colon)...])
    }
    answers.append(Answer(status: status, headers: headers))
  }
  return (length, chunk, answers)
}

/// Hands out the answers in order, on any thread.
private final class Script: @unchecked Sendable {
  // `@unchecked Sendable`: `answers` and `next` are read and written under `lock` only.
  private let lock = NSLock()
  private var answers: [Answer]
  private var next = 0

  init(_ answers: [Answer]) { self.answers = answers }

  func take() -> Answer {
    lock.lock()
    defer { lock.unlock() }
    guard next < answers.count else { return Answer(status: 503, headers: [:]) }
    next += 1
    return answers[next - 1]
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func uploadResponsesFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let (length, chunk, answers) = parse(text)
  let script = Script(answers)
  SessionFetcher.globalTestBlock = { fetcher, respond in
    let answer = script.take()
    let response = HTTPURLResponse(
      url: fetcher.request?.url ?? startURL, statusCode: answer.status, httpVersion: "HTTP/1.1",
      headerFields: answer.headers)
    respond(response, Data("answer".utf8), nil)
  }
  defer { SessionFetcher.globalTestBlock = nil }

  var request = URLRequest(url: startURL)
  request.httpMethod = "POST"
  let upload = SessionUploadFetcher(
    request: request, uploadMIMEType: "application/octet-stream", chunkSize: chunk, fetcherService: nil)
  upload.callbackQueue = callbackQueue
  upload.isRetryEnabled = true
  upload.minRetryInterval = 0.0001
  upload.maxUploadRetryInterval = 0.001
  upload.uploadData = Data(repeating: 0x61, count: length)

  final class Box: @unchecked Sendable {
    // `@unchecked Sendable`: written on the callback queue, read after `callbackQueue.sync`.
    var count = 0
    var error: (any Error)?
  }
  let box = Box()
  let done = DispatchSemaphore(value: 0)
  upload.beginFetch { _, error in
    box.count += 1
    box.error = error
    done.signal()
  }
  if done.wait(timeout: .now() + 5) != .success {
    // A script of endless legal answers (a server that never progresses) may run long: stop it.
    upload.stopFetching()
  }
  callbackQueue.sync {}  // a second completion would have run by now
  precondition(box.count <= 1, "completed \(box.count) times")
  if box.error == nil && box.count == 1 {
    // A success means some answer said "final"; no answer may have claimed a negative offset.
    let claimedNegative = answers.contains { answer in
      answer.headers.contains {
        $0.key.lowercased() == "x-goog-upload-size-received" && $0.value.contains("-")
      }
    }
    let final = answers.contains { answer in
      answer.headers.contains {
        $0.key.lowercased() == "x-goog-upload-status" && $0.value.lowercased().contains("final")
      }
    }
    precondition(
      final || !claimedNegative, "an upload completed after a negative offset without a final status")
  }
  return 0
}
