import Foundation

/// The Markdown table of a driver run: per client the median and, in brackets, the min–max over the
/// rounds; ratio rows take the ratio inside each round (the clients of a round ran back to back),
/// then the median and min–max of those.
struct Report {
  let options: Options
  let sections: [(Workload, [String: [RunRecord]])]
  let loadAtStart: [Double]
  let loadAtEnd: [Double]
  let loadsBeforeRuns: [Double]
  let elapsed: TimeInterval

  func markdown() -> String {
    var lines: [String] = []
    let rounds = options.rounds
    lines.append(
      "Load average (1/5/15 min) at start: \(loadText(loadAtStart)); at end: \(loadText(loadAtEnd)); "
        + "1-min load before each run: \(rangeText(loadsBeforeRuns, digits: 1)). "
        + "\(rounds) rounds, \(options.count) small GETs per run, transfers of "
        + "\(grouped(Double(options.bigSize))) bytes; \(Int(elapsed)) s in all.")
    lines.append("")
    lines.append(
      "| Workload | Client | Throughput | Latency p50 / p99 (µs) | CPU per op | Peak RSS (MiB) "
        + "| Context switches per op | TCP connections |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for (workload, records) in sections {
      if case .memory = workload.unit { continue }
      for benchCase in workload.cases {
        lines.append(row(workload, benchCase.label, records[benchCase.label] ?? []))
      }
      for (label, numerator, denominator) in workload.ratios {
        lines.append(ratioRow(workload, label, records[numerator] ?? [], records[denominator] ?? []))
      }
    }
    for (workload, records) in sections {
      guard case .memory = workload.unit else { continue }
      lines.append("")
      lines.append(contentsOf: memoryTable(workload, records))
    }
    return lines.joined(separator: "\n")
  }

  /// The `child memory` runs: resident bytes after `malloc_trim(0)`, against the run's baseline.
  private func memoryTable(_ workload: Workload, _ records: [String: [RunRecord]]) -> [String] {
    var lines = [
      "Memory held (`child memory`; resident bytes after `malloc_trim(0)`, against the same process "
        + "before; median and min–max over the rounds):",
      "",
      "| Client | per idle service (KiB) | after 10,000 fetchers made and dropped (MiB) "
        + "| per fetch in flight (KiB) | after those fetches stopped (MiB) "
        + "| each later round of them adds (MiB) | Peak RSS (MiB) |",
      "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for benchCase in workload.cases {
      let runs = records[benchCase.label] ?? []
      let succeeded = runs.filter { $0.failure == nil }
      func cell(_ key: String, _ divisor: Double, digits: Int) -> String {
        summary(succeeded.compactMap { $0.number(key).map { $0 / divisor } }, digits: digits)
      }
      var label = benchCase.label
      if succeeded.count < runs.count {
        label += " ⚠ \(runs.count - succeeded.count) failed: \(runs.compactMap(\.failure).first ?? "")"
      }
      let cells = [
        label, cell("idle_service_bytes", 1024, digits: 1),
        cell("dropped_fetchers_bytes", 1_048_576, digits: 2),
        cell("inflight_bytes", 1024, digits: 1), cell("after_stop_bytes", 1_048_576, digits: 2),
        cell("repeat_growth_bytes", 1_048_576, digits: 2),
        summary(succeeded.map { Double($0.peakRSSKiB) / 1024 }, digits: 1),
      ]
      lines.append("| " + cells.joined(separator: " | ") + " |")
    }
    return lines
  }

  private func row(_ workload: Workload, _ label: String, _ runs: [RunRecord]) -> String {
    let succeeded = runs.filter { $0.failure == nil }
    let failed = runs.count - succeeded.count
    var cells = [workload.name, label]
    switch workload.unit {
    case .requests(let inflight):
      var throughput = summary(succeeded.compactMap { $0.number("rps") }, unit: " req/s", digits: 0)
      let errors = runs.compactMap { $0.number("errors") }.reduce(0, +)
      if failed > 0 || errors > 0 {
        throughput += " ⚠ \(failed) failed runs, \(Int(errors)) failed requests"
      }
      cells.append(throughput)
      cells.append(
        summary(succeeded.compactMap { $0.number("p50_us") }, digits: 0) + " / "
          + summary(succeeded.compactMap { $0.number("p99_us") }, digits: 0))
      cells.append(summary(succeeded.compactMap { $0.number("cpu_us_per_op") }, unit: " µs", digits: 0))
      cells.append(summary(succeeded.map { Double($0.peakRSSKiB) / 1024 }, digits: 1))
      // Child runs make `inflight` warm-up requests besides the timed ones.
      let isCurl = label.hasPrefix("curl")
      func requests(_ run: RunRecord) -> Double {
        guard !isCurl, let ok = run.number("ok") else { return Double(options.count) }
        return ok + (run.number("errors") ?? 0) + Double(inflight)
      }
      cells.append(summary(succeeded.map { Double($0.contextSwitches) / requests($0) }, digits: 1))
      cells.append(summary(succeeded.compactMap { $0.connections.map(Double.init) }, digits: 0))
    case .transfer, .mime, .memory:
      var throughput = summary(succeeded.compactMap { $0.number("mbps") }, unit: " MB/s", digits: 0)
      if failed > 0 {
        throughput += " ⚠ \(failed) of \(runs.count) runs failed: \(runs.compactMap(\.failure).first ?? "")"
      }
      cells.append(throughput)
      cells.append("—")
      cells.append(summary(succeeded.compactMap { $0.number("cpu_s") }, unit: " s", digits: 2))
      cells.append(summary(succeeded.map { Double($0.peakRSSKiB) / 1024 }, digits: 1))
      cells.append(summary(succeeded.map { Double($0.contextSwitches) }, digits: 0))
      if case .transfer = workload.unit {
        cells.append(summary(succeeded.compactMap { $0.connections.map(Double.init) }, digits: 0))
      } else {
        cells.append("—")
      }
    }
    return "| " + cells.joined(separator: " | ") + " |"
  }

  /// Per-round ratios of throughput and CPU per operation.
  private func ratioRow(
    _ workload: Workload, _ label: String, _ numerator: [RunRecord], _ denominator: [RunRecord]
  ) -> String {
    let throughputKey: String
    let cpuKey: String
    switch workload.unit {
    case .requests:
      throughputKey = "rps"
      cpuKey = "cpu_us_per_op"
    case .transfer, .mime, .memory:
      throughputKey = "mbps"
      cpuKey = "cpu_s"
    }
    func ratios(_ key: String) -> [Double] {
      zip(numerator, denominator).compactMap { top, bottom in
        guard top.failure == nil, bottom.failure == nil, let a = top.number(key), let b = bottom.number(key),
          b > 0
        else { return nil }
        return a / b
      }
    }
    let p50 = ratios("p50_us")
    let cells = [
      workload.name, "**\(label)**", "**" + summary(ratios(throughputKey), unit: "×", digits: 2) + "**",
      p50.isEmpty ? "—" : summary(p50, unit: "× (p50)", digits: 2),
      summary(ratios(cpuKey), unit: "×", digits: 2), "", "", "",
    ]
    return "| " + cells.joined(separator: " | ") + " |"
  }

  // MARK: - Formatting

  /// "median (min–max)", or "—" without values.
  private func summary(_ values: [Double], unit: String = "", digits: Int) -> String {
    guard !values.isEmpty else { return "—" }
    let sorted = values.sorted()
    let median =
      sorted.count % 2 == 1
      ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    let text = format(median, digits) + unit
    guard sorted.count > 1 else { return text }
    return text + " (" + format(sorted[0], digits) + "–" + format(sorted[sorted.count - 1], digits) + ")"
  }

  private func rangeText(_ values: [Double], digits: Int) -> String {
    guard let low = values.min(), let high = values.max() else { return "—" }
    return format(low, digits) + "–" + format(high, digits)
  }

  private func loadText(_ load: [Double]) -> String {
    load.map { format($0, 2) }.joined(separator: " / ")
  }

  /// `value` with `digits` decimals; whole numbers of 1,000 and more with thousands separators.
  private func format(_ value: Double, _ digits: Int) -> String {
    if digits == 0 { return grouped(value) }
    return String(format: "%.\(digits)f", value)
  }

  private func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var result = ""
    for (index, character) in digits.reversed().enumerated() {
      if index > 0, index % 3 == 0, character != "-" { result.append(",") }
      result.append(character)
    }
    return String(result.reversed())
  }
}
