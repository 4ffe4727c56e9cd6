import Foundation

// What a fetch will do, fixed when it begins: the request, body, destination, session, TLS and
// route, each checked before any traffic.
extension SessionFetcher {
  /// Validates the configuration and fixes what every attempt will do. Throws before any traffic
  /// (and before any notification).
  func makePlan(monitors: [any FetcherEventMonitor]) throws -> FetchPlan {
    let (config, urlString, streams, refusal, parked) = storage.withLock {
      ($0.config, $0.urlString, $0.run.stream.isStreaming, $0.resumeRefusal, $0.run.downloadResume.parked)
    }
    guard var request = config.request, let url = request.url, SessionFetcher.isFetchable(url) else {
      throw SessionFetcherError.invalidURL(urlString)
    }
    if let refusal {
      throw SessionFetcherError.invalidConfiguration(refusal)
    }
    if let parked, url != parked.sourceURL, url != parked.requestURL {
      throw SessionFetcherError.invalidConfiguration(
        "the resume token continues a download of \(parked.sourceURL.absoluteString), not \(url.absoluteString)"
      )
    }
    if let parked, config.destinationFileURL != parked.destination {
      // The destination was set again since the part file was kept: the same file under another
      // spelling continues it, another file starts from byte 0 (never the rest alone).
      let matched = DownloadResume.matchDestination(parked, to: config.destinationFileURL)
      storage.withLock { storage in
        guard storage.run.downloadResume.parked?.partFileURL == parked.partFileURL else { return }
        storage.run.downloadResume.parked = matched
      }
    }
    let bodies = [config.bodyData != nil, config.bodyFileURL != nil, config.bodyStreamProvider != nil]
    if bodies.filter({ $0 }).count > 1 {
      throw SessionFetcherError.invalidConfiguration(
        "set at most one of bodyData, bodyFileURL and bodyStreamProvider")
    }
    if config.maximumLineLength <= 0 || config.maximumEventLength <= 0 {
      throw SessionFetcherError.invalidConfiguration(
        "maximumLineLength (\(config.maximumLineLength)) and maximumEventLength "
          + "(\(config.maximumEventLength)) must be at least 1")
    }
    if config.maximumRedirects < 0 {
      throw SessionFetcherError.invalidConfiguration(
        "maximumRedirects must be 0 or more, not \(config.maximumRedirects)")
    }
    if let maxRetryCount = config.maxRetryCount, maxRetryCount < 0 {
      throw SessionFetcherError.invalidConfiguration(
        "maxRetryCount is \(maxRetryCount); it must be 0 or more (nil for no limit)")
    }
    if config.destinationFileURL != nil && config.accumulateDataBlock != nil {
      throw SessionFetcherError.invalidConfiguration(
        "set at most one of destinationFileURL and accumulateDataBlock")
    }
    // A fetch over a Unix socket never leaves the machine: it counts as local.
    let viaSocket = config.unixSocketPath != nil && config.allowLocalhostRequest
    guard
      viaSocket
        || SecurityPolicy.allows(
          url, allowedInsecureSchemes: config.allowedInsecureSchemes,
          allowLocalhostRequest: config.allowLocalhostRequest)
    else {
      throw SessionFetcherError.insecureRequest(url)
    }
    // The request as the caller made it (`request`, `setRequestValue`); what an authorizer, a
    // service or a redirect adds is checked again before each request is sent (see `sendHop`).
    try RequestValidation.check(request)

    var body = BodySource.none
    var bodyLength = config.bodyLength
    var exactStreamLength: Int64?
    if let data = config.bodyData {
      body = .data(data)
    } else if let fileURL = config.bodyFileURL {
      try SessionFetcher.checkReadableFile(fileURL)
      if config.sendsBodyFileChunked {
        body = .stream(SessionFetcher.fileStreamProvider(fileURL))
        bodyLength = bodyLength ?? PartFile.size(of: fileURL)
      } else {
        body = .file(fileURL)
      }
    } else if let provider = config.bodyStreamProvider {
      body = .stream(provider)
      if config.bodyStreamHasExactLength, let length = config.bodyLength, length >= 0 {
        exactStreamLength = length
      }
    } else if let data = request.httpBody {
      body = .data(data)
    }
    if request.httpBody != nil { request.httpBody = nil }
    let method = (request.httpMethod ?? "GET").uppercased()
    if method == "GET" && (config.bodyData != nil || config.bodyStreamProvider != nil) {
      request.httpMethod = "POST"
    }
    if let destination = config.destinationFileURL {
      try PartFile.prepareFolder(for: destination)
    }

    // A configuration of the fetcher's own: its resource timeout applies (FoundationNetworking
    // ignores it). A stream's copy of a shared session keeps the shared session's behaviour.
    let ownConfiguration = config.sessionConfiguration != nil || config.configurationBlock != nil
    let base: SharedSession
    if ownConfiguration {
      // A copy: the block must not change a configuration the caller (or a service) shares.
      let copy = config.sessionConfiguration?.copy() as? URLSessionConfiguration
      let sessionConfiguration = copy ?? SharedSession.defaultConfiguration(for: config.engine)
      LockAudit.userBlock("configurationBlock")
      config.configurationBlock?(sessionConfiguration)
      base =
        config.engineSessions.map { SharedSession(configuration: sessionConfiguration, engineSessions: $0) }
        ?? SharedSession(configuration: sessionConfiguration, engine: config.engine)
    } else {
      base = config.sessionProvider?() ?? .standalone(config.engine)
    }
    if let reason = base.unavailableReason {
      // A session of the fetch's own is let go of with everything its engine made.
      if ownConfiguration { base.invalidateAndCancel() }
      throw SessionFetcherError.engineUnavailable(reason)
    }
    let session: SharedSession
    let ownsSession: Bool
    if ownConfiguration {
      (session, ownsSession) = (base, true)
    } else {
      // A stream may stay open for hours: not on the shared session (see `sessionForStream`).
      (session, ownsSession) = streams ? base.sessionForStream() : (base, false)
    }
    // Headers the session adds to every request (`httpAdditionalHeaders`) pass the same rule.
    if let extra = session.configuration.httpAdditionalHeaders, !extra.isEmpty {
      var probe = URLRequest(url: url)
      probe.allHTTPHeaderFields = Dictionary(
        extra.compactMap { key, value in (key as? String).map { ($0, String(describing: value)) } },
        uniquingKeysWith: { first, _ in first })
      try RequestValidation.check(probe)
    }
    try SessionFetcher.checkTLS(config.tlsSettings, limitation: session.tlsSettingsLimitation)
    let route = TransportRoute(proxy: config.proxySettings, unixSocketPath: config.unixSocketPath)
    try SessionFetcher.checkRoute(route, limitation: session.routeLimitation)
    let idleTimeout = request.timeoutInterval > 0 ? request.timeoutInterval : 60
    var resourceTimeout = config.resourceTimeoutInterval
    if resourceTimeout == nil, ownConfiguration,
      session.configuration.timeoutIntervalForResource < 7 * 24 * 3600
    {
      resourceTimeout = session.configuration.timeoutIntervalForResource
    }
    return FetchPlan(
      baseRequest: request, body: body, bodyLength: bodyLength, exactStreamLength: exactStreamLength,
      destination: config.destinationFileURL, accumulates: config.accumulateDataBlock != nil,
      maximumInMemoryBodyLength: config.maximumResponseBodyLength,
      idleTimeout: idleTimeout, resourceTimeout: resourceTimeout,
      callbackQueue: config.callbackQueue,
      monitors: monitors, cookieStorage: config.shouldHandleCookies ? config.cookieStorage : nil,
      session: session, ownsSession: ownsSession,
      testBlock: config.testBlock ?? SessionFetcher.globalTestBlock,
      postsNotifications: config.postsNotifications, tlsSettings: config.tlsSettings,
      route: route)
  }

  /// Throws when the engine cannot honour `settings` (``SessionFetcherError/unsupportedByEngine(_:)``,
  /// with the engine's `limitation`, see ``EngineSession/tlsSettingsLimitation``) or the settings
  /// cannot be used (``SessionFetcherError/invalidTLSSettings(_:)``).
  ///
  /// The settings themselves are checked first, on every engine, so that a bad file is reported
  /// the same way whichever engine the fetch uses.
  static func checkTLS(_ settings: TLSSettings, limitation: String?) throws {
    let unsupported = settings.nonDefaultSettingNames
    guard !unsupported.isEmpty else { return }
    try TLSValidation.check(settings)
    if let limitation {
      throw SessionFetcherError.unsupportedByEngine(
        "TLSSettings \(unsupported.joined(separator: ", ")) on \(limitation)")
    }
  }

  /// Throws when the engine cannot honour `route` (``SessionFetcherError/unsupportedByEngine(_:)``,
  /// with the engine's `limitation`, see ``EngineSession/routeLimitation``) or the route cannot be
  /// used (``SessionFetcherError/invalidConfiguration(_:)``).
  static func checkRoute(_ route: TransportRoute, limitation: String?) throws {
    guard !route.isDefault else { return }
    if let limitation {
      let names = [
        route.proxy != nil ? "proxySettings" : nil, route.unixSocketPath != nil ? "unixSocketPath" : nil,
      ]
      throw SessionFetcherError.unsupportedByEngine(
        "\(names.compactMap { $0 }.joined(separator: " and ")) on \(limitation)")
    }
    if let problem = route.proxy?.problem {
      throw SessionFetcherError.invalidConfiguration(problem)
    }
    if let path = route.unixSocketPath, let problem = TransportRoute.socketPathProblem(path) {
      throw SessionFetcherError.invalidConfiguration(problem)
    }
  }

  /// A fresh stream of the file for every attempt (a retry or redirect sends it again).
  static func fileStreamProvider(_ url: URL) -> BodyStreamProvider {
    {
      try checkReadableFile(url)
      guard let stream = InputStream(url: url) else {
        throw SessionFetcherError.bodyUnavailable(description: "cannot read \(url.path)")
      }
      return stream
    }
  }

  static func checkReadableFile(_ url: URL) throws {
    var isDirectory: ObjCBool = false
    guard url.isFileURL, FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
      throw SessionFetcherError.bodyUnavailable(description: "no file at \(url.path)")
    }
    guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: url.path) else {
      throw SessionFetcherError.bodyUnavailable(description: "cannot read \(url.path)")
    }
  }
}
