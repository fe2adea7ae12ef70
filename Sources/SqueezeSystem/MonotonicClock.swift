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

  /// CPU time used by the whole process so far (user + system), in seconds
  /// (`getrusage(RUSAGE_SELF)`).
  package static func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
}
