#if LIBCURL_ENGINE
  import CCurl
  import Foundation

  /// The event loop of one ``CurlEngine``: one thread running `curl_multi_poll` over one multi handle
  /// (its connection cache), started with the first transfer, ending once the engine is invalidated
  /// and its transfers are over.
  ///
  /// Every `curl_easy_*` and `curl_multi_*` call happens on that thread. Other threads reach it only
  /// through ``send(_:)``: a command queued under `control`'s lock, then `curl_multi_wakeup`.
  ///
  /// Exchanges to an origin past its connection limit wait in the loop's ``HostQueue`` and start in
  /// the order they came, not on libcurl's pending list.
  ///
  /// `@unchecked Sendable`: `control` is behind its `Locked` wrapper; `multi`, `attached` and the
  /// host queue are confined to the loop thread.
  final class CurlLoop: @unchecked Sendable {
    enum Command {
      case start(CurlTask)
      case cancel(CurlTask)
      case pause(CurlTask)
      case unpause(CurlTask)
      /// The body stream has bytes (or ended) after a read found none: send again.
      case resumeSending(CurlTask)
      /// No new tasks; the thread ends when the transfers are over (cancelled first if told).
      case invalidate(cancellingTransfers: Bool)
    }

    private enum ThreadState {
      case notStarted, running, exited
    }

    /// Where the loop holds a task (``CurlTask/hold``, loop thread only).
    enum Hold {
      /// Not held: not started yet, or over (a finished task keeps its transfer until the loop
      /// detaches it, right after its handler heard of the end).
      case none
      /// Started, waiting in the host queue for a slot (or just given one).
      case waiting
      /// Holding a slot to its origin, its transfer on the multi handle.
      case attached
      /// Its transfer over while it was suspended with body bytes kept: the slot is given back,
      /// and the task ends once resumed (or cancelled).
      case ended
    }

    private struct Control {
      var commands: [Command] = []
      var thread = ThreadState.notStarted
      /// The multi handle while the loop can be woken (set by the loop thread).
      var multi: UnsafeMutableRawPointer?
      var isInvalidated = false
      /// The tasks the loop holds, attached or waiting.
      var heldCount = 0
      /// The most transfers that were on the multi handle at once.
      var mostAttached = 0
    }

    let options: CurlEngineOptions
    private let control = Locked(Control())
    // Loop thread only.
    private var attached: [UnsafeMutableRawPointer: CurlTask] = [:]
    /// `CURLMOPT_MAXCONNECTS` as last set (loop thread only).
    private var connectionCacheSize = 0
    /// The tasks whose transfer keeps body bytes not yet handed over (loop thread only; see
    /// `CurlTask.receiveBody`).
    private var keepingBody: [CurlTask] = []
    /// Exchanges past their origin's connection limit, waiting their turn (loop thread only).
    private var hostQueue: HostQueue<CurlTask>
    /// The most transfers that were on the multi handle at once (loop thread only; `control`
    /// has a copy for other threads).
    private var mostAttached = 0
    /// The easy handles kept between transfers (loop thread only): as many as the default
    /// connections per host, so a burst to one host finds a handle for each of its transfers.
    private let easyPool = CurlEasyPool(capacity: CurlEngineSession.defaultConnectionsPerHost)
    /// Tasks the host queue let go while libcurl was calling back, to attach once it returns
    /// (loop thread only; each holds a slot).
    private var readyToRun: [CurlTask] = []

    /// The loop threads alive in the process, for tests that check none is leaked.
    static var liveLoopCount: Int { liveLoops.current }
    private static let liveLoops = Locked(0)
    /// The loop threads' name as the system shows it (`/proc/self/task/*/comm`, 15 bytes at most).
    static let systemThreadName = "SFetcher.curl"
    /// How long `curl_multi_poll` sleeps when nothing happens (a wakeup or a socket ends it sooner).
    private static let pollTimeoutMilliseconds: Int32 = 5_000

    init(options: CurlEngineOptions) {
      self.options = options
      hostQueue = HostQueue(limit: options.maximumConnectionsPerHost)
    }

    var isInvalidated: Bool { control.withLock { $0.isInvalidated } }
    /// The tasks started and not over yet, attached to libcurl or waiting for their origin.
    var heldCount: Int { control.withLock { $0.heldCount } }
    /// The most transfers that were on libcurl at once since the loop began.
    var mostTransfersAtOnce: Int { control.withLock { $0.mostAttached } }

    /// A task for `request`, or nil once the loop is invalidated.
    func makeTask(
      request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
      handler: any SessionTaskHandler
    ) -> CurlTask? {
      guard !isInvalidated else { return nil }
      return CurlTask(request: request, body: body, tls: tls, route: route, handler: handler, loop: self)
    }

    /// Queues `command` for the loop thread and wakes it, starting it first if needed. A command
    /// for a loop whose thread has ended is answered here: a started or cancelled task completes
    /// with `URLError(.cancelled)`.
    func send(_ command: Command) {
      let accepted = control.withLock { control -> Bool in
        switch control.thread {
        case .exited:
          return false
        case .notStarted:
          if case .invalidate = command {
            control.isInvalidated = true
            control.thread = .exited
            return true
          }
          control.commands.append(command)
          control.thread = .running
          startThread()
        case .running:
          if case .invalidate = command { control.isInvalidated = true }
          control.commands.append(command)
          if let multi = control.multi { ccurl_multi_wakeup(multi) }
        }
        return true
      }
      guard !accepted else { return }
      switch command {
      case .start(let task), .cancel(let task):
        task.complete(error: URLError(.cancelled, userInfo: task.failingURLInfo), curlCode: nil, metrics: nil)
      case .pause, .unpause, .resumeSending, .invalidate:
        break
      }
    }

    private func startThread() {
      let thread = Thread { [self] in run() }
      thread.name = "SessionFetcher.curl"
      thread.start()
    }

    // MARK: - The loop thread

    private func run() {
      CurlLoop.liveLoops.withLock { $0 += 1 }
      defer { CurlLoop.liveLoops.withLock { $0 -= 1 } }
      ccurl_set_thread_name(CurlLoop.systemThreadName)
      // libcurl does every transfer's I/O on this thread (and on resolver threads it starts from
      // here, which inherit the mask). With CURLOPT_NOSIGNAL it does not ignore SIGPIPE itself;
      // 7.88 sends with MSG_NOSIGNAL, TLS records included, but older releases let OpenSSL write
      // through its socket BIO, where a peer's close raises SIGPIPE. Blocked here, such a write
      // fails with EPIPE, and the signal stays pending on this thread, never delivered.
      _ = ccurl_block_sigpipe_on_this_thread()
      guard let multi = ccurl_multi_init() else {
        failAll()
        return
      }
      let perHost = options.maximumConnectionsPerHost
      if perHost > 0 { ccurl_multi_setopt_long(multi, CCURLMOPT_MAX_HOST_CONNECTIONS, perHost) }
      connectionCacheSize = options.connectionCacheSize
      ccurl_multi_setopt_long(multi, CCURLMOPT_MAXCONNECTS, connectionCacheSize)
      ccurl_multi_setopt_long(multi, CCURLMOPT_PIPELINING, Int(CCURLPIPE_MULTIPLEX))
      control.withLock { $0.multi = multi }

      var cancelsAll = false
      while true {
        let commands = control.withLock { control -> [Command] in
          defer { control.commands = [] }
          return control.commands
        }
        for command in commands {
          switch command {
          case .start(let task): start(task, multi: multi)
          case .cancel(let task): cancel(task, multi: multi)
          case .pause(let task): pause(task)
          case .unpause(let task): unpause(task, multi: multi)
          case .resumeSending(let task): resumeSending(task)
          case .invalidate(let cancelling): cancelsAll = cancelsAll || cancelling
          }
        }
        if cancelsAll {
          for task in attached.values { task.cancel() }
          for task in hostQueue.removeAllWaiting() where task.hold == .waiting { task.cancel() }
        }
        let exits = control.withLock { control -> Bool in
          guard control.isInvalidated, control.commands.isEmpty, control.heldCount == 0, attached.isEmpty
          else {
            return false
          }
          control.thread = .exited
          control.multi = nil
          return true
        }
        if exits { break }
        var running: Int32 = 0
        ccurl_multi_perform(multi, &running)
        collectFinishedTransfers(multi: multi)
        runReadyTasks(multi: multi)
        guard deliverKeptBodies(multi: multi) else { continue }
        var descriptors: Int32 = 0
        ccurl_multi_poll(multi, CurlLoop.pollTimeoutMilliseconds, &descriptors)
      }
      // Every task is over: let go of the ones still listed, so the loop object holds none.
      keepingBody = []
      readyToRun = []
      easyPool.drain()
      ccurl_multi_cleanup(multi)
    }

    /// Lists `task` as keeping body bytes (called by its write callback, on the loop thread).
    func noteKeptBody(of task: CurlTask) {
      keepingBody.append(task)
    }

    /// Hands the body bytes that transfers keep to their handlers before the loop waits. A
    /// transfer that kept bytes in this pass keeps them for the next one when a socket is ready now
    /// (`curl_multi_poll` with no wait): the records that follow go in the same chunk. Bytes are
    /// never kept across a wait, nor across a pass that brought the transfer nothing, so a slow
    /// body is delivered as it comes.
    ///
    /// Returns whether the loop may wait now: false when bytes stay kept, or when any were handed
    /// over (a handler may have queued commands, and the look with no wait may have taken the
    /// wakeup meant for them).
    private func deliverKeptBodies(multi: UnsafeMutableRawPointer) -> Bool {
      guard !keepingBody.isEmpty else { return true }
      var moreIsReady = false
      if keepingBody.contains(where: { $0.transfer?.keptBodyThisPass == true }) {
        var ready: Int32 = 0
        ccurl_multi_poll(multi, 0, &ready)
        moreIsReady = ready > 0
      }
      let tasks = keepingBody
      keepingBody = []
      for task in tasks {
        guard let transfer = task.transfer, transfer.isListedAsKeeping else { continue }
        if moreIsReady, transfer.keptBodyThisPass, !transfer.keptBody.isEmpty {
          transfer.keptBodyThisPass = false
          keepingBody.append(task)
          continue
        }
        transfer.isListedAsKeeping = false
        // Suspended: the bytes wait in the transfer for `unpause`.
        task.deliverKeptBody()
      }
      return false
    }

    /// The multi handle could not be made: every queued task fails, and the loop is over.
    private func failAll() {
      let commands = control.withLock { control -> [Command] in
        control.thread = .exited
        control.isInvalidated = true
        defer { control.commands = [] }
        return control.commands
      }
      for case .start(let task) in commands {
        task.complete(error: URLError(.cannotLoadFromNetwork), curlCode: nil, metrics: nil)
      }
    }

    private func start(_ task: CurlTask, multi: UnsafeMutableRawPointer) {
      guard !task.isCancelled else {
        task.complete(error: URLError(.cancelled, userInfo: task.failingURLInfo), curlCode: nil, metrics: nil)
        return
      }
      task.hold = .waiting
      control.withLock { $0.heldCount += 1 }
      if hostQueue.start(task, to: task.origin), !run(task, multi: multi) {
        startNextWaiting(for: task.origin, multi: multi)
      }
    }

    /// Attaches `task`, which holds a slot to its origin now. Returns false when the slot is free
    /// again: the task was over already (cancelled while it waited), or ends here (cancelled, or
    /// its transfer could not be made).
    private func run(_ task: CurlTask, multi: UnsafeMutableRawPointer) -> Bool {
      guard task.hold == .waiting else { return false }
      let error: (any Error)? =
        task.isCancelled
        ? URLError(.cancelled, userInfo: task.failingURLInfo)
        : attach(task, credential: nil, multi: multi)
      if let error {
        task.hold = .none
        control.withLock { $0.heldCount -= 1 }
        task.complete(error: error, curlCode: nil, metrics: nil)
        return false
      }
      task.hold = .attached
      if attached.count > mostAttached {
        // A new high: told under the lock only then, not at every transfer.
        mostAttached = attached.count
        control.withLock { $0.mostAttached = attached.count }
      }
      return true
    }

    /// A slot to `origin` is free: the tasks waiting for it start in the order they came, until one
    /// runs or none waits.
    private func startNextWaiting(for origin: HostQueue<CurlTask>.Origin, multi: UnsafeMutableRawPointer) {
      while let next = hostQueue.finished(origin) {
        if run(next, multi: multi) { return }
      }
    }

    /// Attaches the tasks the host queue let go from inside a libcurl callback.
    private func runReadyTasks(multi: UnsafeMutableRawPointer) {
      while !readyToRun.isEmpty {
        let ready = readyToRun
        readyToRun = []
        for task in ready where !run(task, multi: multi) {
          startNextWaiting(for: task.origin, multi: multi)
        }
      }
    }

    /// A response of `task` came in `httpVersion` (called from its header callback): an origin that
    /// multiplexes lets its waiting tasks go, attached once libcurl returns.
    func learned(httpVersion: String, from task: CurlTask) {
      readyToRun += hostQueue.learned(httpVersion: httpVersion, of: task.origin)
    }

    /// Ends a task the loop may hold: its slot goes to the next task waiting for its origin (a
    /// waiting task leaves the queue), then its handler hears of the end.
    private func end(
      _ task: CurlTask, error: (any Error)?, curlCode: Int32?, metrics: TransferMetrics?,
      multi: UnsafeMutableRawPointer
    ) {
      let hold = releaseHold(of: task)
      giveBackPlace(of: task, heldAs: hold, multi: multi)
      task.complete(error: error, curlCode: curlCode, metrics: metrics)
    }

    /// The place `task` held as `hold` is free: a slot goes to the next task waiting for its
    /// origin, a waiting task leaves the queue.
    private func giveBackPlace(of task: CurlTask, heldAs hold: Hold, multi: UnsafeMutableRawPointer) {
      switch hold {
      case .attached: startNextWaiting(for: task.origin, multi: multi)
      case .waiting: hostQueue.removeWaiting(to: task.origin) { $0 === task }
      case .none, .ended: break
      }
    }

    /// Marks `task` as no longer held (counted as running until now) and returns how it was held.
    private func releaseHold(of task: CurlTask) -> Hold {
      let hold = task.hold
      task.hold = .none
      if hold != .none { control.withLock { $0.heldCount -= 1 } }
      return hold
    }

    /// Makes the task's transfer and adds it to the multi handle; the error that kept it from it.
    ///
    /// Ownership: the task is retained here, once, as `Unmanaged.passRetained(task)`; that pointer
    /// is the `CURLOPT_PRIVATE` value and the userdata of every libcurl callback of the transfer,
    /// which take it unretained. It is released exactly once, in `detach`, right after the easy
    /// handle leaves the multi handle (completion, cancel or resend), so no callback can run after
    /// the release.
    private func attach(
      _ task: CurlTask, credential: CurlTransfer.Credential?, multi: UnsafeMutableRawPointer
    ) -> (any Error)? {
      let retained = Unmanaged.passRetained(task)
      let transfer: CurlTransfer
      do {
        transfer = try task.makeTransfer(
          options: options, credential: credential, pool: easyPool, userdata: retained.toOpaque())
      } catch {
        retained.release()
        task.transfer = nil
        return error
      }
      task.transfer = transfer
      guard ccurl_multi_add_handle(multi, transfer.easy) == CCURLM_OK else {
        transfer.close()
        task.transfer = nil
        retained.release()
        return URLError(.cannotLoadFromNetwork)
      }
      attached[transfer.easy] = task
      if let larger = CurlEngineOptions.connectionCacheSize(
        current: connectionCacheSize, transfers: attached.count)
      {
        connectionCacheSize = larger
        ccurl_multi_setopt_long(multi, CCURLMOPT_MAXCONNECTS, larger)
      }
      return nil
    }

    /// Takes the task's transfer off the multi handle, frees it and releases the task's retain.
    private func detach(_ task: CurlTask, multi: UnsafeMutableRawPointer) {
      guard let transfer = task.transfer, attached.removeValue(forKey: transfer.easy) != nil else { return }
      ccurl_multi_remove_handle(multi, transfer.easy)
      task.transfer = nil
      transfer.close()
      // The one release of attach's passRetained.
      Unmanaged.passUnretained(task).release()
    }

    private func cancel(_ task: CurlTask, multi: UnsafeMutableRawPointer) {
      let metrics = task.transfer.map { TransferMetrics(curlEasyHandle: $0.easy) }
      detach(task, multi: multi)
      end(
        task, error: URLError(.cancelled, userInfo: task.failingURLInfo), curlCode: nil, metrics: metrics,
        multi: multi)
    }

    private func pause(_ task: CurlTask) {
      guard let transfer = task.transfer, !transfer.isPaused, transfer.endedWithCode == nil else { return }
      transfer.isPaused = true
      ccurl_easy_pause(transfer.easy, transfer.pauseBits)
    }

    private func unpause(_ task: CurlTask, multi: UnsafeMutableRawPointer) {
      guard let transfer = task.transfer else { return }
      // Bytes kept when the task was suspended go first, then the end of a transfer that ended
      // meanwhile, or what libcurl kept.
      if !transfer.keptBody.isEmpty, task.deliverKeptBody() == .suspended { return }
      if let code = transfer.endedWithCode {
        finish(task, transfer: transfer, code: code, multi: multi)
        return
      }
      guard transfer.isPaused else { return }
      transfer.isPaused = false
      // May deliver what libcurl kept, from inside this call.
      ccurl_easy_pause(transfer.easy, transfer.pauseBits)
    }

    private func resumeSending(_ task: CurlTask) {
      guard let transfer = task.transfer, transfer.isSendPaused else { return }
      transfer.isSendPaused = false
      // May call the read callback from inside this call.
      ccurl_easy_pause(transfer.easy, transfer.pauseBits)
    }

    private func collectFinishedTransfers(multi: UnsafeMutableRawPointer) {
      while true {
        var easy: UnsafeMutableRawPointer?
        var result: Int32 = 0
        var remaining: Int32 = 0
        let kind = ccurl_multi_info_read(multi, &easy, &result, &remaining)
        guard kind != CCURLMSG_NONE else { return }
        guard kind == CCURLMSG_DONE, let easy, let task = attached[easy], let transfer = task.transfer else {
          continue
        }
        if let credential = task.takeResend() {
          detach(task, multi: multi)
          if let error = attach(task, credential: credential, multi: multi) {
            end(task, error: error, curlCode: nil, metrics: nil, multi: multi)
          }
          continue
        }
        // The bytes kept from the last records first; a suspended task completes once resumed.
        transfer.isListedAsKeeping = false
        if task.deliverKeptBody() == .suspended, !transfer.keptBody.isEmpty {
          transfer.endedWithCode = result
          // Its connection is free, and so is its slot.
          if task.hold == .attached {
            task.hold = .ended
            startNextWaiting(for: task.origin, multi: multi)
          }
          continue
        }
        finish(task, transfer: transfer, code: result, multi: multi)
      }
    }

    /// Ends the task of a transfer libcurl ended with `code`.
    ///
    /// The handler hears of the end first: the loop's own bookkeeping (the easy handle off the
    /// multi handle and back to the pool, the origin's slot to its next waiting exchange) runs once
    /// the handler returns, while the callback queue delivers the completion, not before the
    /// completion is queued. The handler's own work on this thread (a part file renamed, a redirect
    /// or challenge set up) comes first. A request the completion starts is a command, taken after
    /// this pass: the exchanges already waiting for the origin still go first. Until `detach`, the
    /// task is still in `attached` with hold `.none` (no longer counted in `heldCount`).
    private func finish(_ task: CurlTask, transfer: CurlTransfer, code: Int32, multi: UnsafeMutableRawPointer)
    {
      let metrics = TransferMetrics(curlEasyHandle: transfer.easy)
      let error = task.error(curlCode: code, transfer: transfer)
      let hold = releaseHold(of: task)
      task.complete(error: error, curlCode: code, metrics: metrics)
      detach(task, multi: multi)
      giveBackPlace(of: task, heldAs: hold, multi: multi)
    }
  }
#endif
