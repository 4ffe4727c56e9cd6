import Foundation

// Resumable downloads by HTTP ranges. FoundationNetworking has no resume data
// (`cancel(byProducingResumeData:)` always gives nil), so the fetcher keeps the part file beside the
// destination with the response's validator and continues with `Range: bytes=N-` + `If-Range`:
// a 206 from N appends, a 200 (the resource changed) restarts cleanly.

/// The validator of a response whose body can be continued with a range request.
struct DownloadValidator: Codable, Equatable, Sendable {
  var etag: String?
  var lastModified: String?

  /// The `If-Range` value: a strong ETag, else the Last-Modified date (a weak ETag cannot be used).
  var ifRange: String? {
    if let etag, !etag.hasPrefix("W/") { return etag }
    return lastModified
  }

  /// The validator a windowed download continues with (a strong ETag or a Last-Modified date).
  init(ifRange: String) {
    if ifRange.hasPrefix("\"") {
      etag = ifRange
    } else {
      lastModified = ifRange
    }
  }

  /// The validator of `response`, or nil when its body cannot be continued: the server does not
  /// take ranges (no `Accept-Ranges: bytes` nor 206) or gave nothing to send as `If-Range`.
  init?(_ response: HTTPURLResponse) {
    let ranges = response.value(forHTTPHeaderField: "Accept-Ranges")?.lowercased()
    guard response.statusCode == 206 || ranges?.contains("bytes") == true else { return nil }
    etag = response.value(forHTTPHeaderField: "ETag")
    lastModified = response.value(forHTTPHeaderField: "Last-Modified")
    guard ifRange != nil else { return nil }
  }
}

/// The resume state of a fetch (in its run): what a resume token given before begin and the
/// fetch's own retries continue, and the token it ends with.
struct DownloadResumeState {
  /// The validator of the response being written to the part file.
  var validator: DownloadValidator?
  /// The part file the next attempt continues.
  var parked: ParkedDownload?
  /// The token made when the fetch ended with a parked part file.
  var token: Data?
}

enum DownloadResume {
  /// Adds `Range` and `If-Range` to a GET that continues a parked part file, when the fetch still
  /// goes to the file the part file was kept for (``matchDestination(_:in:)`` made the two URLs
  /// equal when they name one file). A destination set since to another file gets the whole
  /// resource from byte 0: the rest of one file must never be appended to nothing, nor to the
  /// start of another.
  static func addRangeHeaders(to request: inout URLRequest, from storage: FetcherStorage) {
    guard let parked = storage.run.downloadResume.parked, parked.length > 0,
      storage.config.destinationFileURL == parked.destination,
      (request.httpMethod ?? "GET").uppercased() == "GET",
      request.value(forHTTPHeaderField: "Range") == nil, let ifRange = parked.validator.ifRange
    else { return }
    request.setValue("bytes=\(parked.length)-", forHTTPHeaderField: "Range")
    request.setValue(ifRange, forHTTPHeaderField: "If-Range")
  }

  /// Chooses the part file for a successful response going to `destination` and makes it the
  /// storage's: the parked one, appended to, when the response is a 206 from its end; otherwise an
  /// empty one (a 200 restarts cleanly). Decided under the fetcher's lock; the returned disk work
  /// is done after it.
  static func choosePartFile(
    for response: URLResponse, destination: URL, storage: inout FetcherStorage
  ) -> PartFileAction {
    let http = response as? HTTPURLResponse
    let willWrite = storage.config.partFileWillWrite
    storage.run.downloadResume.validator = http.flatMap { DownloadValidator($0) }
    var choice = PartFileAction()
    if let parked = storage.run.downloadResume.parked {
      storage.run.downloadResume.parked = nil
      if let http, http.statusCode == 206, parked.destination == destination {
        let range = http.value(forHTTPHeaderField: "Content-Range").flatMap(contentRange)
        guard range?.start == parked.length else {
          choice.cleanup.removing.append(parked.partFileURL)
          choice.failure = SessionFetcherError.downloadFailed(
            description: "the server's Content-Range does not continue the \(parked.length) bytes kept")
          return choice
        }
        let part = PartFile(
          continuing: parked.partFileURL, destination: destination, length: parked.length,
          willWrite: willWrite)
        if storage.run.downloadResume.validator == nil {
          storage.run.downloadResume.validator = parked.validator
        }
        storage.lifecycle.current.responseBodyLength = parked.length
        storage.lifecycle.current.expectedContentLength = range?.total ?? -1
        storage.run.partFile = part
        choice.preparation = .open(part)
        return choice
      }
      choice.cleanup.removing.append(parked.partFileURL)
    }
    if let existing = storage.run.partFile {
      choice.preparation = .truncate(existing)
      return choice
    }
    let part = PartFile(creatingFor: destination, willWrite: willWrite)
    storage.run.partFile = part
    choice.preparation = .open(part)
    return choice
  }

  /// Before a fetch that continues `parked` to `destination` (its configured destination), outside
  /// the fetcher's lock (it reads the disk): when the two name one file, however each is spelled
  /// (relative, through `..` or a symbolic link), the part file is continued under the name it was
  /// kept for; when they name different files, it is let go of and deleted, and the fetch starts
  /// from byte 0. Returns the parked download to continue, or nil.
  static func matchDestination(_ parked: ParkedDownload, to destination: URL?) -> ParkedDownload? {
    guard let destination, PartFile.namesSameFile(destination, parked.destination) else {
      try? FileManager.default.removeItem(at: parked.partFileURL)
      return nil
    }
    var matched = parked
    matched.destination = destination
    return matched
  }

  /// `bytes START-END/TOTAL` → (START, TOTAL or nil when `*`).
  static func contentRange(_ value: String) -> (start: Int64, total: Int64?)? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = trimmed.dropFirst("bytes ".count)
    let parts = spec.split(separator: "/", maxSplits: 1)
    guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"),
      let start = Int64(parts[0][..<dash].trimmingCharacters(in: .whitespaces))
    else { return nil }
    return (start, Int64(parts[1].trimmingCharacters(in: .whitespaces)))
  }

  /// An attempt ended without success: keep the part file for the next attempt when its response
  /// can be continued. Returns the disk work: closing a parked file, or deleting one that is not.
  static func park(_ storage: inout FetcherStorage) -> PartFileCleanup {
    guard let partFile = storage.run.partFile else { return PartFileCleanup() }
    storage.run.partFile = nil
    // A write in flight (a stop racing with the disk) leaves its length unknown: the file is not
    // continued, so that no later attempt opens a file a write of this one may still reach.
    guard let length = partFile.settledLength, length > 0,
      let parked = continuation(of: partFile, length: length, in: storage)
    else { return PartFileCleanup(discarding: partFile) }
    storage.run.downloadResume.parked = parked
    return PartFileCleanup(closing: partFile)
  }

  /// What continues `partFile` (as long as it is now): nil when its response cannot be continued
  /// (no validator, or not a GET).
  static func continuation(of partFile: PartFile, length: Int64, in storage: FetcherStorage)
    -> ParkedDownload?
  {
    guard let validator = storage.run.downloadResume.validator,
      let plan = storage.plan, (plan.baseRequest.httpMethod ?? "GET").uppercased() == "GET",
      let source = storage.lifecycle.exchange?.request?.url ?? plan.baseRequest.url
    else { return nil }
    return ParkedDownload(
      partFileURL: partFile.url, destination: partFile.destination, sourceURL: source, validator: validator,
      length: length, requestURL: plan.baseRequest.url, method: "GET",
      headers: ResumeToken.storedHeaders(of: plan.baseRequest))
  }

  /// The token of the part file being written, for a fetcher that keeps partial downloads: it
  /// names the file, not how much of it is written, since ``SessionFetcher/resumeData`` reads the
  /// file's size back when it is used.
  static func liveToken(_ storage: FetcherStorage) -> Data? {
    guard storage.keepsPartialDownload, let partFile = storage.lifecycle.begunRun?.partFile,
      let parked = continuation(of: partFile, length: partFile.length, in: storage)
    else { return nil }
    return ResumeToken.encode(parked)
  }

  /// A 416 answered the range that continued the parked part file: forgets the part so the request
  /// can go again whole, and returns its URL to delete; nil when the request did not continue one.
  static func dropForRestart(_ storage: inout FetcherStorage) -> URL? {
    guard let parked = storage.run.downloadResume.parked,
      storage.lifecycle.exchange?.request?.value(forHTTPHeaderField: "If-Range") != nil
    else { return nil }
    storage.run.downloadResume.parked = nil
    return parked.partFileURL
  }

  /// The fetch ended (failed, stopped or succeeded). Keeps the part file and makes the token when
  /// the fetch did not succeed and the caller asked to keep partial downloads, else deletes a
  /// parked part file and the current one. Returns the disk work, for after the lock.
  static func fetchEnded(_ storage: inout FetcherStorage, succeeded: Bool) -> PartFileCleanup {
    var cleanup = PartFileCleanup()
    let run = storage.run
    if succeeded {
      cleanup.discarding = run.partFile
    } else {
      cleanup = park(&storage)
    }
    run.partFile = nil
    guard let parked = run.downloadResume.parked else { return cleanup }
    run.downloadResume.parked = nil
    if !succeeded, storage.keepsPartialDownload {
      run.downloadResume.token = ResumeToken.encode(parked)
    } else {
      // Closed before it is deleted when it was parked just now.
      cleanup.removing.append(parked.partFileURL)
    }
    return cleanup
  }
}

/// The disk work for a response that goes to a part file, chosen under the fetcher's lock (see
/// ``DownloadResume/choosePartFile(for:destination:storage:)``) and done after it.
struct PartFileAction {
  enum Preparation {
    case none
    /// Create a new file, or open a kept one.
    case open(PartFile)
    /// Empty the file the exchange already writes to.
    case truncate(PartFile)
  }
  var preparation = Preparation.none
  /// The response cannot go on with the part kept: the attempt fails with this.
  var failure: SessionFetcherError?
  var cleanup = PartFileCleanup()

  /// Does the disk work; returns the part file it failed to prepare, with the error.
  func prepare() -> (PartFile, any Error)? {
    cleanup.perform()
    switch preparation {
    case .none:
      return nil
    case .open(let part):
      do { try part.open() } catch { return (part, error) }
    case .truncate(let part):
      do { try part.truncate() } catch { return (part, error) }
    }
    return nil
  }
}

/// Part files to close or delete, decided under the fetcher's lock and done after it.
struct PartFileCleanup {
  /// Closed and kept (parked for a resume).
  var closing: PartFile?
  /// Closed and deleted.
  var discarding: PartFile?
  /// Part files no longer open (parked earlier) to delete.
  var removing: [URL] = []

  init(closing: PartFile? = nil, discarding: PartFile? = nil) {
    self.closing = closing
    self.discarding = discarding
  }

  func perform() {
    closing?.close()
    discarding?.discard()
    for url in removing { PartFile.remove(url) }
  }
}

extension SessionFetcher {
  /// Creates a standalone fetcher that continues the download that `resumeData` describes (see
  /// ``downloadResumeData``): a GET of the same URL with the same headers (credentials excepted) to
  /// the same ``destinationFileURL``, continued with `Range` and `If-Range`.
  ///
  /// Nil when `resumeData` is not a resume token, or names anything but one of the fetcher's own
  /// part files: a `.<name>.<UUID>.part` regular file in the destination's folder (not a symlink,
  /// a folder nor a hard link; no `..` in its path). Nothing a refused token names is touched.
  ///
  /// A token keeps no credentials (`Authorization`, `Proxy-Authorization`, `Cookie`, and headers
  /// named like a token, key, secret or session), nor the configuration of the fetcher that made
  /// it: set them again (its callback queue, authorizer, allowed schemes...), or let a service do
  /// it with `FetcherService.fetcher(resumeData:)`.
  ///
  /// ```swift
  /// guard let token = failed.downloadResumeData,
  ///   let resumed = SessionFetcher(resumeData: token) else { return }
  /// try await resumed.beginFetch()   // the destination appears once complete
  /// ```
  public convenience init?(resumeData: Data) {
    guard case .success(let parked) = ResumeToken.decode(resumeData) else { return nil }
    self.init(request: ResumeToken.request(for: parked))
    storage.withLock { Self.apply(.success(parked), to: &$0) }
  }

  /// Sets the resume state of an idle fetcher from a decoded token (nil clears it).
  private static func apply(
    _ decoded: Result<ParkedDownload, ResumeToken.Refusal>?, to storage: inout FetcherStorage
  ) {
    guard storage.lifecycle.phase == .idle else { return }
    storage.resumeFrom = nil
    storage.resumeRefusal = nil
    switch decoded {
    case nil:
      return
    case .failure(let refusal)?:
      storage.resumeRefusal = refusal.description
    case .success(let parked)?:
      storage.config.destinationFileURL = parked.destination
      storage.keepsPartialDownload = true
      guard parked.length > 0 else { return }
      storage.resumeFrom = parked
    }
  }

  /// Whether a download to ``destinationFileURL`` that fails or is stopped keeps its part file
  /// beside the destination (hidden, named `.<name>.<UUID>.part`) and offers
  /// ``downloadResumeData`` to continue it later. Default false: nothing partial is left behind.
  ///
  /// Independently of this, a download whose server takes ranges (an `ETag` or `Last-Modified`
  /// with `Accept-Ranges: bytes`) is continued, not restarted, by the fetcher's own retries.
  public var keepsPartialDownloadForResume: Bool {
    get { storage.withLock { $0.keepsPartialDownload } }
    set { storage.withLock { $0.keepsPartialDownload = newValue } }
  }

  /// GTM's `resumeDataBlock`: called with a token to continue the download when the fetch is
  /// stopped with part of its body on disk, on ``callbackQueue``, before the completion (if
  /// ``stopFetchingTriggersCompletionHandler`` asks for one). Setting it keeps partial downloads
  /// (``keepsPartialDownloadForResume``). The token continues with ``init(resumeData:)`` or a
  /// service's `fetcher(resumeData:)`.
  ///
  /// Only a download to ``destinationFileURL`` whose server takes ranges (an `ETag` or
  /// `Last-Modified` with `Accept-Ranges: bytes`) can be continued: for a download into memory, or
  /// one stopped before any byte reached the disk, the block is not called (as GTM calls it only
  /// for download tasks).
  public var resumeDataBlock: (@Sendable (Data) -> Void)? {
    get { self[config: \.resumeDataBlock] }
    set {
      storage.withLock { storage in
        storage.config.resumeDataBlock = newValue
        if newValue != nil { storage.keepsPartialDownload = true }
      }
    }
  }

  /// A token to continue this fetcher's download, once the fetch failed or was stopped with part
  /// of the body on disk, the server takes ranges, and ``keepsPartialDownloadForResume`` is set;
  /// otherwise nil. Like Apple's resume data, it is opaque: give it to ``init(resumeData:)`` or to
  /// another fetcher's ``resumeData``. It names the part file, so it is valid on this machine only.
  public var downloadResumeData: Data? {
    storage.withLock { $0.lifecycle.begunRun?.downloadResume.token }
  }

  /// A token to continue the download that is being written now, from wherever its part file
  /// stands when the token is used, even by another process after this one was killed: nil until
  /// the response has arrived, and nil when ``keepsPartialDownloadForResume`` is not set, the fetch
  /// is not a GET to ``destinationFileURL``, or the response cannot be continued (the server does
  /// not take ranges or gave no strong `ETag` nor `Last-Modified`).
  ///
  /// ``downloadResumeData`` exists only once a fetch has ended; a process that may die mid-download
  /// saves this one instead, as soon as it exists (the first ``downloadProgressBlock`` call is a
  /// good place). The part file holds only bytes written in order, so its size is what was
  /// received; ``resumeData`` reads that size back and asks for the rest.
  ///
  /// ```swift
  /// fetcher.keepsPartialDownloadForResume = true
  /// fetcher.downloadProgressBlock = { [weak fetcher] _, _, _ in
  ///   // `tokenFile` writes a token it has not written yet (see the Uploads and Downloads article).
  ///   if let token = fetcher?.partFileResumeData { tokenFile.save(token) }
  /// }
  /// // In a later process, after a crash:
  /// let resumed = SessionFetcher(resumeData: try Data(contentsOf: tokenURL))
  /// ```
  ///
  /// A retry can move the download to a new part file, and with it the token: save it again when it
  /// differs from the one saved. Once the fetch has succeeded the part file is gone (it became the
  /// destination), and a fetcher given the token then downloads the whole resource again.
  public var partFileResumeData: Data? {
    storage.withLock { DownloadResume.liveToken($0) }
  }

  /// Continues the download of a resume token: sets ``destinationFileURL`` and
  /// ``keepsPartialDownloadForResume``, and makes the first attempt ask for the missing bytes. A
  /// token whose part file is gone starts over; a resource whose validator changed is downloaded
  /// again whole (the server answers the `If-Range` with 200), and so is one that can no longer
  /// satisfy the range (a 416 answer: the part file is dropped and the request sent once more
  /// without a range). Set before beginning; reads back the token given (nil when it had no part
  /// file left to continue).
  ///
  /// The fetcher keeps its own request: the token only continues it. The fetch fails before any
  /// traffic with `SessionFetcherError.invalidConfiguration(_:)` when the data given is not a
  /// token, names anything but one of the fetcher's own part files (see ``init(resumeData:)``), or
  /// continues a download of another URL than the request's; the part file it names is left as is.
  public var resumeData: Data? {
    get {
      storage.withLock { storage in
        // The token given before begin; once begun, the part file the fetch would continue next.
        let parked = storage.lifecycle.begunRun.map(\.downloadResume.parked) ?? storage.resumeFrom
        return parked.flatMap { ResumeToken.encode($0) }
      }
    }
    set {
      let decoded = newValue.map { ResumeToken.decode($0) }
      storage.withLock { Self.apply(decoded, to: &$0) }
    }
  }
}
