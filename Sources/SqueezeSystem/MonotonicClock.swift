import Glibc

/// Seconds on the monotonic clock (`CLOCK_MONOTONIC`), for durations and throughput:
/// unaffected by wall-clock changes.
package enum MonotonicClock {
  /// The current monotonic time in seconds.
  package static func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }

  /// The current monotonic time in nanoseconds (`CLOCK_MONOTONIC`).
  package static func nanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
  }

  /// Sleeps the calling thread until ``nanoseconds()`` reaches `deadline`
  /// (`clock_nanosleep` on `CLOCK_MONOTONIC` with `TIMER_ABSTIME`, so late wake-ups do not
  /// add up), however many signals interrupt the sleep.
  package static func sleep(untilNanoseconds deadline: Int64) {
    var wake = timespec(
      tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
  }

  /// Sleeps the calling thread for `seconds` (`nanosleep`; a signal may end it early).
  package static func sleep(seconds: Double) {
    let whole = seconds.rounded(.down)
    var pause = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
    nanosleep(&pause, nil)
  }

  /// CPU time the calling thread has used so far, in nanoseconds
  /// (`CLOCK_THREAD_CPUTIME_ID`).
  package static func threadCPUNanoseconds() -> Int {
    var used = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used)
    return used.tv_sec * 1_000_000_000 + used.tv_nsec
  }

  /// CPU time used by the whole process so far (user + system), in seconds
  /// (`getrusage(RUSAGE_SELF)`).
  package static func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
}
