import Foundation

// Following a redirect: the limit, the next hop by `RedirectPolicy`, and `willRedirectBlock`.
extension SessionFetcher {
  func followRedirect(response: HTTPURLResponse, target: URL, body: Data) {
    let context:
      (
        hop: URLRequest, insecure: [String], localhost: Bool, limit: RedirectLimit, queue: DispatchQueue,
        block: WillRedirectBlock?, body: BodySource
      )? = storage.withLock { storage in
        guard storage.lifecycle.phase == .running, case let exchange = storage.lifecycle.current,
          let hop = exchange.hopRequest, let plan = storage.plan,
          let limit = storage.lifecycle.redirectReceived(maximum: storage.config.maximumRedirects)
        else {
          return nil
        }
        if limit == .follow { storage.run.timing.redirectCount += 1 }
        return (
          hop, storage.config.allowedInsecureSchemes, storage.config.allowLocalhostRequest,
          limit, plan.callbackQueue, storage.config.willRedirectBlock,
          exchange.keepsBody ? plan.body : .none
        )
      }
    guard let context else { return }
    let refusal = SessionFetcherError.status(code: response.statusCode, data: body.isEmpty ? nil : body)
    switch context.limit {
    case .follow:
      break
    case .final:
      // No redirect may be followed at all: the 3xx is the answer, the final response head that
      // `didReceiveResponseBlock` decides about.
      askAboutRefusal(AttemptFailure(error: refusal, response: response, data: body))
      return
    case .tooMany:
      attemptFailed(
        AttemptFailure(error: Self.tooManyRedirectsError(url: response.url), response: response))
      return
    }
    switch RedirectPolicy.nextHop(
      from: context.hop, response: response, target: target, allowedInsecureSchemes: context.insecure,
      allowLocalhostRequest: context.localhost)
    {
    case .failure(.insecure(let url)):
      finish(data: nil, error: SessionFetcherError.insecureRequest(url))
    case .failure(.noLocation):
      askAboutRefusal(AttemptFailure(error: refusal, response: response, data: body))
    case .success(let hop):
      let nextBody = hop.keepsBody ? context.body : .none
      guard let block = context.block else {
        proceedWithRedirect(from: response, to: hop.request, body: nextBody)
        return
      }
      deliver(on: context.queue) {
        LockAudit.userBlock("willRedirectBlock")
        block(response, hop.request) { chosen in
          guard let chosen else {
            // Declined: the 3xx is the final response.
            self.askAboutRefusal(AttemptFailure(error: refusal, response: response, data: body))
            return
          }
          // The block may point anywhere: the insecure-scheme gate still applies.
          if let url = chosen.url, !self.isAllowedRedirect(url) {
            self.finish(data: nil, error: SessionFetcherError.insecureRequest(url))
            return
          }
          self.proceedWithRedirect(from: response, to: chosen, body: nextBody)
        }
      }
    }
  }

  /// `URLError(.httpTooManyRedirects)` as Apple platforms give it, with the failing URL.
  static func tooManyRedirectsError(url: URL?) -> URLError {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "too many HTTP redirects"]
    if let url { info[NSURLErrorFailingURLErrorKey] = url }
    return URLError(.httpTooManyRedirects, userInfo: info)
  }

  /// Whether a redirect may lead to `url` (see ``SecurityPolicy/allowsRedirect(to:allowedInsecureSchemes:allowLocalhostRequest:)``).
  private func isAllowedRedirect(_ url: URL) -> Bool {
    let (schemes, localhost) = storage.withLock {
      ($0.config.allowedInsecureSchemes, $0.config.allowLocalhostRequest)
    }
    return SecurityPolicy.allowsRedirect(
      to: url, allowedInsecureSchemes: schemes, allowLocalhostRequest: localhost)
  }

  private func proceedWithRedirect(from response: HTTPURLResponse, to request: URLRequest, body: BodySource) {
    guard storage.withLock({ $0.lifecycle.phase == .running }) else { return }
    for monitor in allMonitors() { monitor.fetcher(self, willRedirectFrom: response, to: request) }
    sendHop(request, body: body)
  }
}
