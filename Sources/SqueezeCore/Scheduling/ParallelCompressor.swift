import SqueezeEngines
import SqueezeSystem
import SqueezeTaskLog
import Synchronization

// Design of the parallel part (the three roles of the WWDC22 session's File Squeezer: a
// @MainActor progress reporter, an actor that owns the work, nonisolated compression).
//
// Pipeline. Discovery hands over a `FileList`. `processAll()` walks the files in start order
// (files of several chunks first, largest first, so the biggest work starts early; then the
// rest folder by folder) and creates one child task per file in a discarding task group.
// Before creating a task it takes a compression slot (`WorkSlots`, width `--jobs`),
// so no more files are started than can compress at once, and no task exists merely to
// queue behind a full width. A file of several chunks takes the big-file gate instead: its
// task opens the file and then feeds its chunks, each chunk taking a slot of its own, into a
// nested task group, and writes the compressed chunks in order as they come back (pigz's
// scheme; with `--rsyncable` the chunks' ends come from a `BoundaryScan` thread running at
// most 16 boundaries ahead). The gate opens again as soon as the file's last chunk has
// started, so the next big file, or the small ones, follow without a gap; files and chunks
// share the same slots, which keeps every core busy until the end, however the sizes mix.
// Outputs that are to be hard links of an earlier snapshot's (`--link-dest`) are made the
// same way: in batches of up to 256 files, each batch a task holding one slot and keeping a
// folder pair open while its files follow; a link that falls back is compressed right there.
//
// Each task compresses synchronously (`CompressionJob`, nonisolated: it never touches the
// actor), gives its slot back, waits suspended for the `Publisher` thread to make the output
// durable and rename it into place, then enters this actor once, for a few microseconds, to
// record the outcome. The other isolation modes change only where the synchronous
// compression runs: on the main actor (stage 1), inside this actor (stage 2), in one
// `Task.detached` per file created all at once (the session's literal final code), or as
// here but with the blocking calls on the pool's threads (`blocking`, the session's
// thread-pool exhaustion: ``BlockingReplay``).
//
// Buffers. Every running compression borrows one `CompressionWorkspace` (a zlib stream, a
// dictionary plus one chunk of input, one chunk's deflate bound of output) from a pool for
// one synchronous call; no buffer is shared and none outlives the run. A big file keeps at
// most jobs + 1 compressed chunks waiting to be written. Memory is therefore bounded by the
// width times (one workspace + a few chunks), whatever the file sizes; the file list costs
// ~60 bytes a file plus its name.
//
// Threads. Compression runs on Swift's cooperative pool (as wide as the cores), so `running`
// never exceeds min(jobs, cores); with more jobs than cores the extra work waits `enqueued`
// for a thread, and a task waiting for a slot is `suspended` (reason `slot`). Every state
// change goes through ``TaskTracker``, from the thread where it happens. Nothing that blocks for long runs there: syncs happen on the publisher's own
// thread; the task-state sampler and the main-actor heartbeat have threads of their own; the
// main actor only ever drains coalesced progress.
//
// Errors and cancellation. A file's failure is recorded and the run goes on (one bad file
// never stops a backup), unless its output's file system is full (`FullDisk`: every further
// file would fail alike). A stop request (SIGINT, SIGTERM, SIGHUP, or that first full-disk
// failure) sets the run's stop flag and closes the slots: no new file or chunk starts, and
// running compressions stop at their next chunk and remove their temporaries. After a
// signal the publisher removes whatever it has not renamed yet (`discard`); after a full
// disk it publishes the outputs already whole, so the files finished before the disk
// filled are done, as with `gzip -r`. With `--rm` a full disk pauses the
// run instead (`paused`): no new file starts, the files in flight finish and are published,
// their sources removed, which frees room as `gzip -r` does; then the file that failed is
// tried once more, alone, and the run goes on if it fits, or stops if it does not
// (`retryAfterFreeing`). Every continuation
// (slot waits, publication) is resumed exactly once on every path, so the groups always drain.

/// Owns a run's shared bookkeeping (results, counters, the log) and schedules the
/// compression of a file list: the `actor ParallelCompressor` of the WWDC22 session.
actor ParallelCompressor {
  /// What a run schedules, all of it read-only: the configuration, the files' settings, the
  /// listing, the plan, and the mirror's folders once made.
  struct Work: Sendable {
    /// The run's configuration (width, isolation, chunks, verbosity).
    let configuration: RunConfiguration
    /// Level, destination, force, names: what every file shares.
    let settings: FileSettings
    /// The files.
    let list: FileList
    /// The folders the files are relative to.
    let bases: BaseDirectories
    /// What becomes of each file.
    let plan: RunPlan
    /// The mirror plan once its folders were made (files in folders that could not be are
    /// left out), or nil.
    let folders: MirrorPlan?

    /// How many compressions (files or chunks) at once (`--jobs`).
    var jobs: Int { configuration.jobs }
    /// Bytes per chunk (`--block-size`, or the engine's default).
    var chunkSize: Int { configuration.chunkSize }

    /// File `index`'s disposition: the plan's, or left out when its mirror folder could
    /// not be made.
    func disposition(of index: Int) -> FileDisposition {
      plan.disposition(of: index, in: list, folders: folders)
    }
  }

  /// What the run schedules.
  nonisolated let work: Work
  /// The decisions the isolation mode makes (``SchedulingStrategy``).
  nonisolated let strategy: SchedulingStrategy
  /// Task-state counters and log (atomics: read without entering the actor).
  nonisolated let tracker: TaskTracker
  /// Progress for the reporter.
  nonisolated let feed: ProgressFeed
  /// Set to stop the run (signals, a full disk): no new file or chunk starts.
  nonisolated let stop: AtomicFlag
  /// Set when a signal stops the run: the outputs not yet renamed are removed, not
  /// published (``Publisher``). A full disk leaves it clear.
  nonisolated let discard = AtomicFlag()
  /// Bounds compressions (files and chunks) in flight to `jobs`.
  nonisolated let slots: WorkSlots
  /// Lets one file of several chunks feed its chunks at a time.
  nonisolated let bigFileGate = WorkSlots(width: 1)
  /// Makes outputs durable and renames them into place.
  nonisolated let publisher: Publisher
  /// Compressors and buffers, one per running compression.
  nonisolated let workspaces: WorkspacePool
  /// Buffers for chunks of big files restored in parallel, one per chunk in flight.
  nonisolated let chunkBuffers: ChunkBufferPool
  /// The per-run context every file job reads.
  nonisolated let context: JobContext

  /// Set while a full disk pauses a `--rm` run (``retriesAfterFreeing``): no new file
  /// starts until the files in flight are published and the failed file is tried again.
  nonisolated let paused = Atomic<Bool>(false)
  /// True when no new file may start: the run is stopping, or paused for a full disk.
  nonisolated var halted: Bool { stop.isSet || paused.load(ordering: .acquiring) }
  /// `--rm`: a full disk pauses the run to let the sources of whole outputs go, then
  /// retries the file that failed once, where without `--rm` it stops the run at once.
  nonisolated var retriesAfterFreeing: Bool { work.settings.removesSources }

  /// What happened to each file so far.
  private var results = RunResults()
  /// With ``retriesAfterFreeing``: the files that have an outcome of their own (done, up
  /// to date, failed for a cause other than a full disk), by index; empty otherwise.
  private var concluded: [Bool] = []
  /// With ``retriesAfterFreeing``: files that failed for a full disk since the last pause,
  /// in the order they failed, not yet counted as failed.
  private var awaitingRetry: [(file: Int, failure: FileFailure)] = []
  /// With ``retriesAfterFreeing``: the source bytes each file in flight has added to the
  /// progress (``addBytes(_:of:)``), by file index, so that a file tried again takes back
  /// what its failed attempt counted and its bytes are counted once. Empty otherwise.
  nonisolated let bytesInFlight = Lock<[Int: Int64]>([:])
  /// The output of the file done last, named if the run's last commit fails.
  private var lastPublished: MessagePath? = nil
  /// Finished files' outcomes on their way to ``results``.
  nonisolated let outcomes: OutcomeChannel

  /// The actor's own serial executor: a thread of its own, so entering the actor never waits
  /// for a thread of the cooperative pool, which compression keeps busy. Measured on 2 cores
  /// with 2,079 files: on the default executor up to 627 tasks queued to record their outcome
  /// (the actor's drain job waits behind compression jobs in the pool's queue); on its own
  /// thread the queue stays at 0 apart from bursts when a publication batch completes.
  private nonisolated let executor = ThreadExecutor(name: "squeeze-actor")

  /// Runs the actor on ``executor`` (SE-0392, custom actor executors).
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  /// Prepares a run.
  ///
  /// - Parameters:
  ///   - work: files, plan, destination, width, isolation.
  ///   - tracker: counters and task log.
  ///   - feed: where progress goes.
  ///   - stop: the run's stop flag.
  ///   - namer: temporary names.
  init(
    work: Work, tracker: TaskTracker, feed: ProgressFeed, stop: AtomicFlag, namer: TemporaryNamer
  ) {
    self.work = work
    strategy = work.configuration.isolation.strategy
    self.tracker = tracker
    self.feed = feed
    self.stop = stop
    slots = WorkSlots(width: work.jobs)
    let outcomes = OutcomeChannel()
    self.outcomes = outcomes
    // The publisher's completions post their outcomes without waking the actor
    // (`handOver`); one wake-up after each batch records them all.
    publisher = Publisher(discardRequested: discard, afterEachBatch: { outcomes.wake() })
    workspaces = WorkspacePool(
      engine: work.settings.engine, level: work.settings.level,
      chunking: work.configuration.chunking)
    chunkBuffers = ChunkBufferPool(
      capacity: ParallelCompressor.restoredChunkCap(chunkSize: work.chunkSize))
    context = JobContext(
      list: work.list, bases: work.bases, settings: work.settings, namer: namer,
      publisher: publisher, workspaces: workspaces,
      decoders: DecoderPool(engine: work.settings.engine), stop: stop,
      cleaner: TemporaryCleaner(namer: namer), plan: work.plan)
  }

  /// Stops the run for a signal: no new file or chunk starts, running ones stop at their
  /// next chunk, and the outputs not yet renamed are removed (``discard``).
  nonisolated func requestStop() {
    discard.set()
    stopStarting()
  }

  /// Stops the run for a full disk (``FullDisk``): no new file or chunk starts, running ones
  /// stop at their next chunk; the outputs already whole are still published.
  nonisolated func stopStarting() {
    stop.set()
    slots.close()
    bigFileGate.close()
  }

  /// True when file `index` is compressed (or restored, or tested) chunk-parallel: more
  /// than one chunk (compressed: more than one chunk's worth of compressed bytes), where the
  /// strategy splits big files (the isolated stages work on a whole file inside their
  /// isolation, as the session's code does).
  nonisolated func usesParallelChunks(_ index: Int) -> Bool {
    strategy.splitsBigFiles
      && work.list.files[index].size > Int64(work.chunkSize)
      && !isStored(index)
  }

  /// True when file `index` is copied as stored blocks (a compressed name in a mirror): one
  /// sequential copy, never split into chunks.
  nonisolated func isStored(_ index: Int) -> Bool {
    let list = work.list
    return work.settings.stores(list.name(of: list.files[index]))
  }

  /// The most bytes a chunk restored ahead of its turn may decode to: 4x the chunk size
  /// (at least 4x the fast engine's 1 MiB, so files it wrote restore in parallel whatever
  /// `--engine` restores them; `--rsyncable` chunks are at most 2x). A chunk that decodes to
  /// more is decoded serially instead: memory stays bounded on hostile input (a bomb with
  /// sync markers).
  static func restoredChunkCap(chunkSize: Int) -> Int {
    4 * max(chunkSize, Engine.fast.defaultChunkSize)
  }

  /// The order files are started in: files of several chunks first, largest first, then
  /// the rest in listing order (folder by folder, for locality).
  nonisolated func startOrder() -> [Int] {
    let files = work.list.files
    let threshold = Int64(work.chunkSize)
    let big = files.indices.filter { files[$0].size > threshold }
      .sorted { files[$0].size > files[$1].size }
    let small = files.indices.filter { files[$0].size <= threshold }
    return big + small
  }

  /// Compresses (or restores, or tests) every file and returns what happened, once every
  /// output is published (or removed, when stopped).
  @concurrent
  nonisolated func processAll() async -> RunResults {
    let order = startOrder()
    await recordAlreadyCurrent()
    async let recorded: Void = recordOutcomes()
    await start(order)
    if retriesAfterFreeing { await retryAfterFreeing(order) }
    // Every output is published (or removed) and its outcome posted.
    let lastCommit = await publisher.shutdown()
    context.outputFolders.closeAll()
    outcomes.finish()
    await recorded
    if let lastCommit { await failLastCommit(lastCommit) }
    return await finish()
  }

  /// Starts `files` (in that order) as the isolation mode does, and returns when each has
  /// been worked on and handed to the publisher.
  private nonisolated func start(_ files: [Int]) async {
    switch strategy.start {
    case .allAtOnce: await runDetached(files)
    case .bounded: await runBounded(files)
    }
  }

  /// `--rm` on a full disk: while a file's output found no room (``paused``), waits until
  /// every output in flight is published and its source removed, then works on the first
  /// file that failed again, alone: if it fits now the run goes on with the files not done
  /// (and pauses again at the next full disk); if not, the run stops there, as it does
  /// without `--rm`. Each pass finishes at least one file or stops, so this ends.
  ///
  /// - Parameter order: every file, in start order.
  private nonisolated func retryAfterFreeing(_ order: [Int]) async {
    while !stop.isSet {
      // The last outputs handed over may find no room only now, as they are published.
      await publisher.drain()
      guard paused.load(ordering: .acquiring), !stop.isSet else { return }
      let waiting = await takeRetries()
      paused.store(false, ordering: .releasing)
      guard let first = waiting.first else {
        await start(await notConcluded(order))
        continue
      }
      await start([first.file])
      await publisher.drain()
      if let again = await takeRetries().first(where: { $0.file == first.file }) {
        await giveUp(again.file, again.failure)
        return
      }
      if stop.isSet { return }
      await start(await notConcluded(order))
    }
  }

  /// Records the outcomes posted so far, then hands over (and forgets) the files waiting to
  /// be tried again.
  private func takeRetries() -> [(file: Int, failure: FileFailure)] {
    var batch: [OutcomeChannel.Entry] = []
    outcomes.drain(into: &batch)
    for position in batch.indices { record(batch[position].outcome, file: batch[position].file) }
    defer { awaitingRetry = [] }
    return awaitingRetry
  }

  /// The files of `order` without an outcome of their own yet.
  private func notConcluded(_ order: [Int]) -> [Int] {
    order.filter { !concluded[$0] }
  }

  /// File `index` found no room even alone, after the outputs in flight freed what they
  /// could: it fails, and the run stops for a full disk (``FullDisk``).
  private func giveUp(_ index: Int, _ failure: FileFailure) {
    stopStarting()
    results.failures.append((displayPath(of: index), failure))
    results.failedFiles.insert(index)
    feed.fileDone(failed: true)
    if results.fullDisk == nil {
      results.fullDisk = FullDisk(file: displayPath(of: index), failure: failure)
    }
  }

  /// True when `failure`, a full disk, is tried again once room is freed (`--rm`): it left
  /// no output under the final name. An output in place whose folder could not be synced
  /// (``Publisher/Step/syncFolder``) is not: trying again would find it there and keep the
  /// source, so the run stops on it as without `--rm`.
  nonisolated func retries(_ failure: FileFailure) -> Bool {
    guard retriesAfterFreeing, failure.outOfSpaceOutput != nil else { return false }
    if case .cannotPublish(_, .syncFolder, _) = failure { return false }
    return true
  }

  /// Stops the run for `failure`, a full disk: at once (``stopStarting()``), or when it is
  /// tried again (``retries(_:)``) pauses it (``paused``) so the files in flight can free
  /// their sources' room first.
  nonisolated func stopForFullDisk(_ failure: FileFailure) {
    if retries(failure) {
      paused.store(true, ordering: .releasing)
    } else {
      stopStarting()
    }
  }

  /// The last commit of the run's renames failed: the outputs published last may not be on
  /// disk under their names, so the run fails, naming the last of them.
  private func failLastCommit(_ error: SystemError) {
    let failure = DiscoveryFailure(
      path: lastPublished?.path ?? "",
      cause: "cannot sync the last outputs' names to disk: \(error)")
    results.entryFailures.append(failure)
    if error.isOutOfSpace {
      // A full disk, said once in the run's full-disk line (status 74), not here.
      if results.fullDisk == nil {
        results.fullDisk = FullDisk(
          path: failure.path, error: error,
          cause: "'\(failure.path.displayString)': \(failure.cause)")
      }
      return
    }
    // Not a file's outcome, so not one the reporter's FileMessages say: the run's own line.
    feed.message("squeeze: \(failure)")
  }

  /// Records the files the plan found current (``FileOutcome/alreadyCurrent``) in one
  /// entry into the actor, before any file starts. Posting each through the outcome channel
  /// queued them all at once: 52 MB of outcomes for a re-run over 100,000 current files.
  private func recordAlreadyCurrent() {
    if retriesAfterFreeing { concluded = Array(repeating: false, count: work.list.files.count) }
    for index in work.list.files.indices where work.disposition(of: index) == .upToDate {
      record(.alreadyCurrent, file: index)
    }
  }

  /// Records outcomes as they arrive, a batch per entry into the actor.
  private func recordOutcomes() async {
    // Emptied after each batch and handed back to the channel, keeping its capacity.
    var batch: [OutcomeChannel.Entry] = []
    func recordBatch() {
      outcomes.drain(into: &batch)
      // Each entry read in place: `for entry in batch` copied every outcome out first.
      for position in batch.indices { record(batch[position].outcome, file: batch[position].file) }
      batch.removeAll(keepingCapacity: true)
    }
    while await outcomes.nextWake() { recordBatch() }
    recordBatch()
  }

  /// What a file's task holds when it starts.
  enum Holding: Sendable {
    /// A compression slot, given back after compressing.
    case slot
    /// The big-file gate, given back once the last chunk has started.
    case gate
    /// Nothing (`detached`).
    case nothing
  }

  /// Starts each file when a slot (or the big-file gate) is free: at most `jobs`
  /// compressions at once.
  ///
  /// In the `nonisolated` mode, small files go in batches (see ``SmallFileBatch``): one
  /// child task and one slot for up to 64 files, so a folder of tiny files does not pay a
  /// task creation and two thread hand-offs per file. Each file still has its own task in the
  /// task-state log. Small files whose outputs are to be hard links of an earlier snapshot's
  /// (`--link-dest`) go in batches of their own (``runLinks(_:)``), so the links are made on
  /// the workers, as many at once as there are slots, not one at a time here.
  private nonisolated func runBounded(_ order: [Int]) async {
    await withDiscardingTaskGroup { group in
      var batch = SmallFileBatch()
      var links: [Int] = []
      func startBatch() async -> Bool {
        guard !batch.isEmpty else { return true }
        let files = batch.take()
        guard await slots.acquire() else { return false }
        guard !halted else {
          slots.release()
          return false
        }
        group.addTask { await self.runBatch(files) }
        return true
      }
      func startLinks() async -> Bool {
        guard !links.isEmpty else { return true }
        let files = links
        links = []
        guard await slots.acquire() else { return false }
        guard !halted else {
          slots.release()
          return false
        }
        group.addTask { await self.runLinks(files) }
        return true
      }
      /// Starts a file of one chunk (in a batch in the `nonisolated` mode).
      func startSmall(_ index: Int) async -> Bool {
        if strategy.batchesSmallFiles, case .link = work.disposition(of: index) {
          links.append(index)
          return links.count >= SnapshotLinks.batchSize ? await startLinks() : true
        }
        guard await admit(index) else { return true }
        if strategy.batchesSmallFiles {
          batch.append(index, size: work.list.files[index].size)
          return batch.isFull ? await startBatch() : true
        }
        guard await slots.acquire() else { return false }
        guard !halted else {
          slots.release()
          return false
        }
        let task = tracker.create(id: index + 1, file: displayPath(of: index))
        group.addTask { await self.run(task, index: index, holding: .slot) }
        return true
      }
      var small = order.filter { !usesParallelChunks($0) }[...]
      for index in order where usesParallelChunks(index) {
        guard await admit(index) else { continue }
        // While the file before feeds its chunks, small files start too (they share the
        // slots with its chunks), so the file counter moves from the start even when the
        // largest files go first.
        var admitted = bigFileGate.tryAcquire()
        while !admitted, let next = small.popFirst() {
          guard await startSmall(next) else { return }
          admitted = bigFileGate.tryAcquire()
        }
        if !admitted { admitted = await bigFileGate.acquire() }
        guard admitted else { return }
        guard !halted else {
          bigFileGate.release()
          return
        }
        let task = tracker.create(id: index + 1, file: displayPath(of: index))
        group.addTask {
          await self.run(task, index: index, holding: .gate)
        }
      }
      for index in small {
        guard await startSmall(index) else { return }
      }
      guard await startLinks() else { return }
      _ = await startBatch()
    }
  }

  /// Small files run one after another in one task holding one slot. Each file's task is
  /// created when its turn comes, and runs at once on the batch's thread.
  private nonisolated func runBatch(_ files: [Int]) async {
    for index in files {
      // Files left when the run pauses for a full disk start again afterwards.
      if halted { break }
      processInBatch(index)
    }
    slots.release()
  }

  /// Works on file `index` in a batch's task: its own task in the task-state log, created
  /// now and run at once on the batch's thread.
  private nonisolated func processInBatch(_ index: Int) {
    let task = tracker.create(id: index + 1, file: displayPath(of: index))
    task.run()
    if strategy.blocksPoolThreads {
      BlockingReplay.dropCachedPages(of: index, context: context)
    }
    handOver(processHere(index), task: task, index: index)
  }

  /// Makes the planned hard links of small files (`--link-dest`), one after another in one
  /// task holding one slot, keeping each folder pair open while its files follow
  /// (``SnapshotLinks/OpenFolders``). Each outcome is posted as ``admit(_:)`` posts it, the
  /// actor woken once at the end; a link that falls back has its file compressed here, in
  /// the slot the batch holds. A linked file has no task in the task-state log: nothing is
  /// compressed for it.
  private nonisolated func runLinks(_ files: [Int]) async {
    var folders = SnapshotLinks.OpenFolders()
    for index in files {
      if stop.isSet { break }
      guard case .link(let source) = work.disposition(of: index) else { continue }
      switch SnapshotLinks.link(
        index, from: source, list: work.list, settings: work.settings, bases: work.bases,
        folders: &folders)
      {
      case .linked:
        feed.addBytes(Int(clamping: work.list.files[index].size))
        outcomes.post(OutcomeChannel.Entry(file: index, outcome: .linked(source)), wakes: false)
      case .fallBack(let error):
        outcomes.post(
          OutcomeChannel.Entry(file: index, outcome: .linkFellBack(error)), wakes: false)
        processInBatch(index)
      case .failed(let failure):
        tracker.failedBeforeStart(
          id: index + 1, file: displayPath(of: index), error: failure.description)
        outcomes.post(OutcomeChannel.Entry(file: index, outcome: .failed(failure)), wakes: false)
      }
    }
    outcomes.wake()
    slots.release()
  }

  /// The session's literal final code: one `Task.detached` per file, all created at once,
  /// no bound on how many wait.
  private nonisolated func runDetached(_ order: [Int]) async {
    var handles: [Task<Void, Never>] = []
    handles.reserveCapacity(order.count)
    for index in order {
      guard await admit(index) else { continue }
      if halted { break }
      let task = tracker.create(id: index + 1, file: displayPath(of: index))
      handles.append(
        Task.detached {
          await self.run(task, index: index, holding: .nothing)
        })
    }
    for handle in handles { await handle.value }
  }

  /// True when file `index` is to be worked on; false for files left out, up to date
  /// (recorded before the start), failing before starting (recorded here), or whose output
  /// is now a hard link of an earlier snapshot's (linked here in the modes that do not batch
  /// small files, and for big files; a link that cannot be made leaves the file to
  /// compress).
  private nonisolated func admit(_ index: Int) async -> Bool {
    switch work.disposition(of: index) {
    case .work: return true
    case .leftOut, .upToDate: return false
    case .link(let source):
      var folders = SnapshotLinks.OpenFolders()
      switch SnapshotLinks.link(
        index, from: source, list: work.list, settings: work.settings, bases: work.bases,
        folders: &folders)
      {
      case .linked:
        feed.addBytes(Int(clamping: work.list.files[index].size))
        outcomes.post(OutcomeChannel.Entry(file: index, outcome: .linked(source)))
        return false
      case .fallBack(let error):
        outcomes.post(OutcomeChannel.Entry(file: index, outcome: .linkFellBack(error)))
        return true
      case .failed(let failure):
        tracker.failedBeforeStart(
          id: index + 1, file: displayPath(of: index), error: failure.description)
        outcomes.post(OutcomeChannel.Entry(file: index, outcome: .failed(failure)))
        return false
      }
    case .fails(let failure):
      tracker.failedBeforeStart(
        id: index + 1, file: displayPath(of: index), error: failure.description)
      outcomes.post(OutcomeChannel.Entry(file: index, outcome: .failed(failure)))
      return false
    }
  }

  /// Adds `count` source bytes of file `index` to the progress; with
  /// ``retriesAfterFreeing``, also to the file's tally (``bytesInFlight``), which its
  /// outcome settles (``settleBytes(of:retried:)``).
  nonisolated func addBytes(_ count: Int, of index: Int) {
    feed.addBytes(count)
    if retriesAfterFreeing {
      bytesInFlight.withLock { $0[index, default: 0] += Int64(count) }
    }
  }

  /// Forgets file `index`'s tally of progress bytes now that its attempt has an outcome;
  /// when the file is to be tried again (`retried`), takes them back from the progress,
  /// which the next attempt counts afresh.
  private func settleBytes(of index: Int, retried: Bool) {
    let counted = bytesInFlight.withLock { $0.removeValue(forKey: index) } ?? 0
    if retried && counted > 0 { feed.addBytes(-Int(clamping: counted)) }
  }

  /// File `index`'s path as the user would write it. Built only for a message or the
  /// task-state log: most files never need it.
  nonisolated func displayPath(of index: Int) -> RawPath {
    work.list.displayPath(of: work.list.files[index])
  }

  /// What working on a file came to, before publication.
  enum Processed: Sendable {
    /// An output is ready to publish.
    case prepared(PreparedOutput)
    /// The existing output is current (compression re-runs).
    case upToDate(bytes: Int64)
    /// The file checked out (`-t`).
    case verified(bytesIn: Int64, bytesOut: Int64)
  }

  /// One file's task: work where the isolation mode says, give the slot back, and hand the
  /// output to the publisher, which finishes the file (the task does not wait for it).
  ///
  /// In the isolated stages the task hops onto the actor or the main actor (it waits
  /// `enqueued` there), runs and hands its output over inside that isolation; only giving
  /// the slot back is left for its way out.
  private nonisolated func run(_ task: TrackedTask, index: Int, holding: Holding) async {
    switch strategy.place {
    case .fileTask:
      task.run()
      if strategy.blocksPoolThreads {
        BlockingReplay.dropCachedPages(of: index, context: context)
      }
      // A big file holds the big-file gate (bounded) or nothing (all at once).
      if holding == .gate || (holding == .nothing && usesParallelChunks(index)) {
        let bounded = holding == .gate
        let (processed, _) =
          work.settings.operation == .compress
          ? await compressInParallelChunks(index, task: task, bounded: bounded)
          : await restoreInParallelChunks(index, task: task, bounded: bounded)
        handOver(processed, task: task, index: index)
      } else {
        let processed = processHere(index)
        if holding == .slot { slots.release() }
        handOver(processed, task: task, index: index)
      }
    case .insideActor:
      task.enqueue(on: .actor)
      await processInsideActor(index, task: task)
      if holding == .slot { slots.release() }
    case .mainActor:
      task.enqueue(on: .mainActor)
      await MainActorWork.process(index, task: task, compressor: self)
      if holding == .slot { slots.release() }
    }
  }

  /// Hands a processed file's output to the publisher, which finishes the file (nobody
  /// waits for it: the task is `suspended` for its publication until the publisher's
  /// completion ends it), or ends the file's task at once. With `--isolation blocking` the
  /// output is made durable and renamed here, on the calling thread (``BlockingReplay``).
  nonisolated func handOver(
    _ processed: Result<Processed, FileFailure>, task: TrackedTask, index: Int
  ) {
    switch processed {
    case .success(.prepared(let ready)):
      if strategy.blocksPoolThreads {
        let publication = BlockingReplay.publish(
          ready.request, publisher: publisher, discard: discard)
        conclude(task, index: index, outcome(of: ready, publication))
        return
      }
      task.suspend(.publication)
      publisher.submit(ready.request) { publication in
        // On the publisher's thread, once the output is on disk (or not); the publisher
        // wakes the actor once after the batch (`afterEachBatch`).
        self.conclude(task, index: index, self.outcome(of: ready, publication), wakes: false)
      }
    case .success(.upToDate(let bytes)):
      conclude(task, index: index, .upToDate(bytes: bytes))
    case .success(.verified(let bytesIn, let bytesOut)):
      conclude(task, index: index, .verified(bytesIn: bytesIn, bytesOut: bytesOut))
    case .failure(let failure):
      conclude(task, index: index, .failed(failure))
    }
  }

  /// Ends a file's task with its outcome and posts the outcome to the actor (waking it
  /// unless `wakes` is false: the publisher's thread wakes it after each batch).
  private nonisolated func conclude(
    _ task: TrackedTask, index: Int, _ outcome: consuming FileOutcome, wakes: Bool = true
  ) {
    switch outcome {
    case .failed(let failure):
      task.fail(failure.description, file: self.displayPath(of: index))
      // A full file system stops the run at once, here on the worker, so the rest of a
      // batch of small files does not fail alike first; `record` says why (FullDisk).
      if failure.outOfSpaceOutput != nil { stopForFullDisk(failure) }
    case .done(_, _, _, .failed(let error)?, _):
      task.fail(FileFailure.cannotRemove(error).description, file: self.displayPath(of: index))
    default:
      task.finish()
    }
    outcomes.post(OutcomeChannel.Entry(file: index, outcome: outcome), wakes: wakes)
  }

  /// What a publication came to, with the source removed when asked (`--rm`).
  private nonisolated func outcome(of ready: PreparedOutput, _ publication: Publisher.Outcome)
    -> FileOutcome
  {
    switch publication {
    case .published:
      // A held output's source is removed once the output has taken its place.
      let removal =
        ready.held == nil
        ? ready.removal.map {
          SourceRemoval.remove($0, force: work.settings.force)
        } : nil
      return .done(
        bytesIn: ready.bytesIn, bytesOut: ready.bytesOut, output: ready.outputDisplay,
        removal: removal, held: ready.held)
    case .failed(.rename, let error) where error == .fileExists:
      // Another run (cron overlap) published this output first.
      if let recheck = ready.recheck, recheck.isUpToDate() {
        return .upToDate(bytes: ready.bytesIn)
      }
      return .failed(
        ready.recheck == nil
          ? .outputAlreadyExists(ready.outputDisplay.path)
          : .outputAppeared(ready.outputDisplay.path))
    case .failed(let step, let error):
      return .failed(.cannotPublish(ready.outputDisplay.path, step, error))
    case .cancelled:
      return .failed(.interrupted)
    }
  }

  /// Works on file `index` on the calling thread, whatever actor that is: the synchronous,
  /// nonisolated core every mode runs.
  nonisolated func processHere(_ index: Int) -> Result<Processed, FileFailure> {
    let progress: (Int) -> Void = { self.addBytes($0, of: index) }
    do throws(FileFailure) {
      switch work.settings.operation {
      case .compress:
        switch try CompressionJob.open(index: index, context: context) {
        case .upToDate(let bytes):
          return .success(.upToDate(bytes: bytes))
        case .job(let job) where job.storesOnly:
          return .success(.prepared(try job.compressStored(progress: progress)))
        case .job(let job):
          let prepared = try workspaces.withWorkspace { (workspace) throws(FileFailure) in
            try job.compressSerially(workspace: workspace, progress: progress)
          }
          return .success(.prepared(prepared))
        }
      case .decompress:
        return .success(
          .prepared(try DecompressionJob.run(index: index, context: context, progress: progress)))
      case .test:
        let (bytesIn, bytesOut) = try TestJob.run(
          index: index, context: context, progress: progress)
        return .success(.verified(bytesIn: bytesIn, bytesOut: bytesOut))
      }
    } catch {
      return .failure(error)
    }
  }

  /// Stage 2 of the session: the work runs inside this actor's isolation, so files go one at
  /// a time and every other task waits enqueued on the actor. The output is handed over
  /// here too, so the task leaves the actor suspended for its publication (or done).
  private func processInsideActor(_ index: Int, task: TrackedTask) {
    task.run()
    handOver(processHere(index), task: task, index: index)
  }

  /// Records one file's outcome: results and progress. The outcomes that can print a line
  /// go on to the progress reporter, which says them (``FileMessages``): the actor writes no
  /// message of its own.
  ///
  /// - Parameters:
  ///   - outcome: what happened.
  ///   - index: the file.
  private func record(_ outcome: FileOutcome, file index: Int) {
    if retriesAfterFreeing {
      switch outcome {
      case .failed(let failure) where retries(failure):
        // Not this file's failure yet: it is tried again once room is freed, and that
        // attempt's bytes are the ones the progress counts.
        settleBytes(of: index, retried: true)
        awaitingRetry.append((index, failure))
        return
      case .failed(.interrupted):
        settleBytes(of: index, retried: false)
      case .linkFellBack: break
      default:
        settleBytes(of: index, retried: false)
        concluded[index] = true
      }
    }
    switch outcome {
    case .done(let bytesIn, let bytesOut, let output, let removal, let held):
      if let held { results.held.append((index, held)) }
      lastPublished = output
      results.done += 1
      results.bytesIn += bytesIn
      results.bytesOut += bytesOut
      feed.fileDone(failed: false)
      if work.settings.operation == .compress && bytesIn > 0 && bytesOut > bytesIn {
        results.grown += 1
      }
      if work.settings.operation == .compress && isStored(index) {
        results.stored.add(bytesIn: bytesIn, bytesOut: bytesOut)
      }
      switch removal {
      case nil, .alreadyGone: break
      case .removed: results.removed += 1
      case .keptHardLinked: results.keptHardLinked += 1
      case .keptChanged: results.keptChanged += 1
      case .failed(let error):
        results.failures.append((displayPath(of: index), .cannotRemove(error)))
      }
    case .upToDate(let bytes):
      results.upToDate += 1
      results.bytesUpToDate = results.bytesUpToDate.addingSaturated(bytes)
      feed.fileDone(failed: false)
    case .linked:
      results.linked += 1
      results.bytesLinked = results.bytesLinked.addingSaturated(work.list.files[index].size)
      feed.fileDone(failed: false)
    case .linkFellBack:
      // The file is compressed now, and that outcome counts it: this one only says why.
      results.linkFallbacks += 1
    case .alreadyCurrent:
      // Found current by the plan: counted apart, never part of the progress totals.
      results.upToDate += 1
      results.bytesUpToDate = results.bytesUpToDate.addingSaturated(
        work.list.files[index].size)
    case .verified(let bytesIn, let bytesOut):
      results.done += 1
      results.bytesIn += bytesIn
      results.bytesOut += bytesOut
      feed.fileDone(failed: false)
    case .failed(.interrupted):
      // Not a failure of the file: the run is stopping. Not counted as done either.
      results.interrupted = true
    case .failed(let failure):
      results.failures.append((displayPath(of: index), failure))
      results.failedFiles.insert(index)
      feed.fileDone(failed: true)
      if failure.outOfSpaceOutput != nil {
        // Every further file would fail the same way: stop starting files (FullDisk).
        if results.fullDisk == nil {
          results.fullDisk = FullDisk(file: displayPath(of: index), failure: failure)
          stopStarting()
        } else {
          results.fullDisk?.failedFiles += 1
        }
      }
    }
    if FileMessages.mayPrint(outcome, verbosity: work.configuration.verbosity) {
      feed.outcome(of: index, outcome)
    }
  }

  private func finish() -> RunResults {
    if stop.isSet { results.interrupted = true }
    return results
  }
}

/// Consecutive small files started together (`nonisolated` mode): at most
/// ``maximumFiles`` files or ``maximumBytes`` bytes, so a batch takes about as long as a
/// chunk of a big file and the slots stay fair.
struct SmallFileBatch {
  /// Most files in a batch.
  static let maximumFiles = 64
  /// Most source bytes in a batch: 512 KiB.
  static let maximumBytes: Int64 = 512 * 1024

  private var files: [Int] = []
  private var bytes: Int64 = 0

  var isEmpty: Bool { files.isEmpty }
  var isFull: Bool { files.count >= Self.maximumFiles || bytes >= Self.maximumBytes }

  mutating func append(_ index: Int, size: Int64) {
    files.append(index)
    bytes += size
  }

  /// Empties the batch, returning its files.
  mutating func take() -> [Int] {
    defer {
      files = []
      bytes = 0
    }
    return files
  }
}

/// Stage 1 of the session: the work (compressing, restoring or testing) on the main actor,
/// inside the progress reporter's isolation, so the main actor is blocked for as long as
/// each file takes.
@MainActor
enum MainActorWork {
  /// Works on file `index` on the main actor and hands its output over there, so the task
  /// leaves the main actor suspended for its publication (or done).
  static func process(_ index: Int, task: TrackedTask, compressor: ParallelCompressor) {
    task.run()
    compressor.handOver(compressor.processHere(index), task: task, index: index)
  }
}

/// `1 - out/in` as a percentage, gzip's "saved" figure.
func savedPercent(_ bytesIn: Int64, _ bytesOut: Int64) -> String {
  guard bytesIn > 0 else { return "0.0 %" }
  return ByteFormat.fixed((1 - Double(bytesOut) / Double(bytesIn)) * 100, 1) + " %"
}
