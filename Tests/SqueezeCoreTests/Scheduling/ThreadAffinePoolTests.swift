import Dispatch
import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import Testing

@testable import SqueezeCore

/// Which workspace a pool lends to which thread.
@Suite struct ThreadAffinePoolTests {
  /// Lends a workspace for as long as the closure given runs; returns which it lent (nil
  /// when it could not lend one).
  typealias Borrow = @Sendable (_ whileHeld: () -> Void) -> ObjectIdentifier?

  /// Two threads hold a workspace each; the first gives its back first. Asked again, the
  /// first thread gets its own workspace back, not the one the other thread returned last
  /// (whose engine state sits in the other core's cache).
  ///
  /// - Returns: the workspaces lent, by key: "first", "second", "first again".
  static func lendToTwoThreads(_ lend: @escaping Borrow) async -> [String: ObjectIdentifier] {
    let lent = Lock<[String: ObjectIdentifier]>([:])
    // Each thread records its workspace before it signals that it gave the workspace back.
    let borrow: @Sendable (String, () -> Void) -> Void = { key, whileHeld in
      let workspace = lend(whileHeld)
      lent.withLock { $0[key] = workspace }
    }
    let firstHolds = DispatchSemaphore(value: 0)
    let secondHolds = DispatchSemaphore(value: 0)
    let firstReturned = DispatchSemaphore(value: 0)
    let secondReturned = DispatchSemaphore(value: 0)
    SystemThread.start(name: nil) {
      firstHolds.wait()
      borrow("second") {
        secondHolds.signal()
        firstReturned.wait()
      }
      secondReturned.signal()
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
        finished.resume()
      }
    }
    return lent.withLock { $0 }
  }

  /// What every lending must show: two workspaces, and the first thread's back to it.
  static func expectKeptWithTheirThreads(_ lent: [String: ObjectIdentifier]) {
    #expect(lent.count == 3)
    #expect(lent["first"] != nil && lent["first"] != lent["second"])
    #expect(lent["first again"] == lent["first"])
  }

  final class Workspace: Sendable {}

  @Test func aThreadGetsBackTheWorkspaceItLastUsed() async {
    let pool = ThreadAffinePool<Workspace>()
    let lent = await Self.lendToTwoThreads { whileHeld in
      try? pool.lend(make: { Workspace() }) { workspace in
        whileHeld()
        return ObjectIdentifier(workspace)
      }
    }
    Self.expectKeptWithTheirThreads(lent)
  }

  /// The same through the pool compressions borrow from.
  @Test func compressionWorkspacesStayWithTheirThreads() async throws {
    let pool = WorkspacePool(
      engine: .fast, level: try #require(CompressionLevel(6)),
      chunking: Chunking(chunkSize: 1 << 20, rsyncable: false))
    let lent = await Self.lendToTwoThreads { whileHeld in
      try? pool.withWorkspace { (workspace) throws(FileFailure) in
        whileHeld()
        return ObjectIdentifier(workspace)
      }
    }
    Self.expectKeptWithTheirThreads(lent)
  }

  /// The same through the pool decompressions borrow from.
  @Test func decodeWorkspacesStayWithTheirThreads() async {
    let pool = DecoderPool(engine: .fast)
    let lent = await Self.lendToTwoThreads { whileHeld in
      try? pool.withWorkspace { (workspace) throws(FileFailure) in
        whileHeld()
        return ObjectIdentifier(workspace)
      }
    }
    Self.expectKeptWithTheirThreads(lent)
  }
}
