import SqueezeSystem

/// What a run holds while it works, made once by its first phase and never changed after:
/// clocks, the open folders, temporary names, signal handling, diagnostics.
@MainActor
final class RunEnvironment {
  /// When the run started, on ``MonotonicClock`` (durations).
  let startTime: Double
  /// CPU seconds used before the run started.
  let startCPU: Double
  /// When the run started on the clock the kernel stamps file times with (coarse real
  /// time): `--delete` keeps entries whose `st_ctime` is not earlier.
  let runStart: Timestamp
  /// The folders the run works relative to.
  let bases = BaseDirectories()
  /// Temporary names, and the temporaries that exist.
  let namer: TemporaryNamer
  /// Set by a stopping signal.
  let stop: AtomicFlag
  /// Passes a stopping signal to the scheduler.
  let stopper: Stopper
  /// SIGINT, SIGTERM and SIGHUP handling.
  let signals: SignalHandling
  /// Heartbeat, task log and sampler.
  let diagnostics: RunDiagnostics

  /// Why a run cannot start.
  struct Failure: Error, CustomStringConvertible {
    /// The message, without the `squeeze: ` prefix.
    var description: String
  }

  /// Starts the clocks, signal handling and diagnostics of a run configured as
  /// `configuration`.
  ///
  /// - Throws: ``Failure`` when the task log cannot be opened.
  init(_ configuration: RunConfiguration) throws(Failure) {
    startTime = MonotonicClock.now()
    startCPU = MonotonicClock.processCPUSeconds()
    runStart = .coarseNow
    let stop = AtomicFlag()
    let stopper = Stopper()
    let namer = TemporaryNamer()
    self.stop = stop
    self.stopper = stopper
    self.namer = namer
    signals = SignalHandling(
      onFirstSignal: { _ in
        stop.set()
        stopper.stop()
      },
      onSecondSignal: { _ in
        // The first signal's orderly stop is still under way: its temporaries go now.
        namer.live.removeAll()
      })
    do {
      diagnostics = try RunDiagnostics(
        logPath: configuration.taskLog, sampleInterval: configuration.sampleInterval,
        startTime: startTime, measuresMainActor: configuration.readsMainActorLag,
        forceLog: configuration.files.force)
    } catch {
      let path = configuration.taskLog?.displayString ?? ""
      switch error {
      case .system: throw Failure(description: "cannot create task log '\(path)': \(error)")
      default: throw Failure(description: "task log '\(path)' \(error)")
      }
    }
  }

  /// Seconds of wall time since the run started.
  var wallSeconds: Double { MonotonicClock.now() - startTime }
  /// CPU seconds the process used since the run started.
  var cpuSeconds: Double { MonotonicClock.processCPUSeconds() - startCPU }
}

/// A run ready to discover: its environment, and what its configuration comes to once the
/// mirror's folder is open (its settings, what discovery selects). Made by the first phase,
/// read by the others.
@MainActor
struct PreparedRun {
  /// The clocks, folders, signals and diagnostics.
  let environment: RunEnvironment
  /// The settings of every file, with the mirror's open folder.
  let settings: FileSettings
  /// What discovery selects, the mirror's folder and the task log left out.
  let discovery: DiscoveryOptions
  /// The mirror's open folder (`-o`), or nil (no mirror, or a dry run into a mirror that
  /// does not exist yet).
  let mirrorBase: Int32?

  /// The mirror's folders, entries and deletions over `list`, or nil without a mirror (or
  /// in a dry run into a mirror that does not exist yet, or for `-t`).
  func mirrorWork(list: FileList, verbose: Bool) -> MirrorWork? {
    guard let mirrorBase, settings.operation != .test else { return nil }
    return MirrorWork(
      list: list, settings: settings, bases: environment.bases, namer: environment.namer,
      base: mirrorBase, runStart: environment.runStart, verbose: verbose)
  }
}
