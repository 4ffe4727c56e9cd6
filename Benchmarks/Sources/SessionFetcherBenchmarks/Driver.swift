import Foundation

/// One measured run, as the driver saw it: the child's `RESULT` fields plus what `/usr/bin/time -v`
/// reported about the whole process.
struct RunRecord {
  var fields: [String: String] = [:]
  var peakRSSKiB = 0
  /// User plus system CPU seconds of the whole process (`time -v`), start-up included.
  var processCPUSeconds = 0.0
  var contextSwitches = 0
  var wallSeconds = 0.0
  /// TCP connections nginx accepted during the run.
  var connections: Int?
  var failure: String?

  func number(_ key: String) -> Double? { fields[key].flatMap(Double.init) }
}

/// A client of one workload: how to start its run and how to read it.
struct BenchCase {
  enum Kind {
    case child([String])
    case curlSmall(parallel: Bool)
    case curlDownload
    case curlUpload
  }

  var label: String
  var kind: Kind
  /// Variables set for the child (`SESSIONFETCHER_ENGINE=libcurl` for the libcurl engine's rows).
  var environment: [String] = []
  /// The server: `plain`, `tls` (HTTPS, HTTP/1.1) or `h2` (HTTPS, HTTP/2).
  var via = "plain"
  /// Runs the child in a private mount namespace whose system CA bundle also holds the test CA: the
  /// only way FoundationNetworking (the URLSession engine) trusts it without touching the machine.
  var trustsTestCAThroughMountNamespace = false

  init(label: String, kind: Kind, environment: [String] = []) {
    self.label = label
    self.kind = kind
    self.environment = environment
  }

  /// The same client on the libcurl engine (the fetcher reads `SESSIONFETCHER_ENGINE` at start).
  static func libcurl(_ label: String, _ kind: Kind) -> BenchCase {
    BenchCase(label: label, kind: kind, environment: ["SESSIONFETCHER_ENGINE=libcurl"])
  }

  /// This client over TLS (`via` is `tls` or `h2`); URLSession-engine children trust the test CA
  /// through their mount namespace.
  func over(_ via: String) -> BenchCase {
    var copy = self
    copy.via = via
    if case .child(let arguments) = kind, !environment.contains("SESSIONFETCHER_ENGINE=libcurl"),
      !arguments.contains(where: { $0.hasPrefix("ahc") })
    {
      copy.trustsTestCAThroughMountNamespace = true
    }
    return copy
  }
}

/// A workload: its clients, measured in alternation, round after round.
struct Workload {
  enum Unit {
    case requests(inflight: Int)
    case transfer
    case mime
    /// What a service, a fetcher and a fetcher in flight hold (`child memory`): its own table.
    case memory
  }

  var name: String
  var unit: Unit
  var cases: [BenchCase]
  /// Ratio rows: (label, numerator case label, denominator case label).
  var ratios: [(String, String, String)] = []
}

/// Runs every workload against nginx, each client run in its own process, and prints the table.
struct Driver {
  let options: Options
  let executable: String
  let timeCommand: String?
  let scratch: URL

  init(options: Options) {
    self.options = options
    executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    timeCommand = FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? "/usr/bin/time" : nil
    scratch = options.work.appendingPathComponent("runs", isDirectory: true)
  }

  private var smallLength: Int {
    Int(fileSize(options.work.appendingPathComponent("www/small.txt")))
  }

  func run() throws {
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    var options = self.options
    options.smallLength = smallLength
    let loadAtStart = Self.loadAverage()
    let startDate = Date()
    var loads: [Double] = []
    var sections: [(Workload, [String: [RunRecord]])] = []
    for workload in workloads(options) {
      var records: [String: [RunRecord]] = [:]
      for round in 0..<options.rounds {
        // Rotate the starting client so that no client always runs first.
        let count = workload.cases.count
        for offset in 0..<count {
          let benchCase = workload.cases[(offset + round) % count]
          loads.append(Self.loadAverage().first ?? 0)
          progress("[\(workload.name) round \(round + 1)/\(options.rounds)] \(benchCase.label)")
          let record = measure(benchCase, workload: workload, options: options)
          if let failure = record.failure { progress("  FAILED: \(failure)") }
          records[benchCase.label, default: []].append(record)
        }
      }
      sections.append((workload, records))
    }
    let loadAtEnd = Self.loadAverage()
    let elapsed = Date().timeIntervalSince(startDate)
    print(
      Report(
        options: options, sections: sections, loadAtStart: loadAtStart, loadAtEnd: loadAtEnd,
        loadsBeforeRuns: loads, elapsed: elapsed
      ).markdown())
  }

  private func workloads(_ options: Options) -> [Workload] {
    var result: [Workload] = []
    func small(_ client: String, _ inflight: Int, logging: String = "off") -> BenchCase.Kind {
      .child(["small", client, "--inflight", "\(inflight)", "--logging", logging])
    }
    if options.only.contains("small") {
      for inflight in [1, 16] {
        result.append(
          Workload(
            name: inflight == 1 ? "small GET, sequential" : "small GET, 16 in flight",
            unit: .requests(inflight: inflight),
            cases: [
              BenchCase(label: "raw URLSession (delegate)", kind: small("raw", inflight)),
              BenchCase(label: "SessionFetcher", kind: small("fetcher", inflight)),
              BenchCase(
                label: "SessionFetcher, postsNotifications off", kind: small("fetcher-quiet", inflight)),
              BenchCase(label: "FetcherService (16 per host)", kind: small("service", inflight)),
              .libcurl("SessionFetcher, libcurl engine", small("fetcher", inflight)),
              .libcurl("FetcherService (16 per host), libcurl engine", small("service", inflight)),
              BenchCase(label: "AsyncHTTPClient", kind: small("ahc", inflight)),
              BenchCase(label: "curl -K", kind: .curlSmall(parallel: inflight > 1)),
              BenchCase(
                label: "SessionFetcher, logging to files", kind: small("fetcher", inflight, logging: "files")),
              BenchCase(
                label: "SessionFetcher, logging in memory",
                kind: small("fetcher", inflight, logging: "memory")),
            ],
            ratios: [
              ("ratio SessionFetcher ÷ raw", "SessionFetcher", "raw URLSession (delegate)"),
              (
                "ratio SessionFetcher, notifications off ÷ raw", "SessionFetcher, postsNotifications off",
                "raw URLSession (delegate)"
              ),
              ("ratio FetcherService ÷ raw", "FetcherService (16 per host)", "raw URLSession (delegate)"),
              (
                "ratio libcurl engine ÷ URLSession engine", "SessionFetcher, libcurl engine", "SessionFetcher"
              ),
              ("ratio libcurl engine ÷ AsyncHTTPClient", "SessionFetcher, libcurl engine", "AsyncHTTPClient"),
              ("ratio libcurl engine ÷ curl", "SessionFetcher, libcurl engine", "curl -K"),
              ("ratio logging to files ÷ off", "SessionFetcher, logging to files", "SessionFetcher"),
              ("ratio logging in memory ÷ off", "SessionFetcher, logging in memory", "SessionFetcher"),
            ]))
      }
    }
    if options.only.contains("start") {
      // One thread starts every request at once; the latency column is the caller's time per start.
      let start = BenchCase.Kind.child(["start", "service", "--inflight", "16"])
      result.append(
        Workload(
          name: "start all at once (latency: the caller's time per start)",
          unit: .requests(inflight: 16),
          cases: [
            BenchCase(label: "FetcherService beginFetch, URLSession engine", kind: start),
            .libcurl("FetcherService beginFetch, libcurl engine", start),
            BenchCase(
              label: "AsyncHTTPClient execute", kind: .child(["start", "ahc", "--inflight", "16"])),
          ],
          ratios: [
            (
              "ratio libcurl engine ÷ AsyncHTTPClient", "FetcherService beginFetch, libcurl engine",
              "AsyncHTTPClient execute"
            ),
            (
              "ratio URLSession engine ÷ AsyncHTTPClient", "FetcherService beginFetch, URLSession engine",
              "AsyncHTTPClient execute"
            ),
          ]))
    }
    if options.only.contains("scaling") {
      // Growth with load: the engine keeps its own per-host connection limit (4 on Linux), and
      // AsyncHTTPClient its default (8 per host); more requests per run, so the p99 is not the ramp.
      for inflight in [64, 256] {
        for hosts in [1, 16] {
          func scaled(_ client: String) -> BenchCase.Kind {
            var arguments = ["small", client, "--inflight", "\(inflight)", "--hosts", "\(hosts)"]
            arguments += ["--count", "\(max(options.count, 20 * inflight))"]
            if client == "ahc" { arguments += ["--connections", "8"] }
            return .child(arguments)
          }
          result.append(
            Workload(
              name: "scaling: small GET, \(inflight) in flight, \(hosts == 1 ? "1 host" : "\(hosts) hosts")",
              unit: .requests(inflight: inflight),
              cases: [
                BenchCase(label: "SessionFetcher, URLSession engine", kind: scaled("fetcher")),
                .libcurl("SessionFetcher, libcurl engine", scaled("fetcher")),
                BenchCase(label: "AsyncHTTPClient", kind: scaled("ahc")),
              ],
              ratios: [
                (
                  "ratio libcurl engine ÷ AsyncHTTPClient", "SessionFetcher, libcurl engine",
                  "AsyncHTTPClient"
                )
              ]))
        }
      }
    }
    if options.only.contains("memory") {
      result.append(
        Workload(
          name: "memory held", unit: .memory,
          cases: [
            BenchCase(label: "FetcherService, URLSession engine", kind: .child(["memory", "service"])),
            BenchCase(label: "raw URLSession data tasks", kind: .child(["memory", "raw"])),
            .libcurl("FetcherService, libcurl engine", .child(["memory", "service"])),
            BenchCase(label: "AsyncHTTPClient", kind: .child(["memory", "ahc"])),
          ]))
    }
    if options.only.contains("download") {
      result.append(
        Workload(
          name: "download to file", unit: .transfer,
          cases: [
            BenchCase(label: "raw URLSession downloadTask", kind: .child(["bulk", "raw-download"])),
            BenchCase(
              label: "raw URLSession dataTask, chunks written by the delegate",
              kind: .child(["bulk", "raw-download-datatask"])),
            BenchCase(
              label: "SessionFetcher destinationFileURL", kind: .child(["bulk", "fetcher-download"])),
            BenchCase(
              label: "SessionFetcher destinationFileURL, downloadWindowLength nil",
              kind: .child(["bulk", "fetcher-download-whole"])),
            .libcurl(
              "SessionFetcher destinationFileURL, libcurl engine", .child(["bulk", "fetcher-download"])),
            BenchCase(label: "AsyncHTTPClient FileDownloadDelegate", kind: .child(["bulk", "ahc-download"])),
            BenchCase(label: "curl -o", kind: .curlDownload),
          ],
          ratios: [
            (
              "ratio SessionFetcher ÷ raw", "SessionFetcher destinationFileURL", "raw URLSession downloadTask"
            ),
            (
              "ratio libcurl engine ÷ URLSession engine", "SessionFetcher destinationFileURL, libcurl engine",
              "SessionFetcher destinationFileURL"
            ),
            (
              "ratio libcurl engine ÷ AsyncHTTPClient", "SessionFetcher destinationFileURL, libcurl engine",
              "AsyncHTTPClient FileDownloadDelegate"
            ),
            ("ratio libcurl engine ÷ curl", "SessionFetcher destinationFileURL, libcurl engine", "curl -o"),
          ]))
    }
    if options.only.contains("upload") {
      result.append(
        Workload(
          name: "upload (PUT)", unit: .transfer,
          cases: [
            BenchCase(
              label: "raw URLSession uploadTask(fromFile:)", kind: .child(["bulk", "raw-upload-file"])),
            BenchCase(label: "SessionFetcher bodyFileURL", kind: .child(["bulk", "fetcher-upload-file"])),
            BenchCase(
              label: "raw URLSession httpBodyStream, InputStream(url:)",
              kind: .child(["bulk", "raw-upload-file-stream"])),
            BenchCase(
              label: "SessionFetcher bodyFileURL, sendsBodyFileChunked",
              kind: .child(["bulk", "fetcher-upload-file-chunked"])),
            BenchCase(
              label: "raw URLSession httpBodyStream, MIMEDocument", kind: .child(["bulk", "raw-upload-mime"])),
            BenchCase(
              label: "SessionFetcher setBody(MIMEDocument)", kind: .child(["bulk", "fetcher-upload-mime"])),
            .libcurl("SessionFetcher bodyFileURL, libcurl engine", .child(["bulk", "fetcher-upload-file"])),
            .libcurl(
              "SessionFetcher setBody(MIMEDocument), libcurl engine", .child(["bulk", "fetcher-upload-mime"])),
            BenchCase(label: "AsyncHTTPClient, file stream", kind: .child(["bulk", "ahc-upload-file"])),
            BenchCase(label: "curl -T", kind: .curlUpload),
          ],
          ratios: [
            (
              "ratio libcurl engine ÷ URLSession engine, file", "SessionFetcher bodyFileURL, libcurl engine",
              "SessionFetcher bodyFileURL"
            ),
            (
              "ratio libcurl engine ÷ AsyncHTTPClient, file", "SessionFetcher bodyFileURL, libcurl engine",
              "AsyncHTTPClient, file stream"
            ),
            ("ratio libcurl engine ÷ curl, file", "SessionFetcher bodyFileURL, libcurl engine", "curl -T"),
            (
              "ratio SessionFetcher ÷ raw, file", "SessionFetcher bodyFileURL",
              "raw URLSession uploadTask(fromFile:)"
            ),
            (
              "ratio chunked ÷ Content-Length, SessionFetcher file",
              "SessionFetcher bodyFileURL, sendsBodyFileChunked", "SessionFetcher bodyFileURL"
            ),
            (
              "ratio SessionFetcher ÷ raw, MIME", "SessionFetcher setBody(MIMEDocument)",
              "raw URLSession httpBodyStream, MIMEDocument"
            ),
          ]))
    }
    if options.only.contains("tls"), options.hasTLS {
      for (via, protocolName) in [("tls", "HTTP/1.1"), ("h2", "HTTP/2")] {
        for inflight in [1, 16] {
          result.append(
            Workload(
              name: "small GET over TLS, \(protocolName), \(inflight == 1 ? "sequential" : "16 in flight")",
              unit: .requests(inflight: inflight),
              cases: [
                BenchCase(label: "SessionFetcher, URLSession engine", kind: small("fetcher", inflight)),
                .libcurl("SessionFetcher, libcurl engine", small("fetcher", inflight)),
                .libcurl("FetcherService (16 per host), libcurl engine", small("service", inflight)),
                BenchCase(label: "AsyncHTTPClient", kind: small("ahc", inflight)),
                BenchCase(label: "curl -K", kind: .curlSmall(parallel: inflight > 1)),
              ].map { $0.over(via) },
              ratios: [
                (
                  "ratio libcurl engine ÷ URLSession engine", "SessionFetcher, libcurl engine",
                  "SessionFetcher, URLSession engine"
                ),
                (
                  "ratio libcurl engine ÷ AsyncHTTPClient", "SessionFetcher, libcurl engine",
                  "AsyncHTTPClient"
                ),
                ("ratio libcurl engine ÷ curl", "SessionFetcher, libcurl engine", "curl -K"),
              ]))
        }
      }
      result.append(
        tlsTransfer(
          "upload (PUT) over TLS, HTTP/1.1", fetcher: ("SessionFetcher bodyFileURL", "fetcher-upload-file"),
          ahc: ("AsyncHTTPClient, file stream", "ahc-upload-file"), curl: ("curl -T", .curlUpload)))
      result.append(
        tlsTransfer(
          "download to file over TLS, HTTP/1.1",
          fetcher: ("SessionFetcher destinationFileURL", "fetcher-download"),
          ahc: ("AsyncHTTPClient FileDownloadDelegate", "ahc-download"), curl: ("curl -o", .curlDownload)))
    }
    if options.only.contains("mime") {
      result.append(
        Workload(
          name: "MIMEDocument, \(options.mimeSize >> 20) MiB", unit: .mime,
          cases: [
            BenchCase(
              label: "generateInputStream(), read to end", kind: .child(["mime", "generate-stream"])),
            BenchCase(label: "generateData()", kind: .child(["mime", "generate-data"])),
            BenchCase(label: "parts(boundary:data:)", kind: .child(["mime", "parse"])),
            BenchCase(
              label: "parts(boundary:data:sharingInput: true)", kind: .child(["mime", "parse-shared"])),
            BenchCase(
              label: "parse(boundary:data:sharingInput: true), RFC 2046",
              kind: .child(["mime", "parse-strict"])),
            BenchCase(
              label: "parse(…), one part of `X: y` header lines only",
              kind: .child(["mime", "parse-headers"])),
            BenchCase(
              label: "parse(…), boundary `b`, a body of `CRLF--bx` candidates",
              kind: .child(["mime", "parse-delimiters"])),
          ]))
    }
    return result
  }

  /// A 1 GiB transfer over TLS (HTTP/1.1): the fetcher on each engine, AsyncHTTPClient and curl, each
  /// given as (label, bulk child client or curl kind), with the libcurl engine's three ratio rows.
  private func tlsTransfer(
    _ name: String, fetcher: (label: String, client: String), ahc: (label: String, client: String),
    curl: (label: String, kind: BenchCase.Kind)
  ) -> Workload {
    let urlSession = "\(fetcher.label), URLSession engine"
    let libcurl = "\(fetcher.label), libcurl engine"
    return Workload(
      name: name, unit: .transfer,
      cases: [
        BenchCase(label: urlSession, kind: .child(["bulk", fetcher.client])),
        .libcurl(libcurl, .child(["bulk", fetcher.client])),
        BenchCase(label: ahc.label, kind: .child(["bulk", ahc.client])),
        BenchCase(label: curl.label, kind: curl.kind),
      ].map { $0.over("tls") },
      ratios: [
        ("ratio libcurl engine ÷ URLSession engine", libcurl, urlSession),
        ("ratio libcurl engine ÷ AsyncHTTPClient", libcurl, ahc.label),
        ("ratio libcurl engine ÷ curl", libcurl, curl.label),
      ])
  }

  // MARK: - One run

  private func measure(_ benchCase: BenchCase, workload: Workload, options: Options) -> RunRecord {
    var options = options
    options.via = benchCase.via
    let outFile = options.work.appendingPathComponent("out.bin")
    let uploaded = options.work.appendingPathComponent("www/upload/x.bin")
    if case .transfer = workload.unit {
      try? FileManager.default.removeItem(at: outFile)
      try? FileManager.default.removeItem(at: uploaded)
      _ = try? Self.execute(["/bin/sync"], stdout: nil, stderr: nil)
    }
    // The logging rows' run folders stay until the end (run.sh removes them): ext4 makes every file
    // created in a block group where many inodes were freed in the last ~30 s scan past them
    // (`recently_deleted`), so removing one run's thousands of log files just before the next run
    // charged that run several hundred microseconds of kernel time per file it created.
    let acceptedBefore = acceptedConnections()

    var command: [String]
    let bigURL = options.viaBase.appendingPathComponent("big.bin").absoluteString
    let uploadURL = options.viaBase.appendingPathComponent("upload/x.bin").absoluteString
    let cacert = options.via != "plain" ? ["--cacert", options.caFile?.path ?? ""] : []
    switch benchCase.kind {
    case .child(let arguments):
      // The case's own arguments last: they override the run's (`--count` of the scaling rows).
      command = [executable, "child"] + options.childArguments + arguments + ["--via", options.via]
    case .curlSmall(let parallel):
      let config = scratch.appendingPathComponent("curl-\(options.via)-\(options.count).cfg")
      writeCurlConfig(config, count: options.count, base: options.viaBase)
      command =
        ["curl", "-s"] + cacert + (parallel ? ["--parallel", "--parallel-max", "16"] : []) + [
          "-K", config.path,
        ]
    case .curlDownload:
      command =
        ["curl", "-s"] + cacert + [
          "-o", outFile.path, "-w", "%{http_code} %{size_download} %{time_total}\n", bigURL,
        ]
    case .curlUpload:
      command =
        ["curl", "-s"] + cacert + [
          "-T", options.work.appendingPathComponent("www/big.bin").path, "-o", "/dev/null",
          "-w", "%{http_code} %{size_upload} %{time_total}\n", uploadURL,
        ]
    }
    if !benchCase.environment.isEmpty { command = ["/usr/bin/env"] + benchCase.environment + command }
    if benchCase.trustsTestCAThroughMountNamespace {
      guard getuid() == 0, let bundle = options.caBundle,
        FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
      else {
        var record = RunRecord()
        record.failure = "not measured: needs root, unshare(1) and --ca-bundle for a private mount namespace"
        return record
      }
      command =
        [
          "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
          "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh", bundle.path, Self.systemBundle,
        ] + command
    }
    if let timeCommand { command = [timeCommand, "-v"] + command }
    command = ["/usr/bin/timeout", "300"] + command

    var record = RunRecord()
    let stdoutURL = scratch.appendingPathComponent("stdout.txt")
    let stderrURL = scratch.appendingPathComponent("stderr.txt")
    let start = Date()
    let status: Int32
    do {
      status = try Self.execute(command, stdout: stdoutURL, stderr: stderrURL)
    } catch {
      record.failure = "could not start: \(error)"
      return record
    }
    record.wallSeconds = Date().timeIntervalSince(start)
    let output = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
    let errors = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
    parseTimeReport(errors, into: &record)
    if let before = acceptedBefore, let after = acceptedConnections() {
      // The second status request opens a connection of its own.
      record.connections = after - before - 1
    }

    switch benchCase.kind {
    case .child:
      guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") }) else {
        record.failure = "exit \(status): " + String(errors.suffix(400))
        return record
      }
      for pair in line.split(separator: " ").dropFirst() {
        let parts = pair.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { record.fields[String(parts[0])] = String(parts[1]) }
      }
      if record.peakRSSKiB == 0 { record.peakRSSKiB = Int(record.fields["vmhwm_kib"] ?? "") ?? 0 }
    case .curlSmall:
      readCurlSmall(output, status: status, into: &record, options: options)
    case .curlDownload, .curlUpload:
      let parts = output.split(separator: "\n").last?.split(separator: " ") ?? []
      let code = parts.count == 3 ? Int(parts[0]) ?? -1 : -1
      let bytes = parts.count == 3 ? Double(parts[1]) ?? 0 : 0
      let seconds = parts.count == 3 ? Double(parts[2]) ?? 0 : 0
      let ok = status == 0 && (200...299).contains(code) && Int64(bytes) >= options.bigSize && seconds > 0
      record.fields = [
        "ok": ok ? "1" : "0", "errors": ok ? "0" : "1", "mbps": "\(ok ? bytes / seconds / 1e6 : 0)",
        "cpu_s": "\(record.processCPUSeconds)",
      ]
      if !ok { record.fields["first_error"] = "exit=\(status)_code=\(code)_bytes=\(Int(bytes))" }
    }
    if let firstError = record.fields["first_error"], firstError != "-" { record.failure = firstError }
    if status != 0, record.failure == nil { record.failure = "exit \(status)" }
    return record
  }

  private func readCurlSmall(_ output: String, status: Int32, into record: inout RunRecord, options: Options)
  {
    var latencies: [Double] = []
    var failures = 0
    var firstFailure: String?
    for line in output.split(separator: "\n") {
      let parts = line.split(separator: " ")
      guard parts.count == 3 else { continue }
      if parts[0] == "200", Int(parts[1]) == options.smallLength, let seconds = Double(parts[2]) {
        latencies.append(seconds * 1e6)
      } else {
        failures += 1
        if firstFailure == nil { firstFailure = String(line) }
      }
    }
    failures += options.count - latencies.count - failures
    latencies.sort()
    // curl's rate includes its start-up and first connection: the process's wall time.
    record.fields = [
      "ok": "\(latencies.count)", "errors": "\(failures)",
      "first_error": failures > 0 ? compact(firstFailure ?? "missing_replies_exit_\(status)") : "-",
      "rps": "\(Double(latencies.count) / max(record.wallSeconds, 1e-9))",
      "p50_us": "\(Measure.percentile(latencies, 50))", "p99_us": "\(Measure.percentile(latencies, 99))",
      "cpu_us_per_op": "\(record.processCPUSeconds / Double(max(options.count, 1)) * 1e6)",
    ]
  }

  /// Debian's CA bundle, the file libcurl (and so FoundationNetworking) trusts by default.
  static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

  private func writeCurlConfig(_ url: URL, count: Int, base: URL) {
    guard !FileManager.default.fileExists(atPath: url.path) else { return }
    let smallURL = base.appendingPathComponent("small.txt").absoluteString
    var text = "write-out = \"%{http_code} %{size_download} %{time_total}\\n\"\n"
    let entry = "url = \"\(smallURL)\"\noutput = \"/dev/null\"\n"
    text.reserveCapacity(text.utf8.count + entry.utf8.count * count)
    for _ in 0..<count { text += entry }
    try? text.write(to: url, atomically: true, encoding: .utf8)
  }

  private func parseTimeReport(_ text: String, into record: inout RunRecord) {
    var user = 0.0
    var system = 0.0
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: ":", maxSplits: 1)
      guard parts.count == 2 else { continue }
      let key = parts[0].trimmingCharacters(in: .whitespaces)
      let value = parts[1].trimmingCharacters(in: .whitespaces)
      switch key {
      case "Maximum resident set size (kbytes)": record.peakRSSKiB = Int(value) ?? 0
      case "User time (seconds)": user = Double(value) ?? 0
      case "System time (seconds)": system = Double(value) ?? 0
      case "Voluntary context switches", "Involuntary context switches":
        record.contextSwitches += Int(value) ?? 0
      default: break
      }
    }
    record.processCPUSeconds = user + system
  }

  /// nginx's count of accepted connections (`stub_status`), or nil when it is unavailable.
  private func acceptedConnections() -> Int? {
    let url = scratch.appendingPathComponent("status.txt")
    let statusURL = options.base.appendingPathComponent("nginx_status").absoluteString
    guard (try? Self.execute(["curl", "-s", "-m", "5", statusURL], stdout: url, stderr: nil)) == 0,
      let text = try? String(contentsOf: url, encoding: .utf8)
    else { return nil }
    let lines = text.split(separator: "\n")
    guard lines.count >= 3 else { return nil }
    return Int(lines[2].split(separator: " ").first ?? "")
  }

  // MARK: - Processes and the machine

  /// Runs `command` (the first element is looked up on PATH unless absolute) and waits for it.
  @discardableResult
  static func execute(_ command: [String], stdout: URL?, stderr: URL?) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = command
    func handle(_ url: URL?) -> FileHandle? {
      guard let url else { return nil }
      _ = FileManager.default.createFile(atPath: url.path, contents: nil)
      return FileHandle(forWritingAtPath: url.path)
    }
    let out = handle(stdout)
    let err = handle(stderr)
    process.standardOutput = out ?? FileHandle.nullDevice
    process.standardError = err ?? FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try? out?.close()
    try? err?.close()
    return process.terminationStatus
  }

  /// The 1, 5 and 15-minute load averages.
  static func loadAverage() -> [Double] {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).compactMap { Double($0) }
  }

  private func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
  }
}
