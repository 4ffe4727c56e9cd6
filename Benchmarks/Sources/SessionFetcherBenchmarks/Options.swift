import Foundation
import SessionFetcher

/// Command-line options shared by the driver (`all`) and the child runs it starts (`child …`).
struct Options {
  /// nginx's base URL.
  var base = URL(string: "http://127.0.0.1:18931/")!
  /// nginx over TLS, HTTP/1.1 only (ALPN offers no h2), and over TLS with HTTP/2.
  var tlsBase: URL?
  var h2Base: URL?
  /// The private CA of nginx's TLS certificate (made by `scripts/make-test-certs.sh`).
  var caFile: URL?
  /// The system's CA bundle plus `caFile`: bind-mounted over the system's bundle, in a private mount
  /// namespace, for the URLSession engine's runs (FoundationNetworking takes no trust settings).
  var caBundle: URL?
  /// Which server a child run talks to: `plain` (http), `tls` (HTTPS, HTTP/1.1) or `h2` (HTTPS,
  /// HTTP/2).
  var via = "plain"
  /// The work directory: `www/` (nginx's root with `small.txt` and `big.bin`), `out.bin`, logs.
  var work = URL(fileURLWithPath: "/tmp/sessionfetcher-bench", isDirectory: true)
  /// Timed small GETs per run.
  var count = 2000
  /// Small GETs in flight (child runs).
  var inflight = 1
  /// Hosts a small-GET child run spreads its requests over, in turn: 127.0.0.1, 127.0.0.2, … (the
  /// scaling rows; nginx listens on the first 16).
  var hosts = 1
  /// AsyncHTTPClient's connections per host in a small-GET child run; 0: `max(inflight, 6)`.
  var connections = 0
  /// Rounds of every workload; the clients alternate inside each round.
  var rounds = 3
  /// HTTPLogging mode of a small-GET child run: off, files, memory.
  var logging = "off"
  /// Workload groups the driver runs: small, start, scaling, memory, download, upload, mime, tls.
  var only: Set<String> = ["small", "start", "scaling", "memory", "download", "upload", "mime", "tls"]
  /// The size of `big.bin`.
  var bigSize: Int64 = 1 << 30
  /// The size of the MIME document generated and parsed.
  var mimeSize = 256 << 20
  /// The size of `small.txt`.
  var smallLength = 5
  /// Positional arguments left after the options.
  var positional: [String] = []

  static let usage = """
    usage: fetcher-bench all [--quick] [--rounds N] [--count N]
                             [--only small,start,scaling,memory,download,upload,mime,tls]
                             [--base URL] [--tls-base URL --h2-base URL --ca FILE --ca-bundle FILE]
                             [--work DIR] [--big-size BYTES] [--mime-size BYTES]
           fetcher-bench child small (raw|fetcher|fetcher-quiet|service|ahc) [--inflight N] [--count N]
                             [--logging off|files|memory] [--via plain|tls|h2] [--hosts N] [--connections N]
           fetcher-bench child start (service|ahc) [--inflight N] [--count N] [--via plain|tls|h2]
           fetcher-bench child bulk (raw-download|raw-download-datatask|fetcher-download|ahc-download|raw-upload-file|raw-upload-file-stream|
                             raw-upload-mime|fetcher-upload-file|fetcher-upload-file-chunked|fetcher-upload-mime|
                             ahc-upload-file)
           fetcher-bench child memory (service|ahc)
           fetcher-bench child stopped (service|service-keeping) [--count N] [--rounds N]
           fetcher-bench child mime (generate-stream|generate-data|parse|parse-shared|parse-strict|
                             parse-headers|parse-delimiters)
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
      case "--hosts":
        hosts = try number(argument)
        guard hosts <= 254 else { throw BenchmarkError("--hosts takes 1 to 254") }
      case "--connections": connections = try number(argument)
      case "--logging": logging = try value(argument)
      case "--only": only = Set(try value(argument).split(separator: ",").map(String.init))
      case "--big-size": bigSize = Int64(try number(argument))
      case "--mime-size": mimeSize = try number(argument)
      case "--small-length": smallLength = try number(argument)
      case "--base": base = try baseURL(try value(argument), argument)
      case "--tls-base": tlsBase = try baseURL(try value(argument), argument)
      case "--h2-base": h2Base = try baseURL(try value(argument), argument)
      case "--ca": caFile = URL(fileURLWithPath: try value(argument))
      case "--ca-bundle": caBundle = URL(fileURLWithPath: try value(argument))
      case "--via":
        via = try value(argument)
        guard ["plain", "tls", "h2"].contains(via) else { throw BenchmarkError("bad --via \(via)") }
      case "--work": work = URL(fileURLWithPath: try value(argument), isDirectory: true)
      default:
        if argument.hasPrefix("--") { throw BenchmarkError("unknown option \(argument)") }
        positional.append(argument)
      }
    }
  }

  private func baseURL(_ text: String, _ name: String) throws -> URL {
    guard let url = URL(string: text.hasSuffix("/") ? text : text + "/") else {
      throw BenchmarkError("bad \(name) \(text)")
    }
    return url
  }

  /// The options a child run needs to find the server and the files.
  var childArguments: [String] {
    var arguments = [
      "--base", base.absoluteString, "--work", work.path, "--count", "\(count)",
      "--big-size", "\(bigSize)", "--mime-size", "\(mimeSize)", "--small-length", "\(smallLength)",
    ]
    if let tlsBase { arguments += ["--tls-base", tlsBase.absoluteString] }
    if let h2Base { arguments += ["--h2-base", h2Base.absoluteString] }
    if let caFile { arguments += ["--ca", caFile.path] }
    return arguments
  }

  /// Whether the TLS servers were given (`run.sh` gives them).
  var hasTLS: Bool { tlsBase != nil && h2Base != nil && caFile != nil }

  /// `path` on each of the `hosts` loopback hosts of the server `via` names: 127.0.0.1, 127.0.0.2, …
  func urls(_ path: String) -> [URL] {
    (1...hosts).map { index in
      var components = URLComponents(
        url: viaBase.appendingPathComponent(path), resolvingAgainstBaseURL: false)
      if hosts > 1 { components?.host = "127.0.0.\(index)" }
      return components?.url ?? viaBase.appendingPathComponent(path)
    }
  }

  /// The base URL of the server `via` names.
  var viaBase: URL {
    switch via {
    case "tls": tlsBase ?? base
    case "h2": h2Base ?? base
    default: base
    }
  }

  /// The TLS settings the libcurl engine needs to trust nginx's certificate (the URLSession
  /// engine's runs trust it through their mount namespace and keep the default settings).
  var benchTLSSettings: TLSSettings {
    var settings = TLSSettings()
    if via != "plain", FetcherEngine.default == .libcurl, let caFile {
      settings.additionalTrustRoots = [caFile]
      // The h2 rows measure HTTP/2, which libcurl before 8.13 is not offered by default.
      if via == "h2" { settings.offersHTTP2 = true }
    }
    return settings
  }
}
