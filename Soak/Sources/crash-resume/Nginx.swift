import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// An nginx of this program's own, serving `root` on 127.0.0.1 (static files with a strong ETag
/// and byte ranges), in the foreground as a child process, logging each request's status and
/// Range header.
final class Nginx {
  let port: UInt16
  let prefix: URL
  private let process: ChildProcess

  /// Starts nginx with a prefix folder under `folder`; fails when nginx is missing or does not
  /// listen within 5 seconds.
  init(root: URL, folder: URL, port: UInt16) throws {
    let candidates: [String] = ["/usr/sbin/nginx", "/usr/bin/nginx"]
    guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) })
    else {
      throw CrashResumeError("nginx is not installed (apt-get install nginx-light)")
    }
    prefix = folder.appendingPathComponent("nginx")
    self.port = port
    try FileManager.default.createDirectory(
      at: prefix.appendingPathComponent("logs"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      at: prefix.appendingPathComponent("tmp"), withIntermediateDirectories: true)
    let config = """
      worker_processes 1;
      daemon off;
      pid nginx.pid;
      error_log logs/error.log warn;
      events { worker_connections 64; }
      http {
          default_type application/octet-stream;
          log_format ranges '$status "$http_range" $body_bytes_sent';
          access_log logs/access.log ranges;
          client_body_temp_path tmp/client_body;
          proxy_temp_path tmp/proxy;
          fastcgi_temp_path tmp/fastcgi;
          uwsgi_temp_path tmp/uwsgi;
          scgi_temp_path tmp/scgi;
          sendfile on;
          etag on;
          server {
              listen 127.0.0.1:\(port);
              root \(root.path);
              location / { }
          }
      }

      """
    try config.write(to: prefix.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
    process = try ChildProcess(
      executable: executable,
      arguments: ["-p", prefix.path + "/", "-c", "nginx.conf", "-e", "logs/error.log"])
    for _ in 0..<500 {
      if Self.answers(port: port) { return }
      if let exit = process.wait(timeout: 0) {
        throw CrashResumeError("nginx ended at start (\(exit)); see \(prefix.path)/logs/error.log")
      }
      usleep(10_000)
    }
    stop()
    throw CrashResumeError("nginx did not listen on 127.0.0.1:\(port)")
  }

  /// The access log's lines: `STATUS "RANGE" BYTES`.
  var accessLog: [String] {
    let text =
      (try? String(contentsOf: prefix.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
  }

  /// Stops nginx and its worker (SIGTERM: a SIGKILL would leave the worker running).
  func stop() {
    process.send(SIGTERM)
    _ = process.wait(timeout: 10)
  }

  /// Whether something accepts TCP connections on 127.0.0.1:`port`.
  static func answers(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}
