/// What a run did with each file, owned by `ParallelCompressor` and handed out at the end.
struct RunResults: Sendable {
  /// Files written (compressed, decompressed).
  var done = 0
  /// Files whose output was already current (re-runs).
  var upToDate = 0
  /// Files that failed, in the order they failed, with the cause.
  var failures: [(path: RawPath, failure: FileFailure)] = []
  /// Source bytes of the files written.
  var bytesIn: Int64 = 0
  /// Output bytes of the files written.
  var bytesOut: Int64 = 0
  /// Source bytes of the up-to-date files.
  var bytesUpToDate: Int64 = 0
  /// True when a signal stopped the run early.
  var interrupted = false

  init() {}

  /// Files that failed.
  var failed: Int { failures.count }
}

/// The outcome of one file, reported to `ParallelCompressor`.
enum FileOutcome: Sendable {
  case done(bytesIn: Int64, bytesOut: Int64)
  case upToDate(bytes: Int64)
  case failed(FileFailure)
}
