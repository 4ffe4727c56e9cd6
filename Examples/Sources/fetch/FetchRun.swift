import Foundation
import SessionFetcher

/// One run of `fetch`: performs the request and writes the result where the options say.
struct FetchRun {
  let command: Fetch
  let fetcher: SessionFetcher

  func perform() async throws {
    let destination = command.output.map { URL(fileURLWithPath: $0) }
    let progress = ProgressBar()
    if let destination {
      fetcher.destinationFileURL = destination
      fetcher.downloadProgressBlock = { _, written, expected in
        progress.update(written: written, expected: expected)
      }
    }

    let body: Data
    do {
      body = try await fetchWithinDeadline()
      progress.finish()
    } catch let error as SessionFetcherError {
      progress.finish()
      guard let status = error.statusCode else { throw failure(for: error) }
      if command.failOnHTTPError {
        throw FetchFailure(FetchFailure.httpError, "the requested URL returned error: \(status)")
      }
      // Like curl without --fail: an HTTP error is still a response, shown or saved as such.
      try deliver(error.data ?? Data(), to: destination, writtenByFetcher: false)
      return
    } catch {
      progress.finish()
      throw failure(for: error)
    }
    try deliver(body, to: destination, writtenByFetcher: true)
  }

  /// Fetches, stopping the fetch when `--max-time` runs out (across retries too).
  private func fetchWithinDeadline() async throws -> Data {
    guard let maxTime = command.maxTime else { return try await fetcher.beginFetch() }
    let fetcher = self.fetcher
    return try await withThrowingTaskGroup(of: Data?.self) { group in
      group.addTask { try await fetcher.beginFetch() }
      group.addTask {
        try await Task.sleep(for: .seconds(maxTime))
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let data = first else {
        throw FetchFailure(FetchFailure.timedOut, "operation timed out after \(maxTime) s")
      }
      return data
    }
  }

  private func deliver(_ body: Data, to destination: URL?, writtenByFetcher: Bool) throws {
    if command.includeHeaders {
      FileHandle.standardOutput.write(Data(headerBlock().utf8))
    }
    guard let destination else {
      FileHandle.standardOutput.write(body)
      return
    }
    if !writtenByFetcher {
      do {
        try body.write(to: destination, options: .atomic)
      } catch {
        throw FetchFailure(FetchFailure.writeError, "cannot write \(destination.path): \(error)")
      }
    }
  }

  /// `HTTP/1.1 200 OK` and the response headers, as `-i` prints them.
  private func headerBlock() -> String {
    let status = fetcher.statusCode
    var lines = ["HTTP/1.1 \(status) \(HTTPURLResponse.localizedString(forStatusCode: status).capitalized)"]
    for (name, value) in (fetcher.responseHeaders ?? [:]).sorted(by: { $0.key < $1.key }) {
      lines.append("\(name): \(value)")
    }
    return lines.joined(separator: "\r\n") + "\r\n\r\n"
  }

  /// The message and exit code for a failed fetch.
  private func failure(for error: any Error) -> FetchFailure {
    if let failure = error as? FetchFailure { return failure }
    if let error = error as? URLError {
      let text = "\(error.localizedDescription) (URLError \(error.code.rawValue))"
      switch error.code {
      case .cannotFindHost, .dnsLookupFailed:
        return FetchFailure(FetchFailure.couldNotResolveHost, "could not resolve host: \(text)")
      case .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet:
        return FetchFailure(FetchFailure.couldNotConnect, "could not connect: \(text)")
      case .timedOut:
        return FetchFailure(FetchFailure.timedOut, "operation timed out: \(text)")
      default:
        return FetchFailure(FetchFailure.failed, text)
      }
    }
    if let error = error as? SessionFetcherError {
      switch error {
      case .insecureRequest:
        return FetchFailure(FetchFailure.refusedURL, error.description)
      case .bodyUnavailable:
        return FetchFailure(FetchFailure.readError, error.description)
      case .downloadFailed:
        return FetchFailure(FetchFailure.writeError, error.description)
      default:
        return FetchFailure(FetchFailure.failed, error.description)
      }
    }
    return FetchFailure(FetchFailure.failed, String(describing: error))
  }
}
