/// Where compression runs: the stages of the WWDC22 session "Visualize and optimize Swift
/// concurrency" (spec §1), selected with `--isolation`.
enum Isolation: String, Sendable, CaseIterable {
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
  /// instead of in a batch on the publisher's thread. The pool adds no thread when one
  /// blocks (platform notes), so fewer threads compress than there are cores.
  case blocking

  /// True for the modes that compress `nonisolated` in a bounded task group (`nonisolated`
  /// and `blocking`): chunk-parallel big files, small files in batches.
  var isBoundedNonisolated: Bool { self == .nonisolated || self == .blocking }
}
