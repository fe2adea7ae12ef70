import SqueezeEngines
import SqueezeSystem

/// The idle workspaces of a pool (``WorkspacePool``, ``DecoderPool``), lent to one
/// synchronous call at a time, each kept with the thread that used it last.
///
/// A thread gets back the workspace it used last when that one is idle, and otherwise the one
/// returned last: the engine's state then stays in that core's cache (libdeflate, for one,
/// clears about 200 KB of hash tables for every file it compresses at level 6). Lent purely
/// last in, first out, workspaces changed threads from file to file; the Performance article
/// ("Workspaces kept with their threads") gives what that cost. A pool holds as many
/// workspaces as calls run at once, so the search is over a few entries, under the lock the
/// lending takes anyway.
final class ThreadAffinePool<Workspace: AnyObject & Sendable>: Sendable {
  /// The idle workspaces, each with the thread (`gettid`) that last used it; the one
  /// returned last at the end.
  private let idle = Lock<[(workspace: Workspace, thread: Int32)]>([])

  /// Runs `body` with a workspace nobody else is using, an idle one or else one `make`
  /// creates, then returns it to the pool.
  ///
  /// - Throws: ``FileFailure/engine(_:)`` when `make` cannot create a workspace, or what
  ///   `body` throws.
  func lend<R>(
    make: () throws(EngineError) -> Workspace,
    _ body: (Workspace) throws(FileFailure) -> R
  ) throws(FileFailure) -> R {
    let thread = ThreadName.currentID
    let reused = idle.withLock { idle -> Workspace? in
      if let mine = idle.lastIndex(where: { $0.thread == thread }) {
        return idle.remove(at: mine).workspace
      }
      return idle.popLast()?.workspace
    }
    let workspace: Workspace
    if let reused {
      workspace = reused
    } else {
      do {
        workspace = try make()
      } catch {
        throw .engine(error)
      }
    }
    defer { idle.withLock { $0.append((workspace, thread)) } }
    return try body(workspace)
  }
}
