import Foundation

/// Command-line options shared by the driver (`all`) and the child runs it starts (`child …`).
struct Options {
  /// nginx's base URL.
  var base = URL(string: "http://127.0.0.1:18931/")!
  /// The work directory: `www/` (nginx's root with `small.txt` and `big.bin`), `out.bin`, logs.
  var work = URL(fileURLWithPath: "/tmp/sessionfetcher-bench", isDirectory: true)
  /// Timed small GETs per run.
  var count = 2000
  /// Small GETs in flight (child runs).
  var inflight = 1
  /// Rounds of every workload; the clients alternate inside each round.
  var rounds = 3
  /// HTTPLogging mode of a small-GET child run: off, files, memory.
  var logging = "off"
  /// Workload groups the driver runs: small, download, upload, mime.
  var only: Set<String> = ["small", "download", "upload", "mime"]
  /// The size of `big.bin`.
  var bigSize: Int64 = 1 << 30
  /// The size of the MIME document generated and parsed.
  var mimeSize = 256 << 20
  /// The size of `small.txt`.
  var smallLength = 5
  /// Positional arguments left after the options.
  var positional: [String] = []

  static let usage = """
    usage: fetcher-bench all [--quick] [--rounds N] [--count N] [--only small,download,upload,mime]
                             [--base URL] [--work DIR] [--big-size BYTES] [--mime-size BYTES]
           fetcher-bench child small (raw|fetcher|fetcher-quiet|service|ahc) [--inflight N] [--count N]
                             [--logging off|files|memory]
           fetcher-bench child bulk (raw-download|raw-download-datatask|fetcher-download|ahc-download|raw-upload-file|raw-upload-file-stream|
                             raw-upload-mime|fetcher-upload-file|fetcher-upload-file-chunked|fetcher-upload-mime|
                             ahc-upload-file)
           fetcher-bench child mime (generate-stream|generate-data|parse)
    """

  init(arguments: [String]) throws {
    var iterator = arguments.makeIterator()
    func value(_ name: String) throws -> String {
      guard let value = iterator.next() else { throw BenchmarkError("\(name) needs a value") }
      return value
    }
    func number(_ name: String) throws -> Int {
      guard let number = Int(try value(name)), number > 0 else {
        throw BenchmarkError("\(name) needs a positive number")
      }
      return number
    }
    while let argument = iterator.next() {
      switch argument {
      case "--quick":
        rounds = 2
        count = 1000
      case "--rounds": rounds = try number(argument)
      case "--count": count = try number(argument)
      case "--inflight": inflight = try number(argument)
      case "--logging": logging = try value(argument)
      case "--only": only = Set(try value(argument).split(separator: ",").map(String.init))
      case "--big-size": bigSize = Int64(try number(argument))
      case "--mime-size": mimeSize = try number(argument)
      case "--small-length": smallLength = try number(argument)
      case "--base":
        let text = try value(argument)
        guard let url = URL(string: text.hasSuffix("/") ? text : text + "/") else {
          throw BenchmarkError("bad --base \(text)")
        }
        base = url
      case "--work": work = URL(fileURLWithPath: try value(argument), isDirectory: true)
      default:
        if argument.hasPrefix("--") { throw BenchmarkError("unknown option \(argument)") }
        positional.append(argument)
      }
    }
  }

  /// The options a child run needs to find the server and the files.
  var childArguments: [String] {
    [
      "--base", base.absoluteString, "--work", work.path, "--count", "\(count)",
      "--big-size", "\(bigSize)", "--mime-size", "\(mimeSize)", "--small-length", "\(smallLength)",
    ]
  }
}
