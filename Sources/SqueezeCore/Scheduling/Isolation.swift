/// Where compression runs: the stages of the WWDC22 session "Visualize and optimize Swift
/// concurrency" (WWDC22), replayed with `--isolation` so each stage's timeline can be seen.
package enum Isolation: String, Sendable, CaseIterable {
  /// Stage 1: on the main actor, inside the progress reporter's isolation. One file at a time
  /// and the main actor blocked while it compresses: hangs.
  case mainActor = "main-actor"
  /// Stage 2: inside `actor ParallelCompressor`'s isolation. One at a time; the rest wait
  /// enqueued on the actor.
  case actor
  /// Stage 3, the product's way (default): `nonisolated` compression in child tasks, at most
  /// `--jobs` at once; the actor is entered only briefly for bookkeeping.
  case nonisolated
  /// Stage 3 literally, as the session's final code: one `Task.detached` per file, all
  /// created at once, to show what unbounded task creation costs. Detached tasks do not
  /// inherit their creator's priority, so they run in another priority's pool than the
  /// code that awaits them (the concurrency diagnostics article, `ConcurrencyDiagnostics.md`
  /// in `SqueezeCore.docc`, shows what that did here).
  case detached
  /// The session's third problem, thread-pool exhaustion, replayed on real code: as
  /// `nonisolated`, but each file's blocking calls run on the cooperative pool's thread that
  /// compresses it, as naive code makes them: its source is read from the disk (its cached
  /// pages dropped first, `posix_fadvise(POSIX_FADV_DONTNEED)`, as on a cold cache), and its
  /// output is made durable there (`fsync` of the file, the rename, `fsync` of the folder)
  /// instead of in a batch on the publisher's thread. Swift's cooperative pool adds no
  /// thread when one blocks, so fewer threads compress than there are cores.
  case blocking

  /// What the mode asks of the scheduler: the one place the five modes differ.
  var strategy: SchedulingStrategy { SchedulingStrategy(self) }
}

/// How ``ParallelCompressor`` schedules a run's files: an isolation mode (``Isolation``) as
/// the few decisions it changes. Every mode runs the same synchronous work
/// (``ParallelCompressor/processHere(_:)``) and writes the same bytes; only these differ.
///
/// | mode          | starts files   | work runs              | small files | big files | blocking calls |
/// |---------------|----------------|------------------------|-------------|-----------|----------------|
/// | `main-actor`  | bounded        | on the main actor      | one by one  | whole     | publisher      |
/// | `actor`       | bounded        | inside the actor       | one by one  | whole     | publisher      |
/// | `nonisolated` | bounded        | in the file's own task | in batches  | in chunks | publisher      |
/// | `detached`    | all at once    | in the file's own task | one by one  | in chunks | publisher      |
/// | `blocking`    | bounded        | in the file's own task | in batches  | in chunks | pool's threads |
///
/// The isolated stages (1 and 2) work on a whole file inside their isolation, as the
/// session's code does; `detached` is the session's literal final code, one `Task.detached`
/// per file created at once; `blocking` replays thread-pool exhaustion (``BlockingReplay``).
struct SchedulingStrategy: Sendable, Equatable {
  /// How files are started.
  enum Start: Sendable, Equatable {
    /// Each file (or batch of small files) takes a slot first: at most `--jobs` at once.
    case bounded
    /// One `Task.detached` per file, all created at once, with no slot.
    case allAtOnce
  }

  /// Where a file's synchronous work runs.
  enum Place: Sendable, Equatable {
    /// On the thread of the file's own task (a child task on the cooperative pool).
    case fileTask
    /// Inside `actor ParallelCompressor`'s isolation: one file at a time (stage 2).
    case insideActor
    /// On the main actor, the progress reporter's isolation: one file at a time (stage 1).
    case mainActor
  }

  /// How files are started.
  let start: Start
  /// Where a file's work runs.
  let place: Place
  /// Small files go in batches of up to ``SmallFileBatch/maximumFiles`` per task and slot.
  let batchesSmallFiles: Bool
  /// Files of more than one chunk are worked on chunk-parallel.
  let splitsBigFiles: Bool
  /// Each file's blocking calls (reading a cold source, syncing and renaming its output)
  /// run on the thread that works on it, not on the publisher's (``BlockingReplay``).
  let blocksPoolThreads: Bool

  /// The strategy of `isolation`: the table above.
  init(_ isolation: Isolation) {
    switch isolation {
    case .mainActor:
      (start, place, batchesSmallFiles, splitsBigFiles, blocksPoolThreads) =
        (.bounded, .mainActor, false, false, false)
    case .actor:
      (start, place, batchesSmallFiles, splitsBigFiles, blocksPoolThreads) =
        (.bounded, .insideActor, false, false, false)
    case .nonisolated:
      (start, place, batchesSmallFiles, splitsBigFiles, blocksPoolThreads) =
        (.bounded, .fileTask, true, true, false)
    case .detached:
      (start, place, batchesSmallFiles, splitsBigFiles, blocksPoolThreads) =
        (.allAtOnce, .fileTask, false, true, false)
    case .blocking:
      (start, place, batchesSmallFiles, splitsBigFiles, blocksPoolThreads) =
        (.bounded, .fileTask, true, true, true)
    }
  }
}
