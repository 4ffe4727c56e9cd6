import Foundation

/// The run's `index.html`: a self-contained network panel (inline style and script, no network,
/// works from `file://`), followed by the run's HAR entries as they are logged.
///
/// The page is written once when the run begins ( ``head(title:)``); each logged fetch then appends
/// one `<script type="application/json" class="har-entries">` element holding the same HAR entries
/// that `log.har` gets (``dataElement(_:)``), so one format feeds both the page and browser tools, and
/// logging a fetch appends to the file instead of rewriting it. The script reads every such element
/// when the page opens.
enum ViewerPage {
  /// What the page says when scripts are off: where the same data is.
  static let noScript =
    "This page needs JavaScript to show the run. The same data is in log.har (open it in a browser's "
    + "developer tools) and in the fetch_N.txt text logs beside this file."

  /// The start of the page, up to where the data elements follow.
  static func head(processName: String, runName: String) -> String {
    let name = HTMLLogFormatter.escape(processName)
    let run = HTMLLogFormatter.escape(runName)
    let title = "\(name) HTTP log \(run)"
    return """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy)">
      <meta name="generator" content="SessionFetcher HTTPLogging">
      <title>\(title)</title>
      <style>
      \(style)
      </style>
      <script>
      \(script)
      </script>
      </head><body>
      <div id="app">
      <div class="toolbar">
      <h1><span class="dot"></span>\(name)<small>\(run)</small></h1>
      <input id="q" type="search" placeholder="Filter: URL, comment, header" aria-label="Filter" spellcheck="false">
      <div class="seg" id="statusFilter" role="group" aria-label="Status"><button data-s="all" class="on">All</button>\
      <button data-s="2">2xx</button><button data-s="3">3xx</button><button data-s="4">4xx</button>\
      <button data-s="5">5xx</button><button data-s="f">Failed</button></div>
      <select id="host" aria-label="Host"><option value="">All hosts</option></select>
      </div>
      <div class="main">
      <div class="list">
      <div id="scroller" tabindex="0">
      <div class="thead grid"><div class="c-num">#</div><div class="c-name">Name</div><div class="c-method">Method</div>\
      <div class="c-status">Status</div><div class="c-host">Host</div><div class="c-size">Size</div>\
      <div class="c-time">Time</div><div class="c-wf" id="wfhead"></div></div>
      <div id="body"><div id="rows"></div></div>
      <div class="empty" id="empty" hidden></div>
      </div>
      <div class="statusbar"><div class="footer" id="footer"></div>
      <div class="legend"><span><i class="ph-throttle" style="position:static;display:inline-block"></i>throttle</span>\
      <span><i style="background:var(--dns)"></i>DNS</span><span><i style="background:var(--connect)"></i>connect</span>\
      <span><i style="background:var(--tls)"></i>TLS</span><span><i style="background:var(--dim)"></i>sending</span>\
      <span><i style="background:var(--w2)"></i>waiting</span>\
      <span><i style="background:var(--c2)"></i>download</span>\
      <span><i style="border-top:2px dashed var(--retry);height:0"></i>retry delay</span></div>
      </div>
      </div>
      <div id="detail" hidden>
      <div class="d-head"><div class="d-title"><b id="d-name"></b><div class="d-url" id="d-url"></div></div>\
      <button class="close" id="close" title="Close (Esc)" aria-label="Close">×</button></div>
      <div class="chips" id="chips"></div>
      <div class="tabs" id="tabs"><button data-tab="headers">Headers</button><button data-tab="payload">Payload</button>\
      <button data-tab="response">Response</button><button data-tab="cookies">Cookies</button>\
      <button data-tab="timing">Timing</button></div>
      <div class="d-body" id="d-body"></div>
      </div>
      </div>
      </div>
      <noscript><p style="padding:20px">\(noScript)</p></noscript>

      """
  }

  /// No network at all (`default-src 'none'`, so no fetch, no form, no frame); the page's own inline
  /// style and script; images only from the run folder (response bodies saved as files).
  static let contentSecurityPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' file: data:; "
    + "form-action 'none'; base-uri 'none'"

  /// The class of the elements that hold the entries (the script reads `script.har-entries`).
  static let dataClass = "har-entries"

  /// One fetch's HAR entries as a data element of the page: a JSON array whose `<`, `>` and `&` are
  /// written `\u003c`, `\u003e` and `\u0026`, and U+2028 and U+2029 `\u2028` and `\u2029`. Those bytes
  /// occur only inside JSON strings, where the escapes mean the same characters, so the element's
  /// text is the same JSON, and no text from the wire can end the element (`</script>`) or open a
  /// comment (`<!--`) that would change how the rest of the page is read.
  static func dataElement(_ entries: [Data]) -> Data {
    var output = Data("<script type=\"application/json\" class=\"\(dataClass)\">[".utf8)
    for (index, entry) in entries.enumerated() {
      if index > 0 { output.append(UInt8(ascii: ",")) }
      appendEscaped(entry, to: &output)
    }
    output.append(contentsOf: "]</script>\n".utf8)
    return output
  }

  /// `json` with the bytes that matter to the HTML parser escaped (see ``dataElement(_:)``).
  static func appendEscaped(_ json: Data, to output: inout Data) {
    json.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
      let bytes = raw.bindMemory(to: UInt8.self)
      // Most entries hold none of these bytes: `memchr` tells at a fraction of a byte loop's cost.
      guard let base = raw.baseAddress,
        [UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), 0xE2].contains(where: {
          memchr(base, Int32($0), raw.count) != nil
        })
      else { return output.append(bytes) }
      // Copies the runs between the bytes to escape whole; most entries have none.
      var start = 0
      var index = 0
      while index < bytes.count {
        let byte = bytes[index]
        let escape: StaticString
        var width = 1
        switch byte {
        case UInt8(ascii: "<"): escape = #"\u003c"#
        case UInt8(ascii: ">"): escape = #"\u003e"#
        case UInt8(ascii: "&"): escape = #"\u0026"#
        case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && bytes[index + 2] == 0xA8:
          escape = #"\u2028"#  // LINE SEPARATOR
          width = 3
        case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && bytes[index + 2] == 0xA9:
          escape = #"\u2029"#  // PARAGRAPH SEPARATOR
          width = 3
        default:
          index += 1
          continue
        }
        output.append(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        escape.withUTF8Buffer { output.append($0) }
        index += width
        start = index
      }
      output.append(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
    }
  }
}
