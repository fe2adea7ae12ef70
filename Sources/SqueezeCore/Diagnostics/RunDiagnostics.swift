import Foundation
import SqueezeEngines
import SqueezeGzip
import SqueezeSystem
import SqueezeTaskLog
import Synchronization

/// The diagnostics of one run: the main-actor heartbeat (when something reads the lag it
/// measures: the summary with diagnostics, `--json`, the task-state log), and with
/// `--task-log` the log and its sampler.
final class RunDiagnostics: Sendable {
  /// Measures main-actor lag; nil when nothing reads it (``RunConfiguration/readsMainActorLag``).
  /// It wakes every 5 ms and hops onto the main actor at each beat, which an everyday run
  /// (no `--json`, no diagnostics) would pay for a report nobody reads.
  let heartbeat: MainActorHeartbeat?
  /// The task-state log, when asked for.
  let log: TaskLog?
  /// Counters and task events; inert without a log (``TaskTracker/isInert``): only the log's
  /// sampler and `end` event read the counters.
  let tracker: TaskTracker
  private let sampleInterval: Double
  private let sampler: Lock<TaskSampler?> = Lock(nil)

  /// Opens the log (when `logPath` is given) and starts the heartbeat (when
  /// `measuresMainActor`, and always with a log, whose samples and `hang` events it feeds).
  ///
  /// - Parameters:
  ///   - measuresMainActor: something reads the main actor's lag and hangs at the end
  ///     (``RunConfiguration/readsMainActorLag``); when false and no log is written, no
  ///     heartbeat runs and ``end(files:results:)`` reports no lag.
  ///   - forceLog: replace a file at `logPath` that is not a task log (`-f`).
  /// - Throws: ``TaskLogOpenError`` when the log cannot be created or would replace a file
  ///   that is not a task log.
  init(
    logPath: RawPath?, sampleInterval: Double, startTime: Double,
    measuresMainActor: Bool = true, forceLog: Bool = false
  ) throws(TaskLogOpenError) {
    log = try logPath.map { (path) throws(TaskLogOpenError) in
      try TaskLog(path: path, startTime: startTime, force: forceLog)
    }
    heartbeat = measuresMainActor || log != nil ? MainActorHeartbeat(log: log) : nil
    tracker = TaskTracker(log: log, keepsCounters: false)
    self.sampleInterval = sampleInterval
    heartbeat?.start()
  }

  /// Writes the `start` event and starts sampling.
  ///
  /// - Parameter cpus: the CPUs this process may use (``CPUAllowance/count``).
  func begin(
    isolation: Isolation, jobs: Int, cpus: Int, level: CompressionLevel, engine: Engine,
    files: Int, bytes: Int64, chunkSize: Int
  ) {
    // A log always has a heartbeat (init).
    guard let log, let heartbeat else { return }
    log.start(
      version: SqueezeVersion.current, isolation: isolation.rawValue, jobs: jobs,
      level: Int(level.value), engine: engine.rawValue,
      cpus: cpus, files: files, bytes: bytes, chunkSize: chunkSize)
    let sampler = TaskSampler(
      interval: sampleInterval, counters: tracker.counters, heartbeat: heartbeat, log: log)
    self.sampler.withLock { $0 = sampler }
    sampler.start()
  }

  /// The environment variable of a test hook: `SQUEEZE_TEST_MAIN_ACTOR_STALL_MS=600` makes
  /// the main actor lag on purpose, blocked for that many milliseconds (1 to 60,000) as the
  /// work starts, so a test can see what the summary says after a hang without a loaded
  /// machine. Not an option: nothing but a test has a reason to stall a run.
  static let stallVariable = "SQUEEZE_TEST_MAIN_ACTOR_STALL_MS"

  /// Blocks the caller (the main actor) for the milliseconds ``stallVariable`` asks, if any.
  @MainActor
  func stallMainActorIfAsked() {
    guard let text = ProcessInfo.processInfo.environment[Self.stallVariable],
      let milliseconds = Int(text), (1...60_000).contains(milliseconds)
    else { return }
    MonotonicClock.sleep(
      untilNanoseconds: MonotonicClock.nanoseconds() + Int64(milliseconds) * 1_000_000)
  }

  /// Stops sampling and the heartbeat, writes the `end` event, and returns the hang report
  /// (empty when no heartbeat ran).
  func end(files: Int, results: RunResults) -> HangReport {
    let sampler = self.sampler.withLock { $0 }
    let samplerCPU = sampler?.stop() ?? 0
    let report = heartbeat?.stop() ?? HangReport()
    if let log {
      log.end(
        files: files, failed: results.failed, bytesIn: results.bytesIn, bytesOut: results.bytesOut,
        maxRunning: tracker.counters.maxRunning.load(ordering: .relaxed),
        maxEnqueued: tracker.counters.maxEnqueued.load(ordering: .relaxed), hangs: report,
        leakedContinuations: tracker.counters.continuationWaits.load(ordering: .relaxed),
        samplerCPUSeconds: samplerCPU)
      log.flush()
    }
    return report
  }
}
