import Foundation
import SessionFetcher

/// The command line of `tail-events`.
struct TailOptions {
  static let usage = """
    usage: tail-events [options] URL
           tail-events --selftest [--engine E] [--log]

    Prints the server-sent events of URL as they arrive (standard output), and each reconnection
    with its cause and delay (standard error). Ctrl-C stops and prints the last event ID.

      --last-event-id ID      start from an ID saved by an earlier run (sent as Last-Event-ID)
      --engine E              urlSession or libcurl (default: SESSIONFETCHER_ENGINE, else urlSession)
      --max-reconnections N   give up after N reconnections in a row that receive nothing
      --insecure-http         allow http:// URLs (default: https only; loopback needs this too)
      --log                   log every request with HTTPLogging; prints the run's index.html path
      --selftest              check reconnection and resumption against a local test server
      -h, --help              this text
    """

  var url: URL?
  var lastEventID: String?
  var engine = FetcherEngine.default
  var maximumReconnections = 5
  var insecureHTTP = false
  var log = false
  var selfTest = false
  var showsHelp = false

  init(arguments: [String]) throws {
    var rest = arguments[...]
    func value(of option: String) throws -> String {
      guard let value = rest.popFirst() else { throw TailUsageError("\(option) needs a value") }
      return value
    }
    while let argument = rest.popFirst() {
      switch argument {
      case "--last-event-id": lastEventID = try value(of: argument)
      case "--engine":
        switch try value(of: argument) {
        case "urlSession": engine = .urlSession
        case "libcurl": engine = .libcurl
        case let other: throw TailUsageError("unknown engine \(other) (urlSession or libcurl)")
        }
      case "--max-reconnections":
        guard let count = Int(try value(of: argument)), count >= 0 else {
          throw TailUsageError("--max-reconnections needs a count of 0 or more")
        }
        maximumReconnections = count
      case "--insecure-http": insecureHTTP = true
      case "--log": log = true
      case "--selftest": selfTest = true
      case "-h", "--help": showsHelp = true
      case let option where option.hasPrefix("-"): throw TailUsageError("unknown option \(option)")
      default:
        guard url == nil else { throw TailUsageError("more than one URL") }
        guard let parsed = URL(string: argument), parsed.scheme != nil, parsed.host != nil else {
          throw TailUsageError("not a URL: \(argument)")
        }
        url = parsed
      }
    }
    if !showsHelp && !selfTest && url == nil { throw TailUsageError("no URL given") }
  }

  /// The event source of `url` with these options: the engine, http when allowed, the limit.
  func eventSource(url: URL, lastEventID: String? = nil) -> EventSource {
    let engine = engine
    let insecure = insecureHTTP
    return SessionFetcher.eventSource(
      url: url, lastEventID: lastEventID ?? self.lastEventID, maximumReconnections: maximumReconnections
    ) { request in
      let fetcher = SessionFetcher(request: request)
      fetcher.engine = engine
      fetcher.callbackQueue = DispatchQueue(label: "tail-events.callbacks")
      fetcher.comment = "tail-events"
      if insecure {
        fetcher.allowedInsecureSchemes = ["http"]
        fetcher.allowLocalhostRequest = true
      }
      return fetcher
    }
  }
}

/// A command-line mistake (exit status 2).
struct TailUsageError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = "tail-events: \(description)" }
}
