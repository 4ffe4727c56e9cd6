import Foundation
import HTTPLogging
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `tail-events`: follows a server-sent event stream as `tail -f` follows a file. Events go to
/// standard output; each reconnection, with its cause and delay, goes to standard error. Ctrl-C
/// stops it and prints the last event ID, which `--last-event-id` resumes from.
@main
struct TailEvents {
  static func main() async {
    let options: TailOptions
    do {
      options = try TailOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    } catch {
      TailOutput.error("\(error)\n\n\(TailOptions.usage)")
      exit(2)
    }
    if options.showsHelp {
      print(TailOptions.usage)
      return
    }
    if options.log {
      // A command-line flag is an explicit opt-in, so a release build logs as well.
      SessionFetcher.isLoggingAllowedInReleaseBuilds = true
      SessionFetcher.isLoggingEnabled = true
    }
    var succeeded: Bool
    do {
      if options.selfTest {
        succeeded = try await SelfTest.run(options)
      } else {
        try await follow(options)
        succeeded = true
      }
    } catch {
      TailOutput.error("tail-events: error: \(error)")
      succeeded = false
    }
    if options.log { printLogIndex() }
    exit(succeeded ? 0 : 1)
  }

  /// Follows `options.url` until the stream ends, fails, or Ctrl-C stops it.
  static func follow(_ options: TailOptions) async throws {
    guard let url = options.url else { throw TailUsageError("no URL given") }
    let source = options.eventSource(url: url)
    let tail = Task {
      try await Tail.run(
        source, lastEventID: options.lastEventID, maximumReconnections: options.maximumReconnections)
    }
    let interrupt = InterruptWatch { tail.cancel() }
    defer { interrupt.stop() }
    let outcome = try await tail.value
    let resume = outcome.lastEventID.isEmpty ? "" : "; resume with --last-event-id \(outcome.lastEventID)"
    switch outcome.ending {
    case .interrupted: TailOutput.error("tail-events: stopped\(resume)")
    case .endedByServer: TailOutput.error("tail-events: the server ended the stream (204)\(resume)")
    case .stoppedByCaller: break
    }
  }

  /// Names the run's HTML index of HTTPLogging on standard error.
  static func printLogIndex() {
    SessionFetcher.flushLogs()
    if let run = SessionFetcher.loggingRunDirectory {
      TailOutput.error("tail-events: HTTP log \(run.appendingPathComponent("index.html").path)")
    } else {
      TailOutput.error("tail-events: nothing was logged")
    }
  }
}

/// The consuming loop, shared by a real run and the self-test.
enum Tail {
  /// How a run ended without an error.
  enum Ending: Equatable {
    /// Ctrl-C (the task was cancelled).
    case interrupted
    /// The server answered 204: do not reconnect.
    case endedByServer
    /// `shouldStop` said so.
    case stoppedByCaller
  }

  /// What a run saw.
  struct Outcome {
    var ending: Ending
    var lastEventID: String
    var updates: [EventSourceUpdate]
  }

  /// Prints every event of `source` to standard output and every reconnection to standard error,
  /// until the stream ends, `shouldStop` returns true after an event, or the task is cancelled.
  static func run(
    _ source: EventSource, lastEventID: String?, maximumReconnections: Int,
    shouldStop: (ServerSentEvent) -> Bool = { _ in false }
  ) async throws -> Outcome {
    var outcome = Outcome(ending: .endedByServer, lastEventID: lastEventID ?? "", updates: [])
    do {
      for try await update in source.updates {
        outcome.updates.append(update)
        switch update {
        case .event(let event):
          outcome.lastEventID = event.id ?? ""
          TailOutput.event(event)
          if shouldStop(event) {
            outcome.ending = .stoppedByCaller
            return outcome
          }
        case .reconnecting(let delay, let cause, let attempt):
          TailOutput.error(
            "tail-events: \(TailOutput.describe(cause)); reconnecting in \(TailOutput.seconds(delay)) "
              + "(attempt \(attempt) of \(maximumReconnections))")
        }
      }
    } catch SessionFetcherError.cancelled {
      outcome.ending = .interrupted
    }
    return outcome
  }
}

/// Calls `action` on SIGINT (Ctrl-C) instead of ending the process, until stopped.
final class InterruptWatch {
  private let source: any DispatchSourceSignal

  init(_ action: @escaping @Sendable () -> Void) {
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler(handler: action)
    source.resume()
  }

  func stop() {
    source.cancel()
    signal(SIGINT, SIG_DFL)
  }
}

/// What the program writes.
enum TailOutput {
  /// An event on standard output: `[id] type: data`, each further data line indented.
  static func event(_ event: ServerSentEvent) {
    let data = event.data.replacingOccurrences(of: "\n", with: "\n    ")
    // Unbuffered: a tail shows each event as it comes, also into a pipe.
    FileHandle.standardOutput.write(Data("[\(event.id ?? "-")] \(event.event): \(data)\n".utf8))
  }

  /// A line on standard error.
  static func error(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }

  /// A reconnection's cause in words.
  static func describe(_ cause: any Error) -> String {
    switch cause {
    case EventSourceError.streamEnded: return "the server ended the stream"
    case let error as URLError:
      return "connection failed: \(error.localizedDescription) (URLError \(error.code.rawValue))"
    default: return "\(cause)"
    }
  }

  static func seconds(_ value: TimeInterval) -> String {
    String(format: "%.3g s", value)
  }
}
