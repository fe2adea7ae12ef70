import Dispatch
import Foundation

/// A serial executor with a thread of its own (SE-0392 custom actor executors): jobs run one
/// at a time, in order, on that thread, never on Swift's cooperative pool.
package final class ThreadExecutor: SerialExecutor, Sendable {
  private struct State {
    var jobs: [UnownedJob] = []
    var idle = false
  }
  private let state = Lock(State())
  private let wakeup = DispatchSemaphore(value: 0)

  /// Starts the thread, named `name` (at most 15 bytes: ``ThreadName``).
  package init(name: StaticString) {
    let thread = Thread { [self] in
      ThreadName.set(name)
      self.run()
    }
    thread.start()
  }

  /// Queues `job` to run on the executor's thread after the jobs before it.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let wake = state.withLock { state -> Bool in
      state.jobs.append(job)
      if state.idle {
        state.idle = false
        return true
      }
      return false
    }
    if wake { wakeup.signal() }
  }

  private func run() {
    while true {
      let jobs = state.withLock { state -> [UnownedJob] in
        let jobs = state.jobs
        state.jobs = []
        if jobs.isEmpty { state.idle = true }
        return jobs
      }
      if jobs.isEmpty {
        wakeup.wait()
        continue
      }
      for job in jobs { job.runSynchronously(on: asUnownedSerialExecutor()) }
    }
  }
}
