// libFuzzer target for response-header handling: the status, Retry-After, ETag, Content-Length,
// Content-Type and Set-Cookie of a response go through the fetcher's own response path.
//
// The input is a raw response head ("HTTP/1.1 503 Busy\r\nRetry-After: 3\r\n...\r\n\r\nbody").
// The status line and header lines become an HTTPURLResponse (what libcurl hands the delegate), which
// a test block feeds to a fetcher: status classification and the retry decision (Retry-After as
// seconds or an HTTP date), the in-memory body limit against Content-Length, the cookie jar, and a
// FetcherService's ETag memory and cache (a second fetch answered 304 with the same headers).
// Beyond not crashing, it traps (a finding) when a fetch completes other than exactly once, or
// with a result that contradicts the status.
//
//   Fuzz/run.sh 60 ResponseHeadersFuzzer

import FetcherService
import Foundation
import SessionFetcher

private let fuzzURL = URL(string: "https://api.example.com/v1/items?page=2")!
private let callbackQueue = DispatchQueue(label: "ResponseHeadersFuzzer.callbacks")

/// Splits a raw head into a status code and header fields (repeated names joined with ", ").
private func parseHead(_ text: String) -> (status: Int, headers: [String: String], body: Data) {
  let (head, body): (Substring, Substring)
  if let range = text.range(of: "\r\n\r\n") {
    (head, body) = (text[..<range.lowerBound], text[range.upperBound...])
  } else {
    (head, body) = (text[...], "")
  }
  var lines = head.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" }).map {
    $0.hasSuffix("\r") ? $0.dropLast() : $0
  }
  var status = 200
  if !lines.isEmpty {
    let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
    // 1xx responses are interim: libcurl never hands one over as the final response.
    if statusLine.count >= 2, let code = Int(statusLine[1]) { status = min(max(code, 200), 999) }
  }
  var headers: [String: String] = [:]
  for line in lines {
    guard let colon = line.firstIndex(of: ":") else { continue }
    let name = line[..<colon].trimmingCharacters(in: .whitespaces)
    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    guard !name.isEmpty else { continue }
    headers[name] = headers[name].map { "\($0), \(value)" } ?? value
  }
  return (status, headers, Data(body.utf8))
}

/// Runs one stubbed fetch and returns (completions, data, error) once it completed (bounded wait).
private func fetch(
  _ fetcher: SessionFetcher, status: Int, headers: [String: String], body: Data
) -> (Int, Data?, (any Error)?) {
  final class Box: @unchecked Sendable {
    let lock = NSLock()
    var count = 0
    var data: Data?
    var error: (any Error)?
  }
  let box = Box()
  let done = DispatchSemaphore(value: 0)
  fetcher.testBlock = { fetcher, respond in
    let response = HTTPURLResponse(
      url: fetcher.request?.url ?? fuzzURL, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    respond(response, body, nil)
  }
  fetcher.beginFetch { data, error in
    box.lock.lock()
    box.count += 1
    box.data = data
    box.error = error
    box.lock.unlock()
    done.signal()
  }
  precondition(done.wait(timeout: .now() + 10) == .success, "a stubbed fetch did not complete")
  callbackQueue.sync {}  // a second completion would have run by now
  box.lock.lock()
  defer { box.lock.unlock() }
  return (box.count, box.data, box.error)
}

private let service: FetcherService = {
  let service = FetcherService()
  service.callbackQueue = callbackQueue
  service.shouldRememberETags = true
  service.shouldCacheETaggedData = true
  service.etagCacheCapacity = 64 * 1024
  return service
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func responseHeadersFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let (status, headers, body) = parseHead(text)

  // A standalone fetcher: status, retry decision with Retry-After, body limit, cookies.
  let fetcher = SessionFetcher.fetcher(url: fuzzURL)
  fetcher.callbackQueue = callbackQueue
  fetcher.cookieStorage = SessionCookieStorage()
  fetcher.isRetryEnabled = true
  fetcher.minRetryInterval = 0.001
  fetcher.maxRetryInterval = 0.002
  fetcher.maximumResponseBodyLength = 4096
  fetcher.retryBlock = { _, _, response in response(false) }
  let (count, _, error) = fetch(fetcher, status: status, headers: headers, body: body)
  precondition(count == 1, "completed \(count) times")
  if let error = error as? SessionFetcherError {
    switch error {
    case .status(let code, _):
      precondition(code == status && !(200..<300).contains(code), "status error \(code) for \(status)")
    case .responseTooLarge:
      break
    default:
      preconditionFailure("unexpected error \(error)")
    }
  } else if let error = error as? URLError {
    // A 206 to a request without Range is not the resource (`ResponseSanity`).
    precondition(error.code == .badServerResponse && status == 206, "unexpected error \(error)")
  } else {
    precondition(error == nil, "unexpected error \(String(describing: error))")
    precondition((200..<300).contains(status), "status \(status) completed without an error")
    precondition(status != 206, "a 206 to a request without Range completed without an error")
  }
  _ = fetcher.responseHeaders
  _ = fetcher.cookieStorage.cookieHeaderValue(for: fuzzURL)

  // Through a service: the ETag is remembered and cached, then a 304 with the same headers.
  let first = service.fetcher(url: fuzzURL)
  let (firstCount, firstData, firstError) = fetch(first, status: status, headers: headers, body: body)
  precondition(firstCount == 1, "service fetch completed \(firstCount) times")
  let second = service.fetcher(url: fuzzURL)
  let (secondCount, secondData, secondError) = fetch(second, status: 304, headers: headers, body: Data())
  precondition(secondCount == 1, "304 fetch completed \(secondCount) times")
  if secondError == nil {
    // Only a cached body may turn a 304 into a success, and it must be the body the cache kept.
    precondition(firstError == nil && secondData == firstData, "a 304 was answered with another body")
  }
  // Nothing carries over to the next input. (A body left in the global service's cache is reported
  // as a leak: LeakSanitizer does not follow a `Data` held in Swift global storage, as it misses
  // statics initialized in `_WZ` functions in the test suite.)
  service.removeAllCachedETags()
  return 0
}
