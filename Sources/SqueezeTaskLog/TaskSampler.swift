import Dispatch
import SqueezeSystem
import Synchronization

/// Samples the task-state counters, the main-actor lag and the state of every thread of the
/// process (`ThreadStates`) into the task-state log at a fixed period (10 ms by default,
/// `--sample-interval`), from a thread of its own (`squeeze-sampler`): reading atomics never
/// enters an actor, so sampling does not disturb what it measures. Each thread seen for the
/// first time (or renamed) gets a `thread` event with its name. The same thread writes the
/// log's buffer out when it grows past 64 KiB.
package final class TaskSampler: Sendable {
  private let counters: TaskCounters
  private let heartbeat: MainActorHeartbeat
  private let log: TaskLog
  /// Seconds between samples.
  package let interval: Double
  private let stopRequested = AtomicFlag()
  private let finished = DispatchSemaphore(value: 0)
  /// The CPU time the sampler thread used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`), set
  /// when it stops: the `end` event's `samplerCPUSeconds`, what sampling itself cost.
  private let cpuNanoseconds = Atomic<Int>(0)

  /// A sampler that reads `counters`, the heartbeat's lag and the threads' states every
  /// `interval` seconds into `log`, once ``start()`` is called.
  package init(
    interval: Double, counters: TaskCounters, heartbeat: MainActorHeartbeat, log: TaskLog
  ) {
    self.interval = interval
    self.counters = counters
    self.heartbeat = heartbeat
    self.log = log
  }

  /// Starts sampling.
  package func start() {
    SystemThread.start(name: "squeeze-sampler") { [self] in
      self.sampleUntilStopped()
    }
  }

  private func sampleUntilStopped() {
    // Absolute deadlines, so the schedule does not drift with the time each sample takes.
    var deadline = MonotonicClock.nanoseconds()
    let step = Int64(interval * 1e9)
    var lastFlush = MonotonicClock.now()
    var threads = ThreadStates()
    var count = 0
    while !stopRequested.isSet {
      takeSample(&threads, withThreads: count % Self.threadStatesEvery == 0)
      count += 1
      // Out at least once a second, so a run that is killed or hangs leaves a log that
      // `squeeze timeline` can draw up to its last second.
      let now = MonotonicClock.now()
      if now - lastFlush >= TaskLog.flushInterval {
        log.flush()
        lastFlush = now
      } else {
        log.flush(threshold: TaskLog.flushThreshold)
      }
      deadline += step
      MonotonicClock.sleep(untilNanoseconds: deadline)
    }
    // The last sample, once the work is done.
    takeSample(&threads)
    cpuNanoseconds.store(MonotonicClock.threadCPUNanoseconds(), ordering: .relaxed)
    finished.signal()
  }

  /// Thread states are read at every this many samples (and at the last): reading
  /// `/proc/self/task` is most of what sampling costs (~100 µs for a dozen threads, measured
  /// with `samplerCPUSeconds`), and 20 ms is fine enough for a thread's lane.
  static let threadStatesEvery = 2

  private func takeSample(_ threads: inout ThreadStates, withThreads: Bool = true) {
    let (readings, named) = withThreads ? threads.read() : ([], [])
    let now = MonotonicClock.now()
    for thread in named {
      log.thread(
        tid: thread.tid, name: thread.name, given: ThreadRoster.givenName(of: thread.tid), at: now)
    }
    log.sample(
      counters, mainActorLagMilliseconds: heartbeat.currentLag(at: now) * 1000, threads: readings)
  }

  /// Takes a last sample, stops the thread and writes the log's buffer out.
  ///
  /// - Returns: the CPU time the sampler thread used, in seconds.
  @discardableResult
  package func stop() -> Double {
    stopRequested.set()
    finished.wait()
    log.flush()
    return Double(cpuNanoseconds.load(ordering: .relaxed)) / 1e9
  }
}
