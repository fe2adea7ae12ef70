import SqueezeSystem
import Synchronization

/// Progress pushed from compression tasks to the main actor without ever waiting on it.
///
/// Tasks post counts and messages; they land in a mutex-protected accumulator (a few
/// nanoseconds) and, at most once per ``minimumInterval``, a wake-up is yielded into an
/// `AsyncStream` the ``ProgressReporter`` awaits on the main actor. Coalescing in the
/// accumulator is what keeps the main actor's cost independent of the number of files: ten
/// thousand small files cause at most ten wake-ups a second, not ten thousand hops (a hop
/// through `await MainActor.run` makes the caller wait for the main actor).
final class ProgressFeed: Sendable {
  /// Totals so far and the messages posted since the last drain.
  struct Snapshot: Sendable, Equatable {
    /// Source bytes consumed by compression so far.
    var bytesDone: Int64 = 0
    /// Files finished: compressed, up to date or failed.
    var filesDone = 0
    /// Files that failed.
    var filesFailed = 0
    /// Lines for stderr, in posting order, since the previous drain.
    var messages: [String] = []
    /// Files' outcomes that may print a line (``FileMessages``), in posting order, since the
    /// previous drain.
    var outcomes: [(file: Int, outcome: FileOutcome)] = []

    static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
      lhs.bytesDone == rhs.bytesDone && lhs.filesDone == rhs.filesDone
        && lhs.filesFailed == rhs.filesFailed && lhs.messages == rhs.messages
        && lhs.outcomes.map(\.file) == rhs.outcomes.map(\.file)
    }
  }

  private struct State {
    var snapshot = Snapshot()
    var wakePending = false
    var lastWake = -Double.infinity
  }

  private let state = Lock(State())
  private let continuation: AsyncStream<Void>.Continuation
  /// Wake-ups for the reporter: one element means "drain me".
  let wakeups: AsyncStream<Void>
  /// The least time between two wake-ups, in seconds (0.1: ~10 redraws a second).
  let minimumInterval: Double

  /// - Parameter minimumInterval: seconds between wake-ups (default 0.1).
  init(minimumInterval: Double = 0.1) {
    self.minimumInterval = minimumInterval
    (wakeups, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
  }

  /// Adds `count` consumed source bytes.
  func addBytes(_ count: Int) {
    post { $0.bytesDone += Int64(count) }
  }

  /// Counts a finished file.
  func fileDone(failed: Bool) {
    post {
      $0.filesDone += 1
      if failed { $0.filesFailed += 1 }
    }
  }

  /// Queues a line for stderr.
  func message(_ line: String) {
    post { $0.messages.append(line) }
  }

  /// Queues file `index`'s outcome for the reporter to say (``FileMessages``).
  func outcome(of index: Int, _ outcome: FileOutcome) {
    post { $0.outcomes.append((index, outcome)) }
  }

  private func post(_ change: (inout Snapshot) -> Void) {
    let now = MonotonicClock.now()
    let wake = state.withLock { state -> Bool in
      change(&state.snapshot)
      guard !state.wakePending, now - state.lastWake >= minimumInterval else { return false }
      state.wakePending = true
      state.lastWake = now
      return true
    }
    if wake { continuation.yield() }
  }

  /// Takes the totals and the queued messages; the next post may wake the reporter again.
  func drain() -> Snapshot {
    state.withLock { state in
      state.wakePending = false
      let snapshot = state.snapshot
      state.snapshot.messages = []
      state.snapshot.outcomes = []
      return snapshot
    }
  }

  /// Ends the wake-up stream: the reporter's loop returns.
  func finish() {
    continuation.finish()
  }
}
