import Foundation
import SessionFetcher

// The service plugs into its fetchers through the core's `FetcherServiceHooks`. A fetcher holds
// its service strongly (as in the original), so a service lives while its fetchers do; the service
// holds a fetcher only while it runs or waits, which breaks the cycle when the fetch ends.
extension FetcherService: FetcherServiceHooks {
  package func fetcherShouldBeginNow(_ fetcher: SessionFetcher) -> Bool {
    guard let host = FetcherService.throttleKey(of: fetcher) else {
      state.withLock { _ = $0.unthrottled.insert(fetcher) }
      // As below: a stop that raced ahead told the service before it knew the fetcher.
      if !fetcher.isFetching { fetcherEnded(fetcher, succeeded: false) }
      return true
    }
    let priority = fetcher.servicePriority
    let runsNow = state.withLock { $0.throttle.admit(fetcher, host: host, priority: priority) }
    // A stop that raced ahead of the admission told the service before it knew the fetcher:
    // forget it now, or it would hold a slot forever.
    if !fetcher.isFetching {
      fetcherEnded(fetcher, succeeded: false)
    }
    return runsNow
  }

  package func fetcher(_ fetcher: SessionFetcher, willSend request: inout URLRequest) -> Bool {
    let usesMemory = fetcher.destinationFileURL == nil && fetcher.accumulateDataBlock == nil
    let id = ObjectIdentifier(fetcher)
    // Decided on the request as it will be sent: after the authorizer, whose credentials key it.
    let key = ETagCacheRules.key(for: request)
    let tag: String? = state.withLock { state in
      state.pendingETags[id] = nil
      guard state.shouldRememberETags, usesMemory, let key else { return nil }
      // The most specific entry this request may use: its credentials', else one any may reuse,
      // with the headers its response varied on as this request sends them.
      let entryKey = key.lookups.first { lookup in
        state.etagCache.vary(forKey: lookup).map { ETagCacheRules.matches($0, request) } == true
      }
      if let userTag = request.value(forHTTPHeaderField: "If-None-Match") {
        state.pendingETags[id] = PendingETag(key: key, entryKey: entryKey, sentTag: userTag, request: request)
        return nil
      }
      let tag = entryKey.flatMap { state.etagCache.etag(forKey: $0) }
      state.pendingETags[id] = PendingETag(key: key, entryKey: entryKey, sentTag: tag, request: request)
      return tag
    }
    let addedAgent = addUserAgent(to: &request)
    guard let tag else { return addedAgent }
    request.setValue(tag, forHTTPHeaderField: "If-None-Match")
    return true
  }

  package func fetcher(
    _ fetcher: SessionFetcher, finalResponse head: ResponseHead, data: Data?
  ) -> (response: HTTPURLResponse, data: Data?)? {
    let id = ObjectIdentifier(fetcher)
    let cached: Data? = state.withLock { state in
      guard state.shouldRememberETags, let pending = state.pendingETags[id] else { return nil }
      let status = head.statusCode ?? 0
      switch status {
      case 304:
        guard state.shouldCacheETaggedData, let sent = pending.sentTag, let entryKey = pending.entryKey else {
          return nil
        }
        return state.etagCache.data(forKey: entryKey, etag: sent)
      case 200..<300:
        let rules = ETagCacheRules.storage(status: status) { head.value(forHTTPHeaderField: $0) }
        guard let rules, let etag = head.value(forHTTPHeaderField: "ETag"), !etag.isEmpty else {
          // Nothing of this response may be reused: neither may what was kept for this requester.
          state.etagCache.removeEntry(forKey: pending.key.storage(isPublic: false))
          return nil
        }
        state.etagCache.store(
          etag: etag, data: state.shouldCacheETaggedData ? (data ?? Data()) : nil,
          forKey: pending.key.storage(isPublic: rules.isPublic),
          vary: ETagCacheRules.varyValues(rules.vary, in: pending.request))
        return nil
      default:
        state.etagCache.removeEntry(forKey: pending.key.storage(isPublic: false))
        return nil
      }
    }
    guard let cached, let response = head.httpResponse, let url = response.url else { return nil }
    var headers: [String: String] = [:]
    for (key, value) in response.allHeaderFields {
      if let key = key as? String, let value = value as? String, key.lowercased() != "content-length" {
        headers[key] = value
      }
    }
    headers["Content-Length"] = String(cached.count)
    guard
      let ok = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers)
    else { return nil }
    return (ok, cached)
  }

  package func fetcher(_ fetcher: SessionFetcher, isWaitingToRetry: Bool) {
    let urlHost = FetcherService.throttleKey(of: fetcher)
    state.withLock { state in
      guard let host = state.throttle.host(of: fetcher) ?? urlHost else { return }
      if isWaitingToRetry {
        state.retryWaiters[host, default: []].insert(fetcher)
      } else {
        state.retryWaiters[host]?.remove(fetcher)
        if state.retryWaiters[host]?.isEmpty == true { state.retryWaiters[host] = nil }
      }
    }
  }

  package func fetcherDidStop(_ fetcher: SessionFetcher, succeeded: Bool) {
    fetcherEnded(fetcher, succeeded: succeeded)
  }

  /// Forgets `fetcher` (idempotent); starts waiting fetchers that get its slot, retries the host's
  /// retry-waiting fetchers early after a success, and lets go of its session.
  func fetcherEnded(_ fetcher: SessionFetcher, succeeded: Bool) {
    let id = ObjectIdentifier(fetcher)
    let (started, earlyRetries, release) = state.withLock { state in
      let host = state.throttle.host(of: fetcher)
      let started = state.throttle.remove(fetcher)
      state.unthrottled.remove(fetcher)
      state.pendingETags[id] = nil
      var earlyRetries: [SessionFetcher] = []
      if !state.retryWaiters.isEmpty {
        for key in Array(state.retryWaiters.keys) {
          state.retryWaiters[key]?.remove(fetcher)
          if state.retryWaiters[key]?.isEmpty == true { state.retryWaiters[key] = nil }
        }
      }
      if succeeded, state.isEarlyRetryEnabled, let host, let waiters = state.retryWaiters[host] {
        earlyRetries = Array(waiters)
      }
      let release = state.sessions.release(
        id, now: FetcherService.monotonicNow, timeout: state.unusedSessionTimeout)
      return (started, earlyRetries, release)
    }
    grantSlots(to: started)
    for waiter in earlyRetries {
      RetryDelay.queue.async { waiter.retryImmediatelyIfWaiting() }
    }
    switch release {
    case .nothing: break
    case .checkIdle(let delay): queueIdleCheck(after: delay)
    case .invalidate(let session): session.finishTasksAndInvalidate()
    }
  }
}

extension FetcherService {
  /// Adds the service's User-Agent to `request`, unless the request has one or the service's
  /// session configuration sets one; returns whether it added it.
  @discardableResult
  func addUserAgent(to request: inout URLRequest) -> Bool {
    let headers = RequestHeaderFields(request)
    guard headers.value("User-Agent") == nil,
      let agent = state.withLock({ $0.agentForRequests })
    else { return false }
    // As it is, even with a control character: the fetcher then refuses the request, naming the
    // header (`RequestValidation`), rather than Foundation dropping the value without a word.
    // `setValue` would also check the value character by character through NSCharacterSet on
    // Linux, a cost paid on every request.
    var fields = headers.all
    fields["User-Agent"] = agent
    request.allHTTPHeaderFields = fields
    return true
  }
}

extension ServiceState {
  /// The User-Agent the service adds to requests without one: nil when the session
  /// configuration's `httpAdditionalHeaders` sets one, else ``FetcherService/userAgent`` or the
  /// standard agent.
  var agentForRequests: String? {
    let configured = defaults.sessionConfiguration?.httpAdditionalHeaders?.keys.contains {
      ($0 as? String)?.lowercased() == "user-agent"
    }
    if configured == true { return nil }
    return userAgent ?? FetcherService.standardUserAgent
  }
}
