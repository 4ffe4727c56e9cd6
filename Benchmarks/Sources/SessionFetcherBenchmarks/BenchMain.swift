import Foundation

/// `fetcher-bench all …` drives every workload and prints the table; `fetcher-bench child …` is one
/// measured run in its own process, started by the driver.
@main
enum BenchMain {
  static func main() {
    var arguments = Array(CommandLine.arguments.dropFirst())
    guard !arguments.isEmpty else {
      FileHandle.standardError.write(Data((Options.usage + "\n").utf8))
      exit(64)
    }
    let command = arguments.removeFirst()
    do {
      let options = try Options(arguments: arguments)
      switch (command, options.positional.first, options.positional.dropFirst().first) {
      case ("all", _, _):
        try Driver(options: options).run()
      case ("child", "small", let client?):
        try runSmallGet(client: client, options: options)
      case ("child", "start", let client?):
        try runStartCost(client: client, options: options)
      case ("child", "bulk", let client?):
        try runBulk(client: client, options: options)
      case ("child", "memory", let client?):
        try runMemory(client: client, options: options)
      case ("child", "stopped", let client?):
        try runStoppedFetches(client: client, options: options)
      case ("child", "mime", let workload?):
        try runMIME(client: workload, options: options)
      default:
        throw BenchmarkError(Options.usage)
      }
    } catch {
      FileHandle.standardError.write(Data("fetcher-bench: \(error)\n".utf8))
      exit(1)
    }
    exit(0)
  }
}
