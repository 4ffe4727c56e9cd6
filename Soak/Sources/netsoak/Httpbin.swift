import Foundation
import SoakSupport

/// httpbin (PyPI) under gunicorn inside the soak's namespace, beside nginx: JSON echoes, redirects,
/// gzip, byte ranges and slow "drip" bodies from a real third-party server, across the same faulty
/// link. `gunicorn` is the path of a gunicorn whose Python has httpbin installed (`.ci/netsoak.sh`
/// makes one in a virtual environment).
final class HttpbinServer: @unchecked Sendable {
  // `@unchecked Sendable`: the settings are constants; `pid` is guarded.
  let gunicorn: String
  let lab: NetworkLab
  let port = 8081
  let log: URL
  private let pid = Guarded<pid_t>(0)

  init(gunicorn: String, lab: NetworkLab, log: URL) {
    self.gunicorn = gunicorn
    self.lab = lab
    self.log = log
  }

  /// Starts gunicorn (`ip netns exec` execs it: the process started is gunicorn's master) and waits
  /// up to 20 s for it to accept connections.
  func start() throws {
    let arguments = [
      "ip", "netns", "exec", lab.namespace, gunicorn, "-k", "gthread", "--threads", "16", "-w", "1",
      "--no-control-socket", "-b", "\(lab.serverAddress):\(port)", "--log-level", "warning", "httpbin:app",
    ]
    guard let started = Shell.launch(arguments, output: log) else {
      throw SoakError.setup("could not start \(gunicorn)")
    }
    pid.with { $0 = started }
    for _ in 0..<200 {
      if TCPProbe.connects(host: lab.serverAddress, port: port) { return }
      var status: Int32 = 0
      if waitpid(started, &status, WNOHANG) == started {
        pid.with { $0 = 0 }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw SoakError.setup("httpbin (gunicorn) exited at start: \(text.suffix(800))")
      }
      Thread.sleep(forTimeInterval: 0.1)
    }
    stop()
    throw SoakError.setup("httpbin does not answer on \(lab.serverAddress):\(port)")
  }

  /// gunicorn's quick shutdown (SIGINT), SIGKILL after 5 s; its worker goes with the namespace.
  func stop() {
    let running = pid.with { pid -> pid_t in
      defer { pid = 0 }
      return pid
    }
    guard running > 0 else { return }
    kill(running, SIGINT)
    var status: Int32 = 0
    for _ in 0..<100 {
      if waitpid(running, &status, WNOHANG) == running { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    kill(running, SIGKILL)
    while waitpid(running, &status, 0) < 0 && errno == EINTR {}
  }
}
