import Foundation
import SoakSupport

/// A hand-written SVG line chart of RSS over time (no plotting dependency).
enum RSSPlot {
  struct Sample {
    var seconds: Double
    var bytes: Int64
  }

  static func svg(samples: [Sample], title: String) -> String {
    let width = 800.0
    let height = 360.0
    let left = 70.0
    let right = 20.0
    let top = 40.0
    let bottom = 50.0
    let plotWidth = width - left - right
    let plotHeight = height - top - bottom
    let maxSeconds = max(samples.map(\.seconds).max() ?? 1, 1)
    let maxMB = niceCeiling(max(Double(samples.map(\.bytes).max() ?? 0) / 1_048_576, 1))
    func x(_ seconds: Double) -> Double { left + seconds / maxSeconds * plotWidth }
    func y(_ megabytes: Double) -> Double { top + plotHeight - megabytes / maxMB * plotHeight }
    var svg = """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
      viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
      <rect width="100%" height="100%" fill="white"/>
      <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="14">\(escape(title))</text>

      """
    for step in 0...4 {
      let megabytes = maxMB * Double(step) / 4
      let lineY = y(megabytes)
      svg += String(
        format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, lineY,
        left + plotWidth, lineY)
      svg += String(
        format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f MB</text>\n", left - 6, lineY + 4,
        megabytes)
    }
    for step in 0...5 {
      let seconds = maxSeconds * Double(step) / 5
      svg += String(
        format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x(seconds), top + plotHeight + 18)
      svg += "\(label(seconds))</text>\n"
    }
    svg += String(
      format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since start</text>\n",
      left + plotWidth / 2, height - 8)
    svg += String(
      format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
      left, top, plotWidth, plotHeight)
    let points = samples.map { String(format: "%.1f,%.1f", x($0.seconds), y(Double($0.bytes) / 1_048_576)) }
    svg +=
      "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"/>\n"
    svg += "</svg>\n"
    return svg
  }

  private static func niceCeiling(_ value: Double) -> Double {
    let magnitude = pow(10, floor(log10(value)))
    for factor in [1.0, 2.0, 2.5, 5.0, 10.0] where factor * magnitude >= value { return factor * magnitude }
    return 10 * magnitude
  }

  private static func label(_ seconds: Double) -> String {
    seconds >= 120 ? String(format: "%.0f min", seconds / 60) : String(format: "%.0f s", seconds)
  }

  private static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
  }
}
