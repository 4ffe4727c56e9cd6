#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing
  import TestTraits

  /// The loop threads of the process, by their system name.
  func curlLoopThreadCount() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { id in
      let comm = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
      return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == CurlEngine.loopThreadSystemName
    }.count
  }

  @Suite("Curl engine: library and lifecycle", .ownThreads)
  struct CurlLifecycleTests {
    @Test func libraryIsLoadedWithItsVersion() throws {
      #expect(CurlLibrary.unavailableReason == nil)
      let version = try #require(CurlLibrary.version)
      #expect(version.split(separator: ".").count >= 2)
    }

    @Test func missingLibraryMakesTheEngineUnavailable() async {
      await #expect(processExitsWith: .success) {
        let path = "/nonexistent/sessionfetcher/libcurl-missing.so.4"
        setenv("SESSIONFETCHER_LIBCURL_PATH", path, 1)
        guard let reason = CurlLibrary.unavailableReason, reason.contains(path),
          reason.contains("could not be loaded")
        else { exit(1) }
        do {
          _ = try CurlEngine(configuration: .ephemeral)
          exit(2)
        } catch CurlEngineError.unavailable(let thrown) {
          guard thrown == reason else { exit(3) }
        } catch {
          exit(4)
        }
        guard CurlLibrary.version == nil, CurlEngine.liveLoopCount == 0 else { exit(5) }
      }
    }

    @Test func libraryWithoutCurlIsUnavailable() async {
      await #expect(processExitsWith: .success) {
        setenv("SESSIONFETCHER_LIBCURL_PATH", "libc.so.6", 1)
        guard let reason = CurlLibrary.unavailableReason, reason.contains("libc.so.6"),
          reason.contains("has no symbol curl_")
        else { exit(1) }
        guard (try? CurlEngine(configuration: .ephemeral)) == nil else { exit(2) }
      }
    }

    @Test func releasedEngineFinishesItsTransferThenItsThreadEnds() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let handler = CurlRecordingHandler()
      var engine: CurlEngine? = try makeCurlEngine()
      let task = try #require(
        engine?.makeTask(request: URLRequest(url: server.url("/delay/0.2")), body: .none, handler: handler))
      task.resume()
      engine = nil
      #expect(handler.waitForCompletion())
      #expect(handler.current.completions.first! == nil)
      #expect(handler.current.response?.statusCode == 200)
      // Resuming after the loop ended completes the task at once.
      let late = CurlRecordingHandler()
      let other = try makeCurlEngine()
      let lateTask = try #require(
        other.makeTask(request: URLRequest(url: server.url("/bytes/1")), body: .none, handler: late))
      other.finishTasksAndInvalidate()
      lateTask.resume()
      #expect(late.waitForCompletion())
      #expect(late.current.completions.first!.urlErrorCode == .cancelled)
    }

    /// In a process of its own, so that no other test's engine is counted.
    @Test func thousandEnginesLeaveNoLoopThreadOrTransfer() async {
      await #expect(processExitsWith: .success) {
        guard let server = try? TestServer() else { exit(10) }
        defer { server.stop() }
        let startLoops = CurlEngine.liveLoopCount
        for index in 0..<1_000 {
          guard let engine = try? makeCurlEngine() else { exit(11) }
          let handler = CurlRecordingHandler()
          switch index % 4 {
          case 0:
            // A fetch to its end.
            engine.makeTask(
              request: URLRequest(url: server.url("/bytes/100")), body: .none, handler: handler)?
              .resume()
            guard handler.waitForCompletion(), handler.current.completions.first! == nil else { exit(12) }
            guard engine.runningTransferCount == 0 else { exit(13) }
            // The loop thread is alive (and named) while its engine is.
            if index == 0, curlLoopThreadCount() < 1 || CurlEngine.liveLoopCount < 1 { exit(18) }
          case 1:
            // A transfer that never ends, cancelled by the engine's invalidation.
            engine.makeTask(request: URLRequest(url: server.url("/hang")), body: .none, handler: handler)?
              .resume()
            engine.invalidateAndCancel()
            guard handler.waitForCompletion(), handler.current.completions.first!.urlErrorCode == .cancelled
            else { exit(14) }
          case 2:
            // A task cancelled by its owner, the engine released while it runs.
            let task = engine.makeTask(
              request: URLRequest(url: server.url("/hang")), body: .none, handler: handler)
            task?.resume()
            task?.cancel()
            guard handler.waitForCompletion() else { exit(15) }
          default:
            // An engine never used: no thread at all.
            _ = engine.makeTask(
              request: URLRequest(url: server.url("/bytes/1")), body: .none, handler: handler)
          }
        }
        for _ in 0..<300 where CurlEngine.liveLoopCount != startLoops || curlLoopThreadCount() != 0 {
          usleep(20_000)
        }
        guard CurlEngine.liveLoopCount == startLoops else { exit(16) }
        guard curlLoopThreadCount() == 0 else { exit(17) }
      }
    }
  }
#endif
