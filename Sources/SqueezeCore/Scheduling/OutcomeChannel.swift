import SqueezeSystem

/// Carries finished files' outcomes to `ParallelCompressor` in batches.
///
/// A file's outcome is decided on whichever thread finishes it: a compression task, or the
/// publisher's thread once the output is on disk. Entering the actor once per file would
/// cost a thread hand-off per file (the actor has a thread of its own), so outcomes are
/// appended to a mutex-protected buffer (well under a microsecond) and the actor is woken
/// only when it is not already awake: under load, one entry into the actor records many
/// files. The same coalescing as ``ProgressFeed``.
final class OutcomeChannel: Sendable {
  /// One file's outcome.
  struct Entry: Sendable {
    /// The file's index in the run's file list.
    var file: Int
    /// What happened.
    var outcome: FileOutcome
  }

  private struct State {
    var pending: [Entry] = []
    var wakePending = false
  }

  private let state = Lock(State())
  private let continuation: AsyncStream<Void>.Continuation
  /// One element whenever there is something to drain.
  let wakeups: AsyncStream<Void>

  init() {
    (wakeups, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
  }

  /// Adds one outcome, waking the consumer unless it is already due to drain.
  func post(_ entry: Entry) {
    let wake = state.withLock { state -> Bool in
      state.pending.append(entry)
      if state.wakePending { return false }
      state.wakePending = true
      return true
    }
    if wake { continuation.yield() }
  }

  /// Takes everything posted so far.
  func drain() -> [Entry] {
    state.withLock { state in
      state.wakePending = false
      defer { state.pending = [] }
      return state.pending
    }
  }

  /// Ends the wake-ups once everything has been posted.
  func finish() {
    continuation.finish()
  }
}
