import SqueezeSystem

/// Carries finished files' outcomes to `ParallelCompressor` in batches.
///
/// A file's outcome is decided on whichever thread finishes it: a compression task, or the
/// publisher's thread once the output is on disk. Entering the actor once per file would
/// cost a thread hand-off per file (the actor has a thread of its own), so outcomes are
/// appended to a mutex-protected buffer (well under a microsecond) and the actor is woken
/// only when it is not already awake: under load, one entry into the actor records many
/// files. The same coalescing as ``ProgressFeed``. The publisher's thread posts a whole
/// batch of outcomes without waking the consumer and wakes it once at the end
/// (``post(_:wakes:)``, ``wake()``); the two arrays trade places at each drain
/// (``drain(into:)``), so steady posting allocates none.
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

  /// Adds one outcome, waking the consumer unless it is already due to drain, or unless
  /// `wakes` is false: then whoever posts promises a ``wake()`` after its last post.
  func post(_ entry: Entry, wakes: Bool = true) {
    let wake = state.withLock { state -> Bool in
      state.pending.append(entry)
      if !wakes || state.wakePending { return false }
      state.wakePending = true
      return true
    }
    if wake { continuation.yield() }
  }

  /// Wakes the consumer when outcomes wait and it is not already due to drain.
  func wake() {
    let wake = state.withLock { state -> Bool in
      if state.pending.isEmpty || state.wakePending { return false }
      state.wakePending = true
      return true
    }
    if wake { continuation.yield() }
  }

  /// Takes everything posted so far into `buffer`, which must be empty: the two arrays
  /// trade places, so the one handed in (with the capacity it grew to) takes the next
  /// posts.
  func drain(into buffer: inout [Entry]) {
    state.withLock { state in
      state.wakePending = false
      swap(&state.pending, &buffer)
    }
  }

  /// Ends the wake-ups once everything has been posted.
  func finish() {
    continuation.finish()
  }
}
