import Dispatch
import Foundation
import Synchronization

/// Reads the folders of one argument on several threads at once, for ``Discovery`` to record
/// in walk order afterwards.
///
/// Listing is a file system call or two per entry (`getdents64`, then `fstatat`), done before
/// any file is worked on: on one thread it was about a tenth of a run over 20,000 small files
/// (issue 10). Here each folder read (``FolderScan``) is a piece of work of its own: the
/// threads take folders from a shared stack, and each folder read adds its subfolders to it,
/// so a tree is spread over the threads however unevenly its files lie. Nothing of the run's
/// list is touched until every folder is read; ``Discovery`` then records the scans in the
/// order a serial walk would, so the list, the skips, the failures and the warnings come out
/// the same as with one thread.
///
/// Links are not followed here (``DiscoveryOptions/listingThreads``). Without links a folder
/// is reached twice only through a bind mount, and which way to it is listed depends on the
/// walk's order: the first folder reached a second time stops the threads, and the caller
/// walks the argument serially instead.
final class ParallelListing: Sendable {
  /// The argument's folders as read: node 0 is the argument's own folder.
  struct Tree: Sendable {
    /// One folder read.
    struct Node: Sendable {
      /// What reading it found.
      var scan: FolderScan
      /// The node of each of its subfolder entries, in the scan's order.
      var children: [Int]
    }
    var nodes: [Node]
  }

  /// How reading an argument ended.
  enum Outcome: Sendable {
    /// Every folder was read once.
    case listed(Tree)
    /// A folder was reached a second time: nothing read is used. The count is the stale
    /// temporaries the folder reads removed meanwhile.
    case folderReachedTwice(staleTemporariesRemoved: Int)
  }

  /// A folder waiting to be read.
  private struct Pending {
    var node: Int
    var relative: RawPath
    var display: RawPath
  }

  private struct State {
    var pending: [Pending] = []
    var nodes: [Tree.Node?] = []
    /// Folders already met, by identity.
    var seen: Set<FileIdentity> = []
    /// Threads reading a folder now.
    var reading = 0
    /// Threads waiting for a folder to read.
    var waiting = 0
    var folderReachedTwice = false
    var staleTemporariesRemoved = 0
    /// No folder is left and none is being read: every thread stops.
    var done = false
  }

  private let state: Mutex<State>
  private let context: FolderScan.Context
  /// Wakes a waiting thread: when folders were added, or when the work is done.
  private let wakeup = DispatchSemaphore(value: 0)

  private init(display: RawPath, identity: FileIdentity, context: FolderScan.Context) {
    self.context = context
    var initial = State()
    initial.pending = [Pending(node: 0, relative: "", display: display)]
    initial.nodes = [nil]
    initial.seen = [identity]
    state = Mutex(initial)
  }

  /// Reads the argument's folder, shown as `display`, and every folder below it, on
  /// `threads` threads: the calling one and `threads - 1` started for the walk, which end
  /// with it.
  ///
  /// - Parameter identity: the argument's folder (reaching it again is reaching it twice).
  static func read(
    display: RawPath, identity: FileIdentity, context: FolderScan.Context, threads: Int
  ) -> Outcome {
    let listing = ParallelListing(display: display, identity: identity, context: context)
    for _ in 1..<max(1, threads) {
      let thread = Thread {
        ThreadName.set("squeeze-list")
        listing.work()
      }
      thread.start()
    }
    listing.work()
    // `work` returns on this thread only once no folder is pending and none is being read.
    return listing.state.withLock { state in
      if state.folderReachedTwice {
        return .folderReachedTwice(staleTemporariesRemoved: state.staleTemporariesRemoved)
      }
      return .listed(Tree(nodes: state.nodes.map { $0! }))
    }
  }

  /// What a thread does next.
  private enum Step {
    case read(Pending)
    case wait
    case stop
  }

  /// Reads folders until none is left.
  private func work() {
    while true {
      let step = state.withLock { state -> Step in
        if state.done { return .stop }
        if let pending = state.pending.popLast() {
          state.reading += 1
          return .read(pending)
        }
        state.waiting += 1
        return .wait
      }
      let folder: Pending
      switch step {
      case .stop: return
      case .wait:
        wakeup.wait()
        continue
      case .read(let pending): folder = pending
      }
      let scan = FolderScan.read(folder.relative, display: folder.display, context: context)
      let wakes = state.withLock { state -> Int in
        state.reading -= 1
        state.staleTemporariesRemoved += scan.staleTemporariesRemoved
        var children: [Int] = []
        for entry in scan.entries where !state.folderReachedTwice {
          guard case .subfolder(let name, let status) = entry else { continue }
          guard state.seen.insert(FileIdentity(status)).inserted else {
            state.folderReachedTwice = true
            break
          }
          children.append(state.nodes.count)
          state.nodes.append(nil)
          state.pending.append(
            Pending(
              node: children.last!, relative: folder.relative.appending(name),
              display: folder.display.appending(name)))
        }
        if state.folderReachedTwice { state.pending.removeAll() }
        state.nodes[folder.node] = Tree.Node(scan: scan, children: children)
        if state.pending.isEmpty && state.reading == 0 {
          state.done = true
          defer { state.waiting = 0 }
          return state.waiting
        }
        let wakes = min(state.waiting, state.pending.count)
        state.waiting -= wakes
        return wakes
      }
      for _ in 0..<wakes { wakeup.signal() }
    }
  }
}
