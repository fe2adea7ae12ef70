import Dispatch
import SqueezeSystem
import Synchronization

/// Reads the folders of one argument on several threads at once, and hands each folder's scan
/// to ``Discovery`` on the calling thread in walk order, as soon as its turn comes.
///
/// Listing is a file system call or two per entry (`getdents64`, then `fstatat`), done before
/// any file is worked on: on one thread it was a noticeable share of a run over many small
/// files (the Performance article gives it). Here each folder read (``FolderScan``) is a piece of work of its own: the
/// threads take folders from a shared stack, and each folder read adds its subfolders to it,
/// so a tree is spread over the threads however unevenly its files lie. The stack gives out
/// folders in walk order (a folder's first subfolder first), and the calling thread records
/// each scan once every folder before it in walk order is recorded, then forgets it: only the
/// scans read ahead of their turn are held, not the whole tree. The list, the skips, the
/// failures and the warnings come out exactly as with one thread.
///
/// Links are not followed here (``DiscoveryOptions/listingThreads``). Without links a folder
/// is reached twice only through a bind mount, and which way to it is listed depends on the
/// walk's order: the first folder reached a second time stops the threads, and the caller
/// undoes what it recorded and walks the argument serially instead.
final class ParallelListing: Sendable {
  /// How reading an argument ended.
  enum Outcome: Sendable, Equatable {
    /// Every folder was read once and recorded.
    case listed
    /// A folder was reached a second time: the reading stopped, and what was recorded must
    /// be undone.
    case folderReachedTwice
  }

  /// A folder waiting to be read.
  private struct Pending {
    var node: Int
    var relative: RawPath
  }

  /// One folder's place in the walk.
  private enum Slot {
    /// Not read yet.
    case unread
    /// Read, waiting for its turn to be recorded: its scan, and the node of each of its
    /// subfolder entries in the scan's order.
    case read(FolderScan, children: [Int])
    /// Recorded, and forgotten.
    case recorded
  }

  private struct State {
    var pending: [Pending] = []
    var slots: [Slot] = []
    /// Folders already met, by identity.
    var seen: Set<FileIdentity> = []
    /// Threads reading a folder now.
    var reading = 0
    /// Helper threads waiting for a folder to read.
    var waiting = 0
    /// The calling thread waits for a folder to be read.
    var callerWaits = false
    var folderReachedTwice = false
    /// The walk is over: every helper stops.
    var done = false

    /// The next folder to read, counted as being read; nil when none is waiting.
    mutating func takeFolder() -> Pending? {
      guard let pending = pending.popLast() else { return nil }
      reading += 1
      return pending
    }
  }

  private let state: Lock<State>
  private let context: FolderScan.Context
  /// Wakes a waiting helper: when folders were added, or when the walk is over.
  private let wakeup = DispatchSemaphore(value: 0)
  /// Wakes the calling thread: when a folder was read.
  private let callerWakeup = DispatchSemaphore(value: 0)

  private init(identity: FileIdentity, context: FolderScan.Context) {
    self.context = context
    var initial = State()
    initial.pending = [Pending(node: 0, relative: "")]
    initial.slots = [.unread]
    initial.seen = [identity]
    state = Lock(initial)
  }

  /// Reads the argument's folder and every folder below it, on
  /// `threads` threads (the calling one and `threads - 1` started for the walk, which end
  /// with it), and calls `record` on the calling thread for each folder in walk order.
  ///
  /// - Parameters:
  ///   - identity: the argument's folder (reaching it again is reaching it twice).
  ///   - top: what `record` is given with the argument's own folder.
  ///   - record: records a folder's scan, given with the value its parent's recording
  ///     returned for it (`top` for the argument's folder); returns the subfolders to walk,
  ///     each as its position among the scan's subfolder entries and the value to record it
  ///     with.
  static func read<Place>(
    identity: FileIdentity, context: FolderScan.Context, threads: Int,
    top: Place, record: (FolderScan, Place) -> [(entry: Int, place: Place)]
  ) -> Outcome {
    let listing = ParallelListing(identity: identity, context: context)
    for _ in 1..<max(1, threads) {
      SystemThread.start(name: "squeeze-list") {
        listing.help()
      }
    }
    return listing.lead(top: top, record: record)
  }

  /// What a thread does next.
  private enum Step {
    case read(Pending)
    case wait
    case stop
  }

  /// What the calling thread does next.
  private enum LeadStep {
    /// Records the folder whose turn it is: its scan and its subfolders' nodes.
    case record(FolderScan, children: [Int])
    case read(Pending)
    case wait
    case stop
  }

  /// The calling thread: records the folders whose turn has come, reads folders while none
  /// has, and waits when every folder left is being read by a helper.
  private func lead<Place>(
    top: Place, record: (FolderScan, Place) -> [(entry: Int, place: Place)]
  ) -> Outcome {
    // Folders to record, in walk order from the end: a stack, as the serial walk's.
    var turns: [(node: Int, place: Place)] = [(0, top)]
    while let (node, place) = turns.last {
      // One look decides: the folder whose turn it is is read, or another is taken, or the
      // caller waits. Looking at the turn apart from deciding to wait lost the wake-up of a
      // helper that finished the folder in between, and the walk hung.
      let step = state.withLock { state -> LeadStep in
        if state.folderReachedTwice { return .stop }
        if case .read = state.slots[node] {
          // Taken out of its slot, not copied: a copy of a scan retains each of its arrays
          // (the copies on the way to the recording cost about 900 instructions a folder).
          // Putting an unread slot back after taking it out every time cost more.
          var slot = Slot.recorded
          swap(&slot, &state.slots[node])
          guard case .read(let scan, let children) = consume slot else {
            preconditionFailure("folder \(node)'s slot changed under the lock")
          }
          return .record(scan, children: children)
        }
        if let pending = state.takeFolder() { return .read(pending) }
        state.callerWaits = true
        return .wait
      }
      switch consume step {
      case .record(let scan, let children):
        turns.removeLast()
        let subfolders = record(scan, place)
        turns.append(contentsOf: subfolders.reversed().map { (children[$0.entry], $0.place) })
      case .read(let folder): read(folder)
      case .wait: callerWakeup.wait()
      case .stop: return stop()
      }
    }
    return stop()
  }

  /// Ends the walk: stops the helpers, and when a folder was reached twice waits until no
  /// folder is being read, so the stale temporaries removed are all counted.
  private func stop() -> Outcome {
    let helpers = state.withLock { state -> Int in
      state.done = true
      defer { state.waiting = 0 }
      return state.waiting
    }
    for _ in 0..<helpers { wakeup.signal() }
    while true {
      let outcome = state.withLock { state -> Outcome? in
        guard state.folderReachedTwice else { return .listed }
        guard state.reading == 0 else {
          state.callerWaits = true
          return nil
        }
        return .folderReachedTwice
      }
      if let outcome { return outcome }
      callerWakeup.wait()
    }
  }

  /// A helper thread: reads folders until the walk is over.
  private func help() {
    while true {
      let step = state.withLock { state -> Step in
        if state.done { return .stop }
        if let pending = state.takeFolder() { return .read(pending) }
        state.waiting += 1
        return .wait
      }
      switch step {
      case .read(let folder): read(folder)
      case .wait: wakeup.wait()
      case .stop: return
      }
    }
  }

  /// Reads one folder and files its scan; its subfolders become folders to read, the first
  /// one on top of the stack.
  private func read(_ folder: Pending) {
    let read = FolderScan.read(folder.relative, context: context)
    // Its subfolders' identities and paths, made before the lock is taken.
    let subfolderEntries = read.entries.compactMap { entry -> (FileIdentity, RawPath)? in
      guard case .subfolder(let name, let status) = entry else { return nil }
      return (FileIdentity(status), folder.relative.appending(read.name(name)))
    }
    // Moved into its slot under the lock, not copied: a copy of a scan retains each of its
    // arrays.
    var scan: FolderScan? = consume read
    let (helpers, caller) = state.withLock { state -> (Int, Bool) in
      state.reading -= 1
      var children: [Int] = []
      var subfolders: [Pending] = []
      for (identity, relative) in subfolderEntries where !state.folderReachedTwice {
        guard state.seen.insert(identity).inserted else {
          state.folderReachedTwice = true
          break
        }
        children.append(state.slots.count)
        state.slots.append(.unread)
        subfolders.append(Pending(node: children.last!, relative: relative))
      }
      if state.folderReachedTwice {
        state.pending.removeAll()
      } else {
        state.pending.append(contentsOf: subfolders.reversed())
        state.slots[folder.node] = .read(scan.take()!, children: children)
      }
      let helpers = min(state.waiting, state.pending.count)
      state.waiting -= helpers
      defer { state.callerWaits = false }
      return (helpers, state.callerWaits)
    }
    for _ in 0..<helpers { wakeup.signal() }
    if caller { callerWakeup.signal() }
  }
}
