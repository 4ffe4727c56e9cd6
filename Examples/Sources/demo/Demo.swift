import Foundation

/// `demo`: a tour of SessionFetcher against an in-process server, or a fetch of one URL.
@main
struct Demo {
  static let usage = """
    usage: demo                          tour the library against an embedded server on 127.0.0.1
           demo --serve                  run only that server: print its address, serve until killed
           demo URL [--insecure-http]    fetch URL (https; http only with --insecure-http) and print
                                         its status, headers and body size
    """

  static func main() async {
    do {
      switch try Invocation(arguments: Array(CommandLine.arguments.dropFirst())) {
      case .help:
        Console.say(usage)
      case .tour:
        try await Tour.run()
      case .serve:
        try await LocalServer.serve()
      case .fetch(let url, let allowsInsecureHTTP):
        try await URLFetch.run(url: url, allowsInsecureHTTP: allowsInsecureHTTP)
      }
    } catch let error as UsageError {
      Console.writeError("demo: \(error.description)\n\(usage)\n")
      exit(2)
    } catch {
      let message = (error as? DemoFailure)?.description ?? Format.error(error)
      Console.writeError("demo: error: \(message)\n")
      exit(1)
    }
  }
}

/// What the command line asks for.
enum Invocation: Equatable {
  case tour
  case serve
  case help
  case fetch(URL, allowsInsecureHTTP: Bool)

  init(arguments: [String]) throws {
    var url: URL?
    var allowsInsecureHTTP = false
    if arguments == ["--serve"] {
      self = .serve
      return
    }
    for argument in arguments {
      switch argument {
      case "-h", "--help":
        self = .help
        return
      case "--serve":
        throw UsageError("--serve takes no other argument")
      case "--insecure-http":
        allowsInsecureHTTP = true
      case _ where argument.hasPrefix("-"):
        throw UsageError("unknown option \(argument)")
      default:
        guard url == nil else { throw UsageError("only one URL, please (got \(argument) as well)") }
        guard let parsed = URL(string: argument), let scheme = parsed.scheme?.lowercased(),
          scheme == "https" || scheme == "http", parsed.host?.isEmpty == false
        else {
          throw UsageError("not an http(s) URL: \(argument)")
        }
        url = parsed
      }
    }
    guard let url else {
      guard !allowsInsecureHTTP else { throw UsageError("--insecure-http needs a URL") }
      self = .tour
      return
    }
    if url.scheme?.lowercased() == "http" && !allowsInsecureHTTP {
      throw UsageError("refusing plain http for \(url.absoluteString); pass --insecure-http to allow it")
    }
    self = .fetch(url, allowsInsecureHTTP: allowsInsecureHTTP)
  }
}

/// A command line the demo does not understand.
struct UsageError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}
