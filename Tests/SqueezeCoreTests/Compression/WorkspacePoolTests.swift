import Dispatch
import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import Testing

@testable import SqueezeCore

/// Which workspace the pool lends to which thread.
@Suite struct WorkspacePoolTests {
  /// Two threads hold a workspace each; the first gives its back first. Asked again, the
  /// first thread gets its own workspace back, not the one the other thread returned last
  /// (whose compressor state sits in the other core's cache).
  @Test func aThreadGetsBackTheWorkspaceItLastUsed() async throws {
    let pool = WorkspacePool(
      engine: .fast, level: try #require(CompressionLevel(6)),
      chunking: Chunking(chunkSize: 1 << 20, rsyncable: false))
    let firstHolds = DispatchSemaphore(value: 0)
    let secondHolds = DispatchSemaphore(value: 0)
    let firstReturned = DispatchSemaphore(value: 0)
    let secondReturned = DispatchSemaphore(value: 0)
    let secondDone = DispatchSemaphore(value: 0)
    let lent = Lock<[String: ObjectIdentifier]>([:])
    let failures = Lock<[String]>([])
    let borrow: @Sendable (String, () -> Void) -> Void = { key, body in
      do {
        try pool.withWorkspace { (workspace) throws(FileFailure) in
          lent.withLock { $0[key] = ObjectIdentifier(workspace) }
          body()
        }
      } catch {
        failures.withLock { $0.append("\(key): \(error)") }
      }
    }
    SystemThread.start(name: nil) {
      firstHolds.wait()
      borrow("second") {
        secondHolds.signal()
        firstReturned.wait()
      }
      secondReturned.signal()
      secondDone.signal()
    }
    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
      SystemThread.start(name: nil) {
        borrow("first") {
          firstHolds.signal()
          secondHolds.wait()
        }
        firstReturned.signal()
        secondReturned.wait()
        borrow("first again") {}
        secondDone.wait()
        finished.resume()
      }
    }
    #expect(failures.withLock { $0 } == [])
    let ids = lent.withLock { $0 }
    #expect(ids["first"] != nil && ids["first"] != ids["second"])
    #expect(ids["first again"] == ids["first"])
  }
}
