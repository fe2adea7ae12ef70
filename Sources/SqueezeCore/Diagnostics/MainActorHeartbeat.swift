import Dispatch
import Foundation
import Glibc

/// How bad a main-actor lag was, with the thresholds of Apple's "Analyze hangs with
/// Instruments" session (WWDC23): 250 ms or more is a microhang, 500 ms or more a hang.
enum HangSeverity: String, Sendable {
  case microhang
  case hang

  /// The severity of a lag of `seconds`, or nil below 250 ms.
  init?(lag seconds: Double) {
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
struct HangReport: Sendable, Equatable {
  /// Lags of 500 ms or more.
  var hangs = 0
  /// Lags from 250 ms up to 500 ms.
  var microhangs = 0
  /// The longest lag, in seconds.
  var worstLag: Double = 0
}

/// Measures how late the main actor runs, from a thread of its own (`squeeze-beat`).
///
/// Every ``period`` the heartbeat thread enqueues `Task { @MainActor in … }` and notes when;
/// when the task runs on the main actor, the wait is the main actor's lag at that moment. Only
/// one beat is in flight at a time, so a blocked main actor is not flooded: the lag of a beat
/// still waiting grows until it runs. A dedicated OS thread keeps time within a few
/// milliseconds even when every thread of the cooperative pool is busy, where a `Task.sleep`
/// ticker woke up to 0.5 s late (platform notes). Lags of 250 ms or more are reported as
/// microhangs, 500 ms or more as hangs, each as one `hang` event in the task-state log.
final class MainActorHeartbeat: Sendable {
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
  let period: Double
  private let log: TaskLog?
  private let finished = DispatchSemaphore(value: 0)

  /// - Parameters:
  ///   - period: seconds between beats (default 5 ms).
  ///   - log: receives `hang` events, or nil.
  init(period: Double = 0.005, log: TaskLog?) {
    self.period = period
    self.log = log
  }

  /// Starts the heartbeat thread.
  func start() {
    let thread = Thread { [self] in
      ThreadName.set("squeeze-beat")
      self.beat()
    }
    thread.start()
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
      var pause = timespec(tv_sec: 0, tv_nsec: Int(period * 1e9))
      nanosleep(&pause, nil)
    }
    finished.signal()
  }

  /// Runs on the main actor: the beat in flight arrived.
  @MainActor
  private func arrived() {
    let now = MonotonicClock.now()
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
  /// the last beat's lag when none is in flight, or when the one in flight was sent after
  /// `now`.
  func currentLag(at now: Double = MonotonicClock.now()) -> Double {
    state.withLock { state in
      // The heartbeat thread may send a beat between the caller's reading of the clock and
      // this lock: that beat was not in flight at `now`, and `now - sentAt` would be a
      // negative lag (the task-state log's readers refuse one).
      guard let sentAt = state.sentAt, sentAt <= now else { return state.lastLag }
      return now - sentAt
    }
  }

  /// Stops the thread, counts a beat still waiting as a lag of its own, and returns the
  /// report.
  func stop() -> HangReport {
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
