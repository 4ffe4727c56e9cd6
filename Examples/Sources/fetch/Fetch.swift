import ArgumentParser
import FetcherService
import Foundation
import SessionFetcher

/// `fetch`: a small curl-like command built on SessionFetcher.
@main
struct Fetch: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Fetch a URL with SessionFetcher (a small curl).",
    discussion: """
      Prints the response body on stdout, or saves it with -o (progress on stderr when it is a \
      terminal). Exit codes follow curl: 1 refused URL, 6 unknown host, 7 cannot connect, \
      22 HTTP error with --fail, 23 write error, 26 unreadable -d @file or -F name=@file, \
      28 timeout.
      """)

  @Argument(help: "The URL to fetch (https; http only with --insecure-http).")
  var url: String

  @Option(name: .shortAndLong, help: "Save the body to this file instead of printing it.")
  var output: String?

  @Option(name: [.customShort("X"), .customLong("request")], help: "The HTTP method.")
  var method: String?

  @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value'.")
  var headers: [String] = []

  @Option(name: [.customShort("d"), .customLong("data")], help: "The request body: text, or @FILE.")
  var data: String?

  @Option(
    name: [.customShort("F"), .customLong("form")],
    help: "A multipart/form-data field (repeatable): 'name=value', or 'name=@FILE[;type=T][;filename=N]'.")
  var form: [String] = []

  @Option(help: "Retry transient failures (503, timeouts, resets…) up to this many times.")
  var retry: Int = 0

  @Option(name: .customLong("max-time"), help: "Give up after this many seconds.")
  var maxTime: Double?

  @Option(name: [.customShort("u"), .customLong("user")], help: "Basic credentials, 'user:password'.")
  var user: String?

  @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers.")
  var includeHeaders = false

  @Flag(name: [.customShort("f"), .customLong("fail")], help: "Exit 22 on an HTTP status of 400 or more.")
  var failOnHTTPError = false

  @Flag(name: .customLong("insecure-http"), help: "Allow plain http URLs.")
  var insecureHTTP = false

  @Option(
    name: .customLong("log-dir"),
    help: "Log the fetch with HTTPLogging (HTML index, text log, HAR) into a run folder in DIR.")
  var logDirectory: String?

  func validate() throws {
    guard retry >= 0 else { throw ValidationError("--retry must be 0 or more") }
    if let maxTime, maxTime <= 0 { throw ValidationError("--max-time must be more than 0") }
    for header in headers where HeaderLine(header) == nil {
      throw ValidationError("-H needs 'Name: value', got '\(header)'")
    }
    if let user, !user.contains(":") { throw ValidationError("--user needs 'user:password'") }
    for field in form where FormField(field) == nil {
      throw ValidationError("-F needs 'name=value' or 'name=@FILE[;type=T][;filename=N]', got '\(field)'")
    }
    if data != nil && !form.isEmpty { throw ValidationError("-d and -F cannot be combined") }
    if let logDirectory, logDirectory.isEmpty { throw ValidationError("--log-dir needs a folder") }
  }

  func run() async throws {
    if let logDirectory { FetchLogging.start(in: logDirectory) }
    do {
      let fetcher = try makeFetcher()
      defer { if logDirectory != nil { FetchLogging.finish() } }
      try await FetchRun(command: self, fetcher: fetcher).perform()
    } catch let failure as FetchFailure {
      FileHandle.standardError.write(Data("fetch: \(failure.message)\n".utf8))
      throw ExitCode(failure.exitCode)
    }
  }

  /// Builds the fetcher from the options; throws a ``FetchFailure`` for a refused URL or body.
  func makeFetcher() throws -> SessionFetcher {
    guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
      parsed.host?.isEmpty == false
    else {
      throw FetchFailure(FetchFailure.refusedURL, "not a URL: \(url)")
    }
    guard scheme == "https" || (scheme == "http" && insecureHTTP) else {
      let hint = scheme == "http" ? "; pass --insecure-http to allow plain http" : ""
      throw FetchFailure(FetchFailure.refusedURL, "refusing \(scheme) URL \(url)\(hint)")
    }
    var request = URLRequest(url: parsed)
    for header in headers {
      if let line = HeaderLine(header) { request.setValue(line.value, forHTTPHeaderField: line.name) }
    }
    let fetcher = SessionFetcher(request: request)
    fetcher.callbackQueue = DispatchQueue(label: "fetch.callbacks")
    if insecureHTTP { fetcher.allowedInsecureSchemes = ["http"] }
    try attachBody(to: fetcher)
    if let method { fetcher.request?.httpMethod = method.uppercased() }
    if let user, let colon = user.firstIndex(of: ":") {
      fetcher.credential = URLCredential(
        user: String(user[..<colon]), password: String(user[user.index(after: colon)...]),
        persistence: .forSession)
    }
    if let maxTime { fetcher.resourceTimeoutInterval = maxTime }
    if retry > 0 {
      fetcher.isRetryEnabled = true
      let limit = retry
      fetcher.retryBlock = { [weak fetcher] suggested, _, respond in
        respond(suggested && (fetcher?.retryCount ?? limit) < limit)
      }
    }
    return fetcher
  }

  private func attachBody(to fetcher: SessionFetcher) throws {
    if !form.isEmpty {
      let document = try FormField.document(form.compactMap(FormField.init))
      do {
        try fetcher.setBody(document)
      } catch {
        throw FetchFailure(FetchFailure.readError, "cannot build the -F form: \(error)")
      }
      if method == nil { fetcher.request?.httpMethod = "POST" }
      return
    }
    guard let data else { return }
    if data.hasPrefix("@") {
      let file = URL(fileURLWithPath: String(data.dropFirst()))
      guard FileManager.default.isReadableFile(atPath: file.path) else {
        throw FetchFailure(FetchFailure.readError, "cannot read the body file \(file.path)")
      }
      fetcher.bodyFileURL = file
    } else {
      fetcher.bodyData = Data(data.utf8)
    }
    if !headers.contains(where: { HeaderLine($0)?.name.lowercased() == "content-type" }) {
      fetcher.setRequestValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
    }
    if method == nil { fetcher.request?.httpMethod = "POST" }
  }
}

/// A `Name: value` header argument.
struct HeaderLine {
  let name: String
  let value: String

  init?(_ text: String) {
    guard let colon = text.firstIndex(of: ":") else { return nil }
    let name = text[..<colon].trimmingCharacters(in: .whitespaces)
    guard !name.isEmpty, !name.contains(" ") else { return nil }
    self.name = name
    self.value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
  }
}
