import Dispatch
import SqueezeSystem
import Synchronization

/// Publishes finished temporaries under their final names: durably, atomically, in
/// batches, on a thread of its own.
///
/// The guarantee: an output appears under its final name only after its bytes
/// are on disk, and it appears whole or not at all. A compression task writes a temporary in
/// the output's folder, closes it and hands it here; this thread waits for the batch of
/// everything handed in so far, commits the file systems involved with one `syncfs(2)` each
/// (instead of an `fsync` per file, which would idle the compression threads: ~0.15 ms a
/// file here), then renames each temporary into place: `renameat2(RENAME_NOREPLACE)` for a
/// new output, so a file that appeared meanwhile is never clobbered, and plain `renameat`
/// over an output squeeze itself owns. After the last batch it commits once more, so the
/// renames themselves are on disk when the run returns.
///
/// On a FUSE file system `syncfs` succeeds without committing anything (the kernel does not
/// pass it to the server: ``Descriptor/syncFileSystemIsHollow(_:)``), so there each
/// temporary is made durable with its own `fsync` before its rename, and its folder is
/// synced with `fsync` after the rename (once per folder and batch) before the output is
/// reported published, `--rm` or not: the last commit's `syncfs` would not put the name on
/// disk. That is as much as the server is offered a way to commit; whether it commits a
/// folder's `fsync` is its own affair.
///
/// Whoever hands in a temporary does not wait: its completion handler runs on this thread
/// exactly once, with the outcome, on every path (published, failed, cancelled, shut down),
/// so no compression thread is ever held by a sync. Blocking here (the syncs can take a
/// while on a real disk) never takes a thread from Swift's cooperative pool. A batch is
/// gathered for up to 8 ms after the first request arrives, or until it holds
/// ``gatherTarget`` requests, so the thread wakes and syncs once per batch rather than once
/// per small file; each of its wake-ups takes a core from compression for a moment (on 2
/// cores, 1 ms batches cost about 1,400 context switches a second). A request done is not freed
/// here but set aside for the threads that hand in requests, each letting go of up to two
/// as it hands in its next: they free its objects where they allocate the same ones
/// (``submit(_:completion:)``).
///
/// A run that stops ends here in one of two ways. A signal asks for a prompt end: what waits
/// here is removed, not synced (`discardRequested`). A full disk (``FullDisk``) only stops
/// files from starting: every temporary handed in is whole, so it is published as any
/// other (synced before its rename, the last commit made), and the run keeps every output
/// it finished before the disk filled, as `gzip -r` and `rsync -a` keep theirs.
final class Publisher: Sendable {
  /// One temporary to publish.
  ///
  /// A class, made once when the temporary is finished: it passes from the file's
  /// compression to its prepared output, the publisher's queue and its batch by one retain
  /// each, where a struct of paths and handles was copied (each field retained, and later
  /// released) at every step.
  final class Request: Sendable {
    /// The finished temporary file.
    let temporary: TemporaryEntry
    /// Its final name, in the same folder (the rename goes through the temporary's folder
    /// descriptor; the path is for messages and checks).
    let final: RelativeLocation
    /// Rename over an existing file at `final` (an output squeeze owns and replaces);
    /// when false, an existing file makes the request fail with `EEXIST`.
    let replacesExisting: Bool
    /// The file system (`st_dev`) holding the temporary; registered with
    /// ``registerFileSystem(_:using:)`` before publishing.
    let device: UInt64
    /// Commit the file system again after the rename, before reporting success, so the
    /// new name (the folder entry) is on disk too: required before removing a source
    /// (`--rm`).
    let syncsAfterRename: Bool
    /// Make the temporary durable but leave it under its temporary name: a folder is in
    /// the way of `final`, and the temporary takes its place later (``HeldReplacement``).
    let holdsTemporary: Bool

    init(
      temporary: TemporaryEntry, final: RelativeLocation, replacesExisting: Bool,
      device: UInt64, syncsAfterRename: Bool, holdsTemporary: Bool = false
    ) {
      self.temporary = temporary
      self.final = final
      self.replacesExisting = replacesExisting
      self.device = device
      self.syncsAfterRename = syncsAfterRename
      self.holdsTemporary = holdsTemporary
    }
  }

  /// What became of a request.
  enum Outcome: Sendable, Equatable {
    /// On disk under its final name.
    case published
    /// Not published, temporary removed: the step that failed and why.
    case failed(step: Step, SystemError)
    /// The run is stopping (a signal): not published, temporary removed.
    case cancelled
  }

  /// The step of publishing that failed.
  enum Step: String, Sendable {
    case sync = "cannot sync to disk"
    case rename = "cannot rename into place"
    case syncFolder = "cannot sync the folder of"
    /// The file system refuses both `RENAME_NOREPLACE` and hard links
    /// (``NoReplaceRename``): no name can be given without risking replacing a file.
    case noSafeRename =
      "the file system refuses both RENAME_NOREPLACE and hard links, so squeeze cannot safely name"
  }

  /// A request handed in and the completion to call with its outcome.
  ///
  /// A struct of two references: the queue and the batches move it by two retains, where a
  /// class holding the same two (and the publisher's semaphore) cost an allocation and a
  /// release a file besides.
  private struct Waiting: Sendable {
    let request: Request
    /// Called once, on the publisher thread, with the outcome (``resume(_:returning:)``).
    let completion: @Sendable (Outcome) -> Void
  }

  /// Calls `waiting`'s completion with `outcome` and frees its place in the queue
  /// (``capacity``).
  private func resume(_ waiting: Waiting, returning outcome: Outcome) {
    waiting.completion(outcome)
    permits.signal()
  }

  private struct State {
    /// Requests handed in and not yet taken by the thread.
    var pending: [Waiting] = []
    /// The thread is waiting on `wakeup` for work.
    var threadIsIdle = false
    /// The thread is gathering a batch, waiting on `gathered`: whoever clears this signals
    /// `gathered` once (``gather(into:)``).
    var isGathering = false
    /// While gathering: the requests the batch already holds, beside ``pending``.
    var gatheredCount = 0
    /// ``shutdown()`` was called: no new requests.
    var closed = false
    /// Resumed when the thread has finished its last batch.
    var shutdownWaiter: CheckedContinuation<SystemError?, Never>? = nil
    /// One descriptor per file system (`st_dev`), for `syncfs`.
    var syncDescriptors: [UInt64: Int32] = [:]
    /// The registered file systems whose `syncfs` commits nothing (FUSE): their temporaries
    /// and folders are synced one by one.
    var hollowSyncDevices: Set<UInt64> = []
    /// Resumed when the thread next finds nothing pending (``drain()``).
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Requests done (their completions have run), left for the threads that hand in
    /// requests to let go of (``submit(_:completion:)``): at most ``spentLimit``.
    var spent: [Waiting] = []
  }

  private let state = Lock(State())
  private let wakeup = DispatchSemaphore(value: 0)
  /// Ends a gathering wait early: the batch is full, or the publisher shuts down.
  private let gathered = DispatchSemaphore(value: 0)
  /// One permit per request that may be handed in and not yet done (``capacity``).
  private let permits: DispatchSemaphore
  /// How many requests may be handed in and not yet done at once.
  let capacity: Int
  /// How many requests done may wait for a submitting thread to let go of them
  /// (``State/spent``): ``capacity``, at most 64. Each keeps its temporary's folder open
  /// until then, as it did while it waited.
  let spentLimit: Int
  /// Set when a signal stops the run: pending temporaries are removed, not published. A run
  /// stopped for a full disk does not set it: what was handed in is whole, and is published
  /// (``FullDisk``).
  private let discardRequested: AtomicFlag
  /// Number of `syncfs` calls made (for tests and diagnostics).
  private let syncCount = Atomic<Int>(0)
  /// The file system registered last (``registerFileSystem(_:using:)``), plus one (0:
  /// none yet): nearly every output of a run is on it, so most calls end at this check
  /// without the lock and the table.
  private let lastRegisteredDevice = Atomic<UInt64>(0)
  /// Called on the publisher's thread after each batch's completions have run (and after a
  /// request refused at shutdown), so their owner can act on them once per batch.
  private let afterEachBatch: @Sendable () -> Void

  /// How many requests may wait by default: ``capacity(forDescriptorLimit:)`` of the soft
  /// `RLIMIT_NOFILE` (which squeeze raises toward the hard limit at start:
  /// ``DescriptorTable``), 256 when it cannot be read.
  static var defaultCapacity: Int {
    guard let limit = ProcessControl.openFileLimit else { return 256 }
    return capacity(forDescriptorLimit: limit)
  }

  /// Descriptors a run keeps open beside the publisher's folders: standard descriptors, the
  /// runtime's event descriptors, the arguments' folders, the folder handles kept for the
  /// next file, and each running job's source, temporary and folder. 30 (measured: 13 open
  /// before the first file; 4 kept handles; 3 for each of two jobs; room for a listing
  /// thread's folder, a sync descriptor and a log).
  static let descriptorsBesideQueue: UInt64 = 30

  /// How many requests may wait when the process may open `limit` descriptors: a quarter of
  /// them, between 16 and 1,024 (no limit counts as 4,096); below 64 descriptors, as many as
  /// fit beside ``descriptorsBesideQueue`` with two each, at least one.
  ///
  /// Each waiting request keeps the folder of its temporary open (``FolderHandle``), as does
  /// each request done that waits to be let go of (``spentLimit``, at most as many), so a
  /// tree of many folders holding one small file each never runs out of descriptors while a
  /// sync takes its time. A floor of 16 under a hard limit of 32 (`ulimit -n 32`) failed
  /// most files of such a tree with `EMFILE`.
  static func capacity(forDescriptorLimit limit: UInt64) -> Int {
    guard limit < 64 else { return min(max(Int(min(limit, 4096)) / 4, 16), 1024) }
    let room = limit > descriptorsBesideQueue ? limit - descriptorsBesideQueue : 0
    return max(1, Int(room / 2))
  }

  /// Starts the publishing thread.
  ///
  /// - Parameters:
  ///   - discardRequested: when set (a signal), everything not yet renamed is removed
  ///     instead, and the last commit is not made.
  ///   - capacity: how many requests may be handed in and not yet done; ``submit(_:completion:)``
  ///     waits while that many are.
  ///   - afterEachBatch: called once after each batch's completions (on the publisher's
  ///     thread, or on the submitting thread for a request refused at shutdown).
  ///   - gatherWait: the longest a batch waits for more requests, in microseconds
  ///     (``gatherMicroseconds``; tests set others).
  init(
    discardRequested: AtomicFlag, capacity: Int = Publisher.defaultCapacity,
    afterEachBatch: @escaping @Sendable () -> Void = {},
    gatherWait: Int = Publisher.gatherMicroseconds
  ) {
    self.gatherWait = max(0, gatherWait)
    self.discardRequested = discardRequested
    self.afterEachBatch = afterEachBatch
    self.capacity = max(1, capacity)
    spentLimit = min(self.capacity, 64)
    gatherTarget = min(256, max(1, self.capacity / 2))
    permits = DispatchSemaphore(value: self.capacity)
    SystemThread.start(name: "squeeze-publish") { [self] in
      self.run()
    }
  }

  /// How many times the publisher has called `syncfs` so far.
  var syncsPerformed: Int { syncCount.load(ordering: .relaxed) }

  /// Makes sure a descriptor on the file system `device` is kept for `syncfs`; `descriptor`
  /// (any open file there) is duplicated the first time a device is seen.
  func registerFileSystem(_ device: UInt64, using descriptor: Int32) {
    // A device number of UInt64.max wraps to 0 here and just takes the slow path each time.
    let tag = device &+ 1
    if lastRegisteredDevice.load(ordering: .acquiring) == tag { return }
    let registered = state.withLock { state -> Bool in
      if state.syncDescriptors[device] == nil {
        if let copy = try? Descriptor.duplicate(descriptor) {
          state.syncDescriptors[device] = copy
          if Descriptor.syncFileSystemIsHollow(copy) { state.hollowSyncDevices.insert(device) }
        }
      }
      return state.syncDescriptors[device] != nil
    }
    // Only a device that has its descriptor is skipped next time: a failed `dup` is tried
    // again with the next output there.
    if registered { lastRegisteredDevice.store(tag, ordering: .releasing) }
  }

  /// True when `device` was registered (``registerFileSystem(_:using:)``) and its `syncfs`
  /// commits nothing (FUSE: ``Descriptor/syncFileSystemIsHollow(_:)``), so each new name
  /// there needs an `fsync` of its folder.
  func syncFileSystemIsHollow(on device: UInt64) -> Bool {
    state.withLock { $0.hollowSyncDevices.contains(device) }
  }

  /// Publishes `request` in the next batch; `completion` runs on the publisher thread,
  /// exactly once, when the output is on disk under its final name or has failed.
  ///
  /// While ``capacity`` requests are waiting, this blocks the calling thread until one is
  /// done. The wait always ends: only the publisher's own thread finishes requests, and it
  /// needs no other thread to do so (completions must not call this).
  ///
  /// The calling thread also lets go of up to two requests done earlier (``spentLimit``),
  /// so that the request, its completion and what they hold (the prepared output, its
  /// names) are freed by a thread that allocates the same objects for its next file: into
  /// its own allocator cache, instead of the publisher's thread freeing them into another
  /// thread's arena under that arena's lock.
  func submit(_ request: Request, completion: @escaping @Sendable (Outcome) -> Void) {
    permits.wait()
    enqueue(Waiting(request: request, completion: completion))
  }

  /// Publishes `request`, suspending until it is on disk under its final name or has failed.
  func publish(_ request: Request) async -> Outcome {
    await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      submit(request) { continuation.resume(returning: $0) }
    }
  }

  private func enqueue(_ waiting: Waiting) {
    enum Action { case wake, endGathering, none, refuse }
    // Requests done that this thread lets go of, after the lock (``submit(_:completion:)``).
    var released: (Waiting?, Waiting?) = (nil, nil)
    let action = state.withLock { state -> Action in
      if state.closed { return .refuse }
      state.pending.append(waiting)
      released = (state.spent.popLast(), state.spent.popLast())
      if state.threadIsIdle {
        state.threadIsIdle = false
        return .wake
      }
      if state.isGathering && state.gatheredCount + state.pending.count >= gatherTarget {
        state.isGathering = false
        return .endGathering
      }
      return .none
    }
    switch action {
    case .wake: wakeup.signal()
    case .endGathering: gathered.signal()
    case .none: break
    case .refuse:
      try? waiting.request.temporary.remove()
      resume(waiting, returning: .cancelled)
      afterEachBatch()
    }
    // Let go of here, on the submitting thread, outside the lock.
    withExtendedLifetime(released) {}
  }

  /// A batch this big is published at once; a smaller one waits up to ``gatherWait`` for
  /// more: 256 requests, or half of ``capacity`` when that is less, so the threads handing
  /// requests in are not held at ``capacity`` while a batch gathers.
  let gatherTarget: Int
  /// The longest a batch waits for more requests: 8 ms. Measured on 2 cores, level 6, 11
  /// alternating rounds over 13,586 files of kernel source: with 1 ms batches a run had
  /// 1,421 involuntary and 1,364 voluntary context switches and took 1.08 s (2.11 s of CPU);
  /// with 8 ms, 441 and 287, 1.02 s (2.00 s of CPU). 4 ms was between the two.
  static let gatherMicroseconds = 8_000
  /// This publisher's longest wait for a batch to fill, in microseconds.
  let gatherWait: Int

  /// Returns once every request handed in so far is done (published or failed) and its
  /// completion has run: with `--rm`, the sources of the outputs published are removed.
  /// The thread goes on afterwards; requests may be handed in again.
  func drain() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.closed || (state.pending.isEmpty && state.threadIsIdle) { return true }
        state.idleWaiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// Publishes whatever is pending, commits the renames to disk, and stops the thread;
  /// returns when it has.
  ///
  /// - Returns: the error of the last commit (`syncfs`) when it failed: the renames of the
  ///   last batch may then not be on disk. Nil when it succeeded or a signal stopped the run.
  @discardableResult
  func shutdown() async -> SystemError? {
    await withCheckedContinuation { (continuation: CheckedContinuation<SystemError?, Never>) in
      let (wake, endGathering) = state.withLock { state -> (Bool, Bool) in
        state.closed = true
        state.shutdownWaiter = continuation
        let wasIdle = state.threadIsIdle
        let wasGathering = state.isGathering
        state.threadIsIdle = false
        state.isGathering = false
        return (wasIdle, wasGathering)
      }
      if wake { wakeup.signal() }
      // The last batch need not wait for files that will not come.
      if endGathering { gathered.signal() }
    }
  }

  /// The thread's loop: take everything pending, sync, rename, resume; sleep when idle.
  private func run() {
    // The batch being published. It trades places with the pending array when a batch is
    // taken and is emptied with its capacity kept, so the two arrays serve the whole run.
    var batch: [Waiting] = []
    while true {
      enum Next {
        case batch
        case sleep([CheckedContinuation<Void, Never>])
        case finish(CheckedContinuation<SystemError?, Never>?)
      }
      let next = state.withLock { state -> Next in
        if !state.pending.isEmpty {
          swap(&state.pending, &batch)
          return .batch
        }
        if state.closed { return .finish(state.shutdownWaiter) }
        state.threadIsIdle = true
        defer { state.idleWaiters = [] }
        return .sleep(state.idleWaiters)
      }
      switch next {
      case .batch:
        // Let more finished files arrive: one wake-up and one sync for all of them.
        gather(into: &batch)
        publishBatch(batch)
        // Beyond the limit, the oldest requests done are let go of here.
        _ = setAside(&batch)
        afterEachBatch()
      case .sleep(let drained):
        for waiter in drained { waiter.resume() }
        wakeup.wait()
      case .finish(let waiter):
        // Nothing is handed in any more: the requests done are let go of here, so their
        // folders are closed before the run ends.
        var spent = state.withLock { state -> [Waiting] in
          defer { state.spent = [] }
          return state.spent
        }
        spent.removeAll()
        let failure = discardRequested.isSet ? nil : syncAll(devices: nil).values.first
        let descriptors = state.withLock { state -> [Int32] in
          defer { state.syncDescriptors = [:] }
          return Array(state.syncDescriptors.values)
        }
        for descriptor in descriptors { Descriptor.close(descriptor) }
        let drained = state.withLock { state in
          defer { state.idleWaiters = [] }
          return state.idleWaiters
        }
        for waiting in drained { waiting.resume() }
        waiter?.resume(returning: failure)
        return
      }
    }
  }

  /// True while the thread waits for a batch to fill (for tests).
  var isGathering: Bool { state.withLock { $0.isGathering } }

  /// Adds the requests handed in within ``gatherWait`` to `batch`, returning
  /// sooner when the batch reaches ``gatherTarget`` or the publisher shuts down (at once
  /// when either is already so).
  private func gather(into batch: inout [Waiting]) {
    let waits = state.withLock { state -> Bool in
      guard !state.closed, batch.count + state.pending.count < gatherTarget else { return false }
      state.isGathering = true
      state.gatheredCount = batch.count
      return true
    }
    if waits,
      gathered.wait(timeout: .now() + .microseconds(gatherWait)) == .timedOut
    {
      let signalled = state.withLock { state -> Bool in
        defer { state.isGathering = false }
        return !state.isGathering
      }
      // Whoever ended the gathering as the time ran out signals once: take that signal
      // now, so it cannot end the next gathering early.
      if signalled { gathered.wait() }
    }
    state.withLock { state in
      batch.append(contentsOf: state.pending)
      state.pending.removeAll(keepingCapacity: true)
    }
  }

  /// Moves the requests of `batch`, done, to ``State/spent`` for the submitting threads to
  /// let go of, and empties `batch` (its capacity kept).
  ///
  /// - Returns: the oldest requests done beyond ``spentLimit``, which the caller lets go of
  ///   (outside the lock).
  private func setAside(_ batch: inout [Waiting]) -> [Waiting] {
    let excess = state.withLock { state -> [Waiting] in
      if state.spent.isEmpty {
        swap(&state.spent, &batch)
      } else {
        state.spent.append(contentsOf: batch)
      }
      let over = state.spent.count - spentLimit
      guard over > 0 else { return [] }
      defer { state.spent.removeFirst(over) }
      return Array(state.spent[..<over])
    }
    // Only references go here: each request lives on in `spent` (or in `excess`).
    batch.removeAll(keepingCapacity: true)
    return excess
  }

  /// Syncs the file systems of `batch`, then renames each temporary into place.
  private func publishBatch(_ batch: [Waiting]) {
    if discardRequested.isSet {
      for waiting in batch {
        try? waiting.request.temporary.remove()
        resume(waiting, returning: .cancelled)
      }
      return
    }
    let failures = syncAll(devices: Self.devices(of: batch))
    let hollow = state.withLock { $0.hollowSyncDevices }
    // Requests whose new name must be on disk before they are reported (--rm) wait for a
    // second commit after all the renames.
    var renamedAwaitingSync: [Waiting] = []
    for waiting in batch {
      // Read in place: a local copy of the request retained and released each of its paths
      // and handles.
      // Most batches sync without a failure: no lookup (a hash per file) then.
      if !failures.isEmpty, let error = failures[waiting.request.device] {
        try? waiting.request.temporary.remove()
        resume(waiting, returning: .failed(step: .sync, error))
        continue
      }
      if !hollow.isEmpty && hollow.contains(waiting.request.device) {
        do throws(SystemError) {
          try waiting.request.temporary.sync()
        } catch {
          try? waiting.request.temporary.remove()
          resume(waiting, returning: .failed(step: .sync, error))
          continue
        }
      }
      if waiting.request.holdsTemporary {
        resume(waiting, returning: .published)
        continue
      }
      do {
        try rename(waiting.request)
        // On FUSE the batch's syncfs commits no name: each output's folder is fsynced after
        // its rename, --rm or not, before the output is reported published.
        if waiting.request.syncsAfterRename
          || (!hollow.isEmpty && hollow.contains(waiting.request.device))
        {
          renamedAwaitingSync.append(waiting)
        } else {
          resume(waiting, returning: .published)
        }
      } catch {
        try? waiting.request.temporary.remove()
        let step: Step = error == NoReplaceRename.refused ? .noSafeRename : .rename
        resume(waiting, returning: .failed(step: step, error))
      }
    }
    guard !renamedAwaitingSync.isEmpty else { return }
    // syncfs only where it commits (and only for --rm, as before): a FUSE file system's
    // names are committed by the folder fsyncs below.
    let folderFailures = syncAll(
      devices: Self.devices(
        of: renamedAwaitingSync.filter {
          $0.request.syncsAfterRename && !hollow.contains($0.request.device)
        }))
    // One fsync per folder of the batch (by the folder's descriptor): the result of the
    // first is every later output's there.
    var folderSyncs: [Int32: SystemError?] = [:]
    for waiting in renamedAwaitingSync {
      var folderFailure = folderFailures[waiting.request.device]
      if folderFailure == nil && hollow.contains(waiting.request.device) {
        let folder = waiting.request.temporary.folder.descriptor
        if let earlier = folderSyncs[folder] {
          folderFailure = earlier
        } else {
          do throws(SystemError) {
            try waiting.request.temporary.syncFolder()
            folderSyncs[folder] = .some(nil)
          } catch {
            folderFailure = error
            folderSyncs[folder] = .some(error)
          }
        }
      }
      if let error = folderFailure {
        // The output is in place, but its folder entry may not be on disk: keep the source.
        resume(waiting, returning: .failed(step: .syncFolder, error))
      } else {
        resume(waiting, returning: .published)
      }
    }
  }

  /// The file systems `batch`'s requests are on. A batch is nearly always on one file
  /// system: runs of equal devices are inserted once, not hashed file by file.
  private static func devices(of batch: [Waiting]) -> Set<UInt64> {
    var devices = Set<UInt64>()
    var last: UInt64? = nil
    for waiting in batch where waiting.request.device != last {
      last = waiting.request.device
      devices.insert(waiting.request.device)
    }
    return devices
  }

  /// `syncfs` on each device (all registered devices when nil).
  ///
  /// - Returns: the devices whose sync failed, with the error.
  @discardableResult
  private func syncAll(devices: Set<UInt64>?) -> [UInt64: SystemError] {
    let descriptors = state.withLock { state in
      state.syncDescriptors.filter { devices?.contains($0.key) ?? true }
    }
    var failures: [UInt64: SystemError] = [:]
    for (device, descriptor) in descriptors {
      syncCount.add(1, ordering: .relaxed)
      do throws(SystemError) {
        try Descriptor.syncFileSystem(descriptor)
      } catch {
        failures[device] = error
      }
    }
    if let devices {
      for device in devices where descriptors[device] == nil {
        failures[device] = SystemError.badDescriptor
      }
    }
    return failures
  }

  /// Renames `request`'s temporary to its final name in the folder it was made in
  /// (`renameat2(RENAME_NOREPLACE)` for a new output, or a link and an unlink where the file
  /// system refuses the flag: ``NoReplaceRename``; `renameat` over one squeeze replaces),
  /// through that folder's descriptor: never through a symbolic link put in the folder's
  /// place meanwhile.
  func rename(_ request: Request) throws(SystemError) {
    try request.temporary.rename(
      to: request.final.name, request.replacesExisting ? .replace : .noReplace)
  }
}
