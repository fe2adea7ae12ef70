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
    /// The consumer was woken (or is due to be) and has not drained since.
    var wakePending = false
    /// The consumer, suspended in ``nextWake()``.
    var waiter: UnsafeContinuation<Bool, Never>? = nil
    /// ``finish()`` was called.
    var finished = false
  }

  // A wake-up is a lock and, when the consumer sleeps, one continuation resumed: an
  // AsyncStream's `next` looked up the generic metadata of its buffer and continuation at
  // every wake-up, which cost more than recording the batch it woke the actor for.
  private let state = Lock(State())

  init() {}

  /// Suspends until there is something to drain (true) or ``finish()`` was called and all
  /// was drained (false). Returns at once when a wake-up came since the last drain. One
  /// consumer at a time.
  func nextWake() async -> Bool {
    await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
      let now = state.withLock { state -> Bool? in
        if state.wakePending { return true }
        if state.finished { return false }
        state.waiter = continuation
        return nil
      }
      if let now { continuation.resume(returning: now) }
    }
  }

  /// Marks a wake-up due (under the lock) and takes the sleeping consumer to resume, if any.
  private static func dueWake(_ state: inout State) -> UnsafeContinuation<Bool, Never>? {
    state.wakePending = true
    defer { state.waiter = nil }
    return state.waiter
  }

  /// Adds one outcome, waking the consumer unless it is already due to drain, or unless
  /// `wakes` is false: then whoever posts promises a ``wake()`` after its last post.
  ///
  /// The entry is moved into the buffer, not copied: a copy of an outcome retains each of
  /// its paths, and its release later costs as much again.
  func post(_ entry: consuming Entry, wakes: Bool = true) {
    var moving = Optional(entry)
    let waiter = state.withLock { state -> UnsafeContinuation<Bool, Never>? in
      if let entry = moving.take() { state.pending.append(entry) }
      if !wakes || state.wakePending { return nil }
      return Self.dueWake(&state)
    }
    waiter?.resume(returning: true)
  }

  /// Wakes the consumer when outcomes wait and it is not already due to drain.
  func wake() {
    let waiter = state.withLock { state -> UnsafeContinuation<Bool, Never>? in
      if state.pending.isEmpty || state.wakePending { return nil }
      return Self.dueWake(&state)
    }
    waiter?.resume(returning: true)
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

  /// Ends the wake-ups once everything has been posted: ``nextWake()`` returns false once
  /// what is left has been drained.
  func finish() {
    let waiter = state.withLock { state -> UnsafeContinuation<Bool, Never>? in
      state.finished = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(returning: false)
  }
}
