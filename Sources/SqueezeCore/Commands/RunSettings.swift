import SqueezeSystem

/// What a run needs beyond its options, found out once when it starts and passed on from
/// here: the CPUs this process may use (``CPUAllowance``) and the width they give when
/// `--jobs` does not set one. Every mode (files, streams, diagnostics, `--json`) reads the
/// width from here, never from the options.
struct RunSettings: Sendable {
  /// The command line.
  let options: Options
  /// The CPUs this process may use (affinity mask, cgroup CPU quota).
  let cpus: CPUAllowance
  /// How many files or chunks are worked on at once: `--jobs`, or ``cpus``' count.
  let jobs: Int

  /// Resolves the settings of a run with `options`.
  ///
  /// - Parameter cpus: the CPUs this process may use (``CPUAllowance/current``; tests hand
  ///   others).
  init(options: Options, cpus: CPUAllowance = .current) {
    self.options = options
    self.cpus = cpus
    jobs = options.jobs ?? cpus.count
  }
}
