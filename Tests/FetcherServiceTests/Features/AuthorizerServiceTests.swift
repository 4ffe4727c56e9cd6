import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Keeps the service it is given weakly, as GTMAppAuth's authorizers do, recording each set on
/// the thread it happened (to check that no service lock is held then).
private final class ServiceKeepingAuthorizer: FetcherAuthorizer, @unchecked Sendable {
  // `@unchecked Sendable`: `service` is only touched under `lock`; `onSet` is set before the
  // authorizer is shared.
  private let lock = NSLock()
  private weak var service: (any FetcherServiceProtocol)?
  let sets = Recorder<Bool>()
  /// Called inside each set: reads the service back, which deadlocks if its lock is held.
  var onSet: (@Sendable ((any FetcherServiceProtocol)?) -> Void)?

  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest { request }

  var fetcherService: (any FetcherServiceProtocol)? {
    get { lock.withLock { service } }
    set {
      lock.withLock { service = newValue }
      sets.append(newValue != nil)
      onSet?(newValue)
    }
  }
}

@Suite("Authorizer: the service it is given")
struct AuthorizerServiceTests {
  @Test func serviceSetsItselfAndClearsItWhenReplaced() {
    let service = FetcherService()
    let first = ServiceKeepingAuthorizer()
    // Reading the service's own authorizer from inside the set: no lock of the service is held.
    first.onSet = { service in _ = (service as? FetcherService)?.authorizer }
    service.authorizer = first
    #expect(first.fetcherService === service)
    let second = ServiceKeepingAuthorizer()
    service.authorizer = second
    #expect(first.fetcherService == nil)
    #expect(second.fetcherService === service)
    service.authorizer = nil
    #expect(second.fetcherService == nil)
    #expect(first.sets.values == [true, false])
  }

  /// An authorizer another service took over keeps that one when this service lets it go.
  @Test func replacingLeavesAnotherServicesAuthorizerAlone() {
    let one = FetcherService()
    let other = FetcherService()
    let shared = ServiceKeepingAuthorizer()
    one.authorizer = shared
    other.authorizer = shared
    one.authorizer = nil
    #expect(shared.fetcherService === other)
  }

  /// The reference is weak: the authorizer does not keep its service alive.
  @Test func authorizerDoesNotKeepTheServiceAlive() {
    let authorizer = ServiceKeepingAuthorizer()
    weak var gone: FetcherService?
    do {
      let service = FetcherService()
      service.authorizer = authorizer
      gone = service
      #expect(authorizer.fetcherService != nil)
    }
    #expect(gone == nil)
    #expect(authorizer.fetcherService == nil)
  }

  /// An authorizer without a `fetcherService` of its own (a struct) keeps nothing: no crash.
  @Test func authorizerWithoutTheMemberKeepsNothing() {
    struct Plain: FetcherAuthorizer {
      func authorizeRequest(_ request: URLRequest) async throws -> URLRequest { request }
    }
    let service = FetcherService()
    service.authorizer = Plain()
    #expect(service.authorizer?.fetcherService == nil)
  }
}
