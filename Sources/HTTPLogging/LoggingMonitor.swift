import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The global event monitor that logs every fetch while logging is active.
///
/// Keeps a ``FetchRecord`` in progress per fetcher (keyed by `ObjectIdentifier`, behind a lock,
/// dropped when the fetch ends). At the end it prepares the record (bodies, redaction), stores the
/// text log in the fetcher (``SessionFetcher/log``) synchronously — before the completion handler
/// runs — and hands the record to the ``LogFileWriter`` for the files.
final class LoggingMonitor: RequestBodyStreamObserver {
  static let shared = LoggingMonitor()
  private static let registration = Locked(false)

  /// Registers the monitor with the core, once per process.
  static func registerOnce() {
    let register = registration.withLock { registered -> Bool in
      defer { registered = true }
      return !registered
    }
    if register { SessionFetcher.addGlobalEventMonitor(shared) }
  }

  private struct InFlight {
    var record: FetchRecord
    var bodyCap: Int
    var keepsResponseBody: Bool
    var downloadPath: String?
    var requestBody: LoggedBody?
    /// Bumped for each stream of the request body, so that a stream left behind (an attempt that
    /// ended while the engine still read) does not write into the next one's log.
    var bodyStreamNumber = 0
  }

  // `Sendable`: both are `Locked`, a lock-protected box.
  private let inFlight = Locked<[ObjectIdentifier: InFlight]>([:])
  let writer = LogFileWriter()

  func fetcherDidBegin(_ fetcher: SessionFetcher) {
    let settings = LoggingSettings.shared.current
    guard settings.isActive else {
      LoggingSettings.noteWhenLoggingIsOffInThisBuild(settings)
      return
    }
    guard settings.filter?(fetcher) ?? true else { return }
    if settings.isToFileEnabled { writer.openRun(settings: settings) }
    let request = fetcher.request
    let cap = max(0, settings.maximumBodySize)
    var requestBody: LoggedBody?
    if let data = fetcher.bodyData {
      requestBody = LoggedBody.capped(data, cap: cap)
    } else if let file = fetcher.bodyFileURL {
      let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?
        .int64Value
      requestBody = LoggedBody(source: .file(path: file.path), totalLength: size)
    } else if fetcher.bodyStreamProvider != nil {
      requestBody = LoggedBody(source: .stream, totalLength: fetcher.bodyLength)
    } else if let data = request?.httpBody {
      requestBody = LoggedBody.capped(data, cap: cap)
    }
    let now = Date()
    let record = FetchRecord(
      comment: fetcher.comment, startDate: fetcher.timing.startDate ?? now, endDate: now,
      method: request?.httpMethod ?? "GET", url: request?.url?.absoluteString ?? "(invalid URL)")
    let destination = fetcher.destinationFileURL
    let state = InFlight(
      record: record, bodyCap: cap,
      keepsResponseBody: destination == nil && fetcher.accumulateDataBlock == nil,
      downloadPath: destination?.path, requestBody: requestBody)
    inFlight.withLock { $0[ObjectIdentifier(fetcher)] = state }
  }

  func fetcherDidLeaveThrottleQueue(_ fetcher: SessionFetcher) {
    update(fetcher) { $0.record.throttleEndDate = Date() }
  }

  func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) {
    update(fetcher) { state in
      let method = request.httpMethod ?? "GET"
      let kind: LoggedExchange.Kind
      if let previous = state.record.exchanges.last {
        if previous.retryDelay != nil {
          kind = .retry(number: state.record.retryCount + 1)
        } else if previous.statusCode == 206 {
          // A partial response is never redirected: this asks for the body's next window.
          kind = .continuation
        } else {
          kind = .redirect
        }
      } else {
        kind = .first
      }
      let sendsBody = method != "GET" && method != "HEAD"
      let exchange = LoggedExchange(
        kind: kind, method: method, url: request.url?.absoluteString ?? "",
        requestHeaders: request.loggedHeaders,
        requestBody: sendsBody ? state.requestBody : nil, sentDate: Date())
      if let last = state.record.exchanges.indices.last, state.record.exchanges[last].endDate == nil {
        state.record.exchanges[last].endDate = exchange.sentDate
      }
      state.record.exchanges.append(exchange)
    }
  }

  func fetcher(
    _ fetcher: SessionFetcher, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64
  ) {
    let now = Date()
    update(fetcher) { state in
      guard let last = state.record.exchanges.indices.last, state.record.exchanges[last].responseDate == nil
      else { return }
      state.record.exchanges[last].bodySentDate = now
    }
  }

  func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
    update(fetcher) { state in
      guard let last = state.record.exchanges.indices.last else { return }
      var exchange = state.record.exchanges[last]
      exchange.responseDate = Date()
      exchange.responseURL = response.url?.absoluteString
      if let http = response as? HTTPURLResponse {
        exchange.statusCode = http.statusCode
        exchange.responseHeaders = http.loggedHeaders
      } else {
        exchange.statusCode = 0
      }
      exchange.responseBody = LoggedBody(source: .data, data: Data(), totalLength: 0)
      state.record.exchanges[last] = exchange
    }
  }

  func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
    update(fetcher) { state in
      guard let last = state.record.exchanges.indices.last else { return }
      var body = state.record.exchanges[last].responseBody
      body.totalLength = (body.totalLength ?? 0) + Int64(data.count)
      if !state.keepsResponseBody, (200..<300).contains(state.record.exchanges[last].statusCode ?? 0) {
        // A successful body written to a file or handed to an accumulate block (each Range window
        // of a download included) is logged by its size, not kept.
        body.source = .delivered(path: state.downloadPath)
        state.record.exchanges[last].responseBody = body
        return
      }
      let room = state.bodyCap - body.data.count
      if room > 0 { body.data.append(data.prefix(room)) }
      if data.count > room { body.isTruncated = true }
      state.record.exchanges[last].responseBody = body
    }
  }

  func fetcher(_ fetcher: SessionFetcher, willRedirectFrom response: HTTPURLResponse, to request: URLRequest)
  {
    update(fetcher) { state in
      guard let last = state.record.exchanges.indices.last else { return }
      state.record.exchanges[last].redirectedTo = request.url?.absoluteString
      state.record.exchanges[last].endDate = Date()
      state.record.exchanges[last].metrics = fetcher.timing.transferMetrics
    }
  }

  func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {
    update(fetcher) { state in
      guard let last = state.record.exchanges.indices.last else { return }
      state.record.exchanges[last].retryDelay = delay
      state.record.exchanges[last].errorText = Self.describe(error)
      state.record.exchanges[last].endDate = Date()
      state.record.exchanges[last].metrics = fetcher.timing.transferMetrics
    }
  }

  func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {
    guard var state = inFlight.withLock({ $0.removeValue(forKey: ObjectIdentifier(fetcher)) }) else { return }
    let settings = LoggingSettings.shared.current
    let now = Date()
    state.record.endDate = fetcher.timing.endDate ?? now
    state.record.comment = fetcher.comment ?? state.record.comment
    let status = fetcher.statusCode
    state.record.callerStatus = status > 0 ? status : nil
    if let error {
      state.record.errorText = Self.describe(error)
      if case .cancelled = error as? SessionFetcherError { state.record.isCancelled = true }
    }
    if let last = state.record.exchanges.indices.last {
      var exchange = state.record.exchanges[last]
      if exchange.endDate == nil { exchange.endDate = state.record.endDate }
      if exchange.metrics == nil { exchange.metrics = fetcher.timing.transferMetrics }
      if !state.keepsResponseBody && exchange.statusCode != nil {
        if let data, !data.isEmpty, error != nil {
          // An error body of a download is delivered in memory.
          exchange.responseBody = LoggedBody.capped(data, cap: state.bodyCap)
        } else {
          exchange.responseBody = LoggedBody(
            source: .delivered(path: state.downloadPath), data: Data(),
            totalLength: exchange.responseBody.totalLength ?? 0)
        }
      }
      state.record.exchanges[last] = exchange
    }
    let redactor: LogRedactor? = settings.isRedactionEnabled ? settings.redactor : nil
    let prepared = RecordPreparer(redactor: redactor).prepare(state.record)
    let text = TextLogFormatter.format(prepared)
    fetcher.setProperty(text, forKey: SessionFetcher.logPropertyKey)
    if settings.isToFileEnabled {
      // Without body files the file's text log is this one: the writer need not format it again.
      writer.write(prepared, text: BodyFileNames.hasFiles(prepared) ? nil : text, settings: settings)
    }
  }

  private func update(_ fetcher: SessionFetcher, _ body: (inout InFlight) -> Void) {
    update(ObjectIdentifier(fetcher), body)
  }

  private func update(_ key: ObjectIdentifier, _ body: (inout InFlight) -> Void) {
    inFlight.withLock { states in
      // In place: a copy taken out and stored back would copy the kept body bytes on every chunk.
      guard states[key] != nil else { return }
      body(&states[key]!)
    }
  }

  /// Logs a streamed request body (a stream provider's, a MIME document's) by its bytes: the
  /// exchange being sent gets the pieces the engine reads, up to the body size cap, and the count
  /// of all of them. A stream that is never read stays logged by its declared size.
  func fetcherWillReadRequestBodyStream(_ fetcher: SessionFetcher) -> (@Sendable (Data) -> Void)? {
    let key = ObjectIdentifier(fetcher)
    var target: (exchange: Int, stream: Int)?
    update(key) { state in
      guard state.requestBody?.source == .stream, let last = state.record.exchanges.indices.last,
        state.record.exchanges[last].requestBody != nil
      else { return }
      state.bodyStreamNumber += 1
      state.record.exchanges[last].requestBody = LoggedBody(source: .data, data: Data(), totalLength: 0)
      target = (last, state.bodyStreamNumber)
    }
    guard let target else { return nil }
    return { [weak self] piece in
      self?.update(key) { state in
        guard state.bodyStreamNumber == target.stream,
          state.record.exchanges.indices.contains(target.exchange),
          var body = state.record.exchanges[target.exchange].requestBody
        else { return }
        body.totalLength = (body.totalLength ?? 0) + Int64(piece.count)
        let room = state.bodyCap - body.data.count
        if room > 0 { body.data.append(piece.prefix(room)) }
        if piece.count > room { body.isTruncated = true }
        state.record.exchanges[target.exchange].requestBody = body
      }
    }
  }

  static func describe(_ error: any Error) -> String {
    if let error = error as? SessionFetcherError { return error.description }
    if let error = error as? URLError {
      return "URLError \(error.code.rawValue): \(error.localizedDescription)"
    }
    return String(describing: error)
  }
}
