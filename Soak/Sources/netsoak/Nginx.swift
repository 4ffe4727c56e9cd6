import Foundation

/// nginx inside the soak's namespace: static files made by the soak (small and 1–64 MiB, their
/// sha256 known), PUT uploads to disk (dav), a POST echo and a long chunked event stream (the echo
/// module that Debian's nginx-light loads).
final class NginxServer: @unchecked Sendable {
  // `@unchecked Sendable`: every property is set in `init` and never changed.
  let root: URL
  let lab: NetworkLab
  let port = 8080
  let eventCount: Int
  let eventInterval: Double

  init(root: URL, lab: NetworkLab, eventCount: Int, eventInterval: Double) {
    self.root = root
    self.lab = lab
    self.eventCount = eventCount
    self.eventInterval = eventInterval
  }

  var www: URL { root.appendingPathComponent("www") }
  var uploads: URL { www.appendingPathComponent("upload") }

  /// The body of `/events`: what the echo directives below write.
  var expectedEvents: Data {
    Data((0..<eventCount).map { "data: event \($0) of \(eventCount)\n\n" }.joined().utf8)
  }

  func writeConfiguration() throws {
    for folder in ["logs", "tmp", "www/upload"] {
      try FileManager.default.createDirectory(
        at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
    }
    let echoModule = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
    let hasEcho = FileManager.default.fileExists(atPath: echoModule)
    guard hasEcho else { throw SoakError.setup("nginx's echo module is missing (\(echoModule))") }
    var events = ""
    for index in 0..<eventCount {
      events += "      echo \"data: event \(index) of \(eventCount)\\n\";\n      echo_flush;\n"
      if index < eventCount - 1 { events += "      echo_sleep \(eventInterval);\n" }
    }
    let configuration = """
      load_module \(echoModule);
      user root root;
      worker_processes 1;
      worker_shutdown_timeout 3s;
      pid nginx.pid;
      error_log logs/error.log warn;
      events { worker_connections 1024; }
      http {
        default_type application/octet-stream;
        access_log off;
        client_body_temp_path tmp/client_body;
        proxy_temp_path tmp/proxy;
        fastcgi_temp_path tmp/fastcgi;
        uwsgi_temp_path tmp/uwsgi;
        scgi_temp_path tmp/scgi;
        sendfile on;
        keepalive_timeout 65;
        keepalive_requests 100000;
        server {
          listen \(lab.serverAddress):\(port) reuseport;
          root www;
          location / { }
          location /upload/ {
            client_max_body_size 0;
            client_body_buffer_size 1m;
            dav_methods PUT DELETE;
            create_full_put_path on;
          }
          location = /echo {
            client_max_body_size 1m;
            client_body_buffer_size 1m;
            echo_read_request_body;
            echo_request_body;
          }
          location = /events {
            default_type text/event-stream;
      \(events)    }
        }
      }

      """
    try configuration.write(to: root.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
  }

  private var base: [String] {
    ["nginx", "-p", root.path + "/", "-c", "nginx.conf", "-e", "logs/error.log"]
  }

  func start() throws {
    guard Shell.spawn(["ip", "netns", "exec", lab.namespace] + base) == 0 else {
      let log =
        (try? String(contentsOf: root.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
      throw SoakError.setup("nginx did not start: \(log.suffix(800))")
    }
    try waitUntilListening()
  }

  func waitUntilListening() throws {
    for _ in 0..<100 {
      if TCPProbe.connects(host: lab.serverAddress, port: port) { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    throw SoakError.setup("nginx does not answer on \(lab.serverAddress):\(port)")
  }

  /// New workers with the same configuration; the old ones finish (or are cut after 3 s).
  func reload() {
    Shell.spawn(base + ["-s", "reload"])
  }

  /// Fast shutdown (open connections are closed), down for `downtime`, then started again.
  func restart(downtime: TimeInterval) {
    stop()
    Thread.sleep(forTimeInterval: downtime)
    try? start()
  }

  func stop() {
    let pidFile = root.appendingPathComponent("nginx.pid")
    guard let text = try? String(contentsOf: pidFile, encoding: .utf8),
      let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    else { return }
    kill(pid, SIGTERM)
    for _ in 0..<100 where kill(pid, 0) == 0 { Thread.sleep(forTimeInterval: 0.02) }
    if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
  }
}

/// Whether something accepts TCP connections at an address (a 1 s connect attempt).
enum TCPProbe {
  static func connects(host: String, port: Int) -> Bool {
    let fd = Sockets.connect(host: host, port: UInt16(port), timeout: 1)
    if fd >= 0 { close(fd) }
    return fd >= 0
  }
}
