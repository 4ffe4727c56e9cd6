import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher

/// The server's answers of the resumable upload protocol, as scripted exchanges: a test lists what
/// the start (`/u.location`) and each command to the upload URL (`/u.upload`) answer, in order,
/// and reads the commands the upload sent from the engine's records.
enum UploadScript {
  static let startPath = "/u.location"
  static let uploadPath = "/u.upload"

  /// The start's answer: the upload URL.
  static let start = ScriptedExchange.response(
    headers: ["X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": ScriptedEngine.origin + uploadPath])

  /// A command's answer while the upload is active, with the bytes the server holds.
  static func active(_ received: Int) -> ScriptedExchange {
    .response(headers: ["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": String(received)])
  }

  /// The answer that ends the upload, with `body` for the upload's result.
  static func final(_ received: Int, body: String = "done") -> ScriptedExchange {
    .response(
      headers: ["X-Goog-Upload-Status": "final", "X-Goog-Upload-Size-Received": String(received)],
      body: Data(body.utf8))
  }

  /// A command's answer of the protocol's status `status` alone (`cancelled`, …).
  static func status(_ status: String) -> ScriptedExchange {
    .response(headers: ["X-Goog-Upload-Status": status])
  }

  /// A plain HTTP error.
  static func error(_ code: Int) -> ScriptedExchange {
    .response(status: code, body: Data("error \(code)".utf8))
  }

  /// A service on `engine` whose fetchers, the upload's command fetchers included, run there.
  static func service(_ engine: ScriptedEngine) -> FetcherService {
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.upload.scripted.service")
    service.run(on: engine)
    return service
  }

  /// An upload of `data` (nil: none yet, for a test that sets its source) in ``bigChunkSize``
  /// chunks to ``startPath``, on a service on `engine`.
  static func upload(_ engine: ScriptedEngine, data: Data? = bigData) -> SessionUploadFetcher {
    let fetcher = SessionUploadFetcher(
      request: URLRequest(url: engine.url(startPath)), uploadMIMEType: "application/octet-stream",
      chunkSize: bigChunkSize, fetcherService: service(engine))
    fetcher.callbackQueue = DispatchQueue(label: "upload test callbacks")
    if let data { fetcher.uploadData = data }
    return fetcher
  }
}

extension ScriptedEngine {
  /// The commands sent to the upload URL, in order, as the server would record them.
  var uploadCommands: [RecordedCommand] {
    requests(matching: UploadScript.uploadPath).map {
      RecordedCommand(
        command: $0.header("X-Goog-Upload-Command") ?? "?",
        offset: $0.header("X-Goog-Upload-Offset").flatMap { Int64($0) }, length: $0.body.count)
    }
  }
}
