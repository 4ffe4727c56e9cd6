import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

@Suite("Body files: never an extension a browser runs")
struct InertBodyFileTests {
  @Test(
    "the extension of each kind of body",
    arguments: [
      (BodyKind.text, "text/xml", "xml.txt"),
      (.text, "application/xhtml+xml", "html.txt"),
      (.text, "image/svg+xml", "svg.txt"),
      (.text, "text/html; charset=utf-8", "html.txt"),
      (.text, "application/javascript", "txt"),
      (.text, "text/xsl", "txt"),
      (.text, nil, "txt"),
      (.json, "application/json", "json"),
      (.form, "application/x-www-form-urlencoded", "txt"),
      (.binary, "image/png", "png"),
      (.binary, "text/html", "bin"),
      (.binary, nil, "bin"),
    ] as [(BodyKind, String?, String)])
  func fileExtension(_ kind: BodyKind, _ contentType: String?, _ expected: String) {
    let ext = kind.fileExtension(contentType: contentType)
    #expect(ext == expected)
    #expect(BodyKind.inertExtensions.contains(String(ext.split(separator: ".").last ?? "")))
  }

  @Test(
    "a name that is not inert gets .txt",
    arguments: [
      ("xml", "xml.txt"), ("svg", "svg.txt"), ("html", "html.txt"), ("htm", "htm.txt"),
      ("xhtml", "xhtml.txt"), ("js", "js.txt"), ("mjs", "mjs.txt"), ("html.txt", "html.txt"),
      ("json", "json"), ("png", "png"), ("bin", "bin"),
    ])
  func inertExtension(_ ext: String, _ expected: String) {
    #expect(BodyFileNames.inertExtension(ext) == expected)
  }

  @Test("SVG is text: shown and redacted as text, not kept as a binary image")
  func svgIsText() {
    let svg = Data("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>".utf8)
    #expect(BodyKind.classify(svg, contentType: "image/svg+xml") == .text)
    #expect(BodyKind.classify(Data([0x89, 0x50, 0x4E, 0x47]), contentType: "image/png") == .binary)
  }
}

extension LoggingFileTests {
  /// Extensions a browser renders as a document that can run scripts.
  static let activeExtensions: Set<String> = [
    "xml", "svg", "svgz", "xhtml", "xht", "html", "htm", "shtml", "js", "mjs", "xsl", "xslt", "mht",
  ]

  @Test("a body that could run in a browser is saved under a name no browser runs, and linked by it")
  func activeBodiesAreSavedInert() async throws {
    let script = "<script>window.pwned=1</script>"
    let padding = String(repeating: "x", count: 300)
    let xhtml =
      "<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><body>\(script)\(padding)</body></html>"
    // (content type, body, the file name's ending)
    let bodies: [(String, String, String)] = [
      ("text/xml", xhtml, "xml.txt"),
      ("application/xhtml+xml", xhtml, "html.txt"),
      (
        "image/svg+xml", "<svg xmlns=\"http://www.w3.org/2000/svg\">\(script)<desc>\(padding)</desc></svg>",
        "svg.txt"
      ),
      ("application/rss+xml", xhtml, "xml.txt"),
      ("text/html", "<html>\(script)\(padding)</html>", "html.txt"),
      ("application/javascript", "window.pwned = 1; // \(padding)", "txt"),
      ("text/xsl", "<xsl:stylesheet>\(script)\(padding)</xsl:stylesheet>", "txt"),
      ("application/octet-stream", "<html>\(script)\(padding)</html>", "bin"),
    ]
    for (index, body) in bodies.enumerated() {
      server.route("/active/\(index)") { _ in
        TestResponse(status: 200, headers: [("Content-Type", body.0)], body: Data(body.1.utf8))
      }
    }
    try await withLogging { folder in
      for index in bodies.indices {
        let fetcher = server.fetcher("/active/\(index)")
        let result = await fetcher.fetchResult()
        #expect(result.error == nil)
      }
      // An XML request body, echoed: its request file too.
      let upload = server.fetcher("/echo")
      upload.bodyData = Data(xhtml.utf8)
      upload.setRequestValue("application/xml", forHTTPHeaderField: "Content-Type")
      _ = await upload.fetchResult()

      SessionFetcher.flushLogs()
      let run = try #require(try runFolders(in: folder).first)
      let names = try FileManager.default.contentsOfDirectory(atPath: run.path)
      let allowed = BodyKind.inertExtensions.union(["har"])
      for name in names where name != LogFileWriter.indexFileName {
        let ext = (name as NSString).pathExtension
        #expect(allowed.contains(ext), "\(name)")
        #expect(!Self.activeExtensions.contains(ext), "\(name)")
      }

      // The HAR file and the page name the same files: those that exist, under the inert names.
      let harFiles = fileNames(in: try harEntries())
      #expect(harFiles == fileNames(in: try pageEntries()))
      let expected =
        bodies.indices.map { "fetch_\($0 + 1)_response.\(bodies[$0].2)" }
        + ["fetch_\(bodies.count + 1)_request.xml.txt", "fetch_\(bodies.count + 1)_response.xml.txt"]
      #expect(harFiles == expected)
      for (index, file) in harFiles.enumerated() {
        #expect(names.contains(file), "\(file) not in the run folder")
        // The text log names the same file.
        let number = min(index + 1, bodies.count + 1)
        #expect(try runFile("fetch_\(number).txt").contains("saved as \(file)"), "\(file)")
      }
      // The file holds the body as sent (text, not escaped): opening it shows the markup.
      let first = try Data(contentsOf: run.appendingPathComponent(expected[0]))
      #expect(String(decoding: first, as: UTF8.self) == xhtml)
    }
  }
}
