import Dispatch
import SqueezeSystem
import Synchronization

/// How bad a main-actor lag was, with the thresholds of Apple's "Analyze hangs with
/// Instruments" session (WWDC23): 250 ms or more is a microhang, 500 ms or more a hang.
package enum HangSeverity: String, Sendable {
  case microhang
  case hang

  /// The severity of a lag of `seconds`, or nil below 250 ms.
  package init?(lag seconds: Double) {
    if seconds >= 0.5 {
      self = .hang
    } else if seconds >= 0.25 {
      self = .microhang
    } else {
      return nil
    }
  }
}

/// What the heartbeat saw over a run.
package struct HangReport: Sendable, Equatable {
  /// Lags of 500 ms or more.
  package var hangs = 0
  /// Lags from 250 ms up to 500 ms.
  package var microhangs = 0
  /// The longest lag, in seconds.
  package var worstLag: Double = 0

  /// A report of `hangs` hangs, `microhangs` microhangs and a worst lag of `worstLag`
  /// seconds; by default, no lag seen yet.
  package init(hangs: Int = 0, microhangs: Int = 0, worstLag: Double = 0) {
    self.hangs = hangs
    self.microhangs = microhangs
    self.worstLag = worstLag
  }
}

/// Measures how late the main actor runs, from a thread of its own (`squeeze-beat`).
///
/// Every ``period`` the heartbeat thread enqueues `Task { @MainActor in … }` and notes when;
/// when the task runs on the main actor, the wait is the main actor's lag at that moment. Only
/// one beat is in flight at a time, so a blocked main actor is not flooded: the lag of a beat
/// still waiting grows until it runs. A dedicated OS thread keeps time within a few
/// milliseconds even when every thread of the cooperative pool is busy, where a `Task.sleep`
/// ticker woke up far too late to measure anything. Lags of 250 ms or more are reported as
/// microhangs, 500 ms or more as hangs, each as one `hang` event in the task-state log.
package final class MainActorHeartbeat: Sendable {
  private struct State {
    /// When the beat in flight was enqueued (monotonic seconds), or nil.
    var sentAt: Double? = nil
    /// The lag of the last beat that ran.
    var lastLag: Double = 0
    var report = HangReport()
    var running = true
  }

  private let state = Lock(State())
  /// Seconds between beats.
  package let period: Double
  private let log: TaskLog?
  private let finished = DispatchSemaphore(value: 0)

  /// - Parameters:
  ///   - period: seconds between beats (default 5 ms).
  ///   - log: receives `hang` events, or nil.
  package init(period: Double = 0.005, log: TaskLog?) {
    self.period = period
    self.log = log
  }

  /// Starts the heartbeat thread.
  package func start() {
    SystemThread.start(name: "squeeze-beat") { [self] in
      self.beat()
    }
  }

  private func beat() {
    while true {
      let now = MonotonicClock.now()
      let (keepGoing, send) = state.withLock { state -> (Bool, Bool) in
        guard state.running else { return (false, false) }
        guard state.sentAt == nil else { return (true, false) }
        state.sentAt = now
        return (true, true)
      }
      guard keepGoing else { break }
      if send {
        Task { @MainActor in self.arrived() }
      }
      MonotonicClock.sleep(seconds: period)
    }
    finished.signal()
  }

  /// Runs on the main actor: the beat in flight arrived.
  @MainActor
  private func arrived() {
    let now = MonotonicClock.now()
    // Which thread runs the main actor's jobs (the main queue's worker on Linux).
    log?.noteQueue()
    let hang = state.withLock { state -> (start: Double, lag: Double, severity: HangSeverity)? in
      guard let sentAt = state.sentAt else { return nil }
      state.sentAt = nil
      return Self.account(lag: now - sentAt, from: sentAt, in: &state)
    }
    if let hang { log?.hang(startingAt: hang.start, duration: hang.lag, severity: hang.severity) }
  }

  private static func account(
    lag: Double, from start: Double, in state: inout State
  ) -> (start: Double, lag: Double, severity: HangSeverity)? {
    state.lastLag = lag
    state.report.worstLag = max(state.report.worstLag, lag)
    guard let severity = HangSeverity(lag: lag) else { return nil }
    switch severity {
    case .hang: state.report.hangs += 1
    case .microhang: state.report.microhangs += 1
    }
    return (start, lag, severity)
  }

  /// The main actor's lag at `now`, in seconds: how long the beat in flight has waited, or
  /// the last beat's lag when none is in flight; never negative.
  ///
  /// A caller takes `now` before it asks, so the heartbeat thread may send a beat in between:
  /// that beat has waited no time at `now` (not a negative time, which the log's reader
  /// refuses).
  func currentLag(at now: Double = MonotonicClock.now()) -> Double {
    state.withLock { state in state.sentAt.map { max(0, now - $0) } ?? state.lastLag }
  }

  /// Stops the thread, counts a beat still waiting as a lag of its own, and returns the
  /// report.
  package func stop() -> HangReport {
    let (hang, wasRunning) = state.withLock {
      state -> ((start: Double, lag: Double, severity: HangSeverity)?, Bool) in
      // The clock is read under the lock: a beat sent between a reading outside and the lock
      // would get a negative lag.
      let now = MonotonicClock.now()
      let wasRunning = state.running
      state.running = false
      guard wasRunning, let sentAt = state.sentAt else { return (nil, wasRunning) }
      state.sentAt = nil
      return (Self.account(lag: now - sentAt, from: sentAt, in: &state), wasRunning)
    }
    if let hang { log?.hang(startingAt: hang.start, duration: hang.lag, severity: hang.severity) }
    if wasRunning { finished.wait() }
    return state.withLock { $0.report }
  }
}
