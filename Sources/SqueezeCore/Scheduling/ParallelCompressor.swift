import Glibc

// Design of the parallel part (the WWDC22 File Squeezer's three roles, spec §2).
//
// Pipeline. Discovery hands over a `FileList`. `compressAll()` walks the files in order
// (largest big files first, so the biggest work starts early) and, for each, takes a
// compression slot (`CompressionSlots`, width `--jobs`) *before* creating the file's child
// task in a discarding task group: the number of compressions started at once never exceeds
// the width, and no task exists that is merely queued behind a full width. The child task
// compresses the file synchronously (`FileCompressor`, nonisolated; it never touches the
// actor), gives the slot back, waits suspended for the `Publisher` thread to make the
// output durable and rename it into place, then enters this actor once to record the
// outcome: a few microseconds of bookkeeping.
//
// Buffers. Each running compression borrows one `CompressionWorkspace` (zlib stream, 128 KiB
// input and ~200 KiB output buffers) from a pool for the duration of one synchronous call;
// no buffer is shared, no buffer outlives the run. Memory is bounded by the width times one
// workspace, whatever the file sizes; the file list costs ~60 bytes a file plus its name.
//
// Threads. Compression runs on Swift's cooperative pool (as wide as the cores), so
// `running` never exceeds min(jobs, cores); with more jobs than cores the extra tasks wait
// `enqueued` for a thread. Nothing that blocks for long runs there: the syncs happen on the
// publisher's own thread, and the main actor, where the progress reporter lives, only ever
// drains coalesced progress. Discovery runs before, on a pool thread.
//
// Errors and cancellation. A file's failure is recorded and the run goes on (spec §4). A stop
// request (SIGINT, SIGTERM, SIGHUP) sets the run's stop flag: no new file is started,
// running compressions stop at their next buffer and remove their temporaries, and the
// publisher removes whatever it has not renamed yet. Every continuation (slot waits,
// publication) is resumed exactly once on every path, so the task group always drains.

/// Owns a run's shared bookkeeping (results, counters, the log) and schedules the
/// compression of a file list: the `actor ParallelCompressor` of the WWDC22 session.
actor ParallelCompressor {
  /// Everything a run shares, immutable.
  struct Configuration: Sendable {
    /// The files and the folders they are relative to.
    var list: FileList
    var bases: BaseDirectories
    /// Level, destination, force, names.
    var settings: CompressionSettings
    /// How many compressions at once (`--jobs`).
    var jobs: Int
    /// Where compression runs (`--isolation`).
    var isolation: Isolation
    /// Files to leave out before starting (duplicates named twice), by index.
    var dropped: Set<Int> = []
    /// Files that fail before starting (output collisions), by index.
    var preFailed: [Int: FileFailure] = [:]
    /// Print a line per file (`-v`).
    var verbose = false

    init(
      list: FileList, bases: BaseDirectories, settings: CompressionSettings, jobs: Int,
      isolation: Isolation
    ) {
      self.list = list
      self.bases = bases
      self.settings = settings
      self.jobs = jobs
      self.isolation = isolation
    }
  }

  /// The run's configuration.
  nonisolated let configuration: Configuration
  /// Task-state counters and log (atomics: read without entering the actor).
  nonisolated let tracker: TaskTracker
  /// Progress for the reporter.
  nonisolated let feed: ProgressFeed
  /// Set to stop the run (signals).
  nonisolated let stop: AtomicFlag
  /// Bounds compressions in flight to `jobs`.
  nonisolated let slots: CompressionSlots
  /// Makes outputs durable and renames them into place.
  nonisolated let publisher: Publisher
  /// Names temporaries.
  nonisolated let namer: TemporaryNamer
  /// zlib streams and buffers, one per running compression.
  nonisolated let workspaces: WorkspacePool

  /// What happened to each file so far.
  private var results = RunResults()

  /// Prepares a run.
  ///
  /// - Parameters:
  ///   - configuration: files, destination, width, isolation.
  ///   - tracker: counters and task log.
  ///   - feed: where progress goes.
  ///   - stop: the run's stop flag.
  ///   - namer: temporary names.
  init(
    configuration: Configuration, tracker: TaskTracker, feed: ProgressFeed, stop: AtomicFlag,
    namer: TemporaryNamer
  ) {
    self.configuration = configuration
    self.tracker = tracker
    self.feed = feed
    self.stop = stop
    self.namer = namer
    slots = CompressionSlots(width: configuration.jobs)
    publisher = Publisher(stopRequested: stop)
    workspaces = WorkspacePool(level: configuration.settings.level)
  }

  /// The order files are started in: files bigger than one buffer first, largest first,
  /// then the rest in listing order (folder by folder, for locality).
  nonisolated func startOrder() -> [Int] {
    let files = configuration.list.files
    let threshold = Int64(CompressionWorkspace.inputCapacity)
    let big = files.indices.filter { files[$0].size > threshold }.sorted {
      files[$0].size > files[$1].size
    }
    let small = files.indices.filter { files[$0].size <= threshold }
    return big + small
  }

  /// Compresses every file and returns what happened; returns once every output is
  /// published (or removed, when stopped).
  @concurrent
  nonisolated func compressAll() async -> RunResults {
    let order = startOrder()
    await withDiscardingTaskGroup { group in
      for index in order {
        if configuration.dropped.contains(index) { continue }
        let path = configuration.list.displayPath(of: configuration.list.files[index])
        if let failure = configuration.preFailed[index] {
          await record(.failed(failure), path: path)
          continue
        }
        if stop.isSet { break }
        guard await slots.acquire(), !stop.isSet else { break }
        let task = tracker.create(id: index + 1, file: path)
        group.addTask {
          await self.run(task, index: index, path: path)
        }
      }
    }
    await publisher.shutdown()
    return await finish()
  }

  /// One file's task in `nonisolated` mode: compress (holding a slot), publish, record.
  private nonisolated func run(_ task: TrackedTask, index: Int, path: RawPath) async {
    var task = task
    task.move(to: .running)
    let prepared: Result<FileCompressor.Result, FileFailure>
    do throws(FileFailure) {
      prepared = .success(
        try FileCompressor.prepare(index: index, context: compressionContext) {
          self.feed.addBytes($0)
        })
    } catch {
      prepared = .failure(error)
    }
    slots.release()
    let outcome = await publish(prepared, task: &task)
    // Ready again, waiting for the actor to record the outcome.
    task.move(to: .enqueued)
    tracker.actorWaitBegan()
    await record(outcome, path: path, task: task)
  }

  /// Waits (suspended) for the publisher when there is a temporary to publish.
  private nonisolated func publish(
    _ prepared: Result<FileCompressor.Result, FileFailure>, task: inout TrackedTask
  ) async -> FileOutcome {
    switch prepared {
    case .failure(let failure):
      return .failed(failure)
    case .success(.upToDate(let bytes)):
      return .upToDate(bytes: bytes)
    case .success(.prepared(let ready)):
      task.move(to: .suspended)
      switch await publisher.publish(ready.request) {
      case .published:
        return .done(bytesIn: ready.bytesIn, bytesOut: ready.bytesOut)
      case .failed(let step, let error):
        let display = configuration.settings.plan.displayPath(
          of: configuration.list.files[task.id - 1], in: configuration.list)
        return .failed(.cannotPublish(display, step, error))
      case .cancelled:
        return .failed(.interrupted)
      }
    }
  }

  /// The per-run context compressions read.
  nonisolated var compressionContext: FileCompressor.Context {
    FileCompressor.Context(
      list: configuration.list, bases: configuration.bases, settings: configuration.settings,
      namer: namer, publisher: publisher, workspaces: workspaces, stop: stop)
  }

  /// Records one file's outcome: results, progress, messages, and the task's last state.
  ///
  /// - Parameters:
  ///   - outcome: what happened.
  ///   - path: the file, as displayed.
  ///   - task: the file's task, moved to `finished` or `failed`; nil for a file that failed
  ///     before a task was created (an output collision).
  private func record(_ outcome: FileOutcome, path: RawPath, task: TrackedTask? = nil) {
    if task != nil { tracker.actorWaitEnded() }
    var task = task
    switch outcome {
    case .done(let bytesIn, let bytesOut):
      results.done += 1
      results.bytesIn += bytesIn
      results.bytesOut += bytesOut
      task?.move(to: .finished)
      feed.fileDone(failed: false)
      if configuration.verbose {
        feed.message(
          "\(path.displayString): \(ByteFormat.format(bytesIn)) → \(ByteFormat.format(bytesOut)), "
            + "\(savedPercent(bytesIn, bytesOut)) saved")
      }
    case .upToDate(let bytes):
      results.upToDate += 1
      results.bytesUpToDate += bytes
      task?.move(to: .finished)
      feed.fileDone(failed: false)
      if configuration.verbose { feed.message("\(path.displayString): up to date") }
    case .failed(.interrupted):
      // Not a failure of the file: the run is stopping. Not counted as done either.
      results.interrupted = true
      task?.move(to: .failed)
    case .failed(let failure):
      results.failures.append((path, failure))
      task?.move(to: .failed)
      feed.fileDone(failed: true)
      feed.message("squeeze: \(path.displayString): \(failure)")
    }
  }

  private func finish() -> RunResults {
    if stop.isSet { results.interrupted = true }
    return results
  }
}

/// `1 - out/in` as a percentage, gzip's "saved" figure.
func savedPercent(_ bytesIn: Int64, _ bytesOut: Int64) -> String {
  guard bytesIn > 0 else { return "0.0 %" }
  return ByteFormat.fixed((1 - Double(bytesOut) / Double(bytesIn)) * 100, 1) + " %"
}
