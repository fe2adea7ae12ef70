import CSystem
import Glibc

/// What every phase of a ``RunCommand`` shares, made by its first phase: clocks, the open
/// folders, signal handling, diagnostics, and the settings resolved once from the options.
@MainActor
final class RunSetup {
  /// When the run started, on ``MonotonicClock`` (durations).
  let startTime: Double
  /// CPU seconds used before the run started.
  let startCPU: Double
  /// When the run started on the clock the kernel stamps file times with (coarse real
  /// time): `--delete` keeps entries whose `st_ctime` is not earlier.
  let runStart: Timestamp
  /// Standard error.
  let stderr = TextOutput.standardError
  /// The folders the run works relative to.
  let bases = BaseDirectories()
  /// Temporary names, and the temporaries that exist.
  let namer: TemporaryNamer
  /// Set by a stopping signal.
  let stop: AtomicFlag
  /// Passes a stopping signal to the compressor.
  let stopper: Stopper
  /// SIGINT, SIGTERM and SIGHUP handling.
  let signals: SignalHandling
  /// Heartbeat, task log and sampler.
  let diagnostics: RunDiagnostics
  /// What discovery selects.
  var discoveryOptions = DiscoveryOptions()
  /// Destination, naming, level and the rest, for every file.
  var settings: CompressionSettings
  /// How many files or chunks are worked on at once (`--jobs`, resolved).
  let jobs: Int
  /// How many errors the walk met (`--delete` deletes nothing after any).
  var walkErrors = 0
  /// The mirror's open folder (`-o`), when there is one.
  private(set) var mirrorBase: Int32? = nil

  /// Why a run cannot be set up.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The options and the width, resolved once.
  let runSettings: RunSettings

  /// Resolves the options into settings and starts signal handling and diagnostics.
  ///
  /// - Throws: ``Failure`` when the task log cannot be opened.
  init(runSettings: RunSettings, operation: Operation) throws(Failure) {
    self.runSettings = runSettings
    let options = runSettings.options
    startTime = MonotonicClock.now()
    startCPU = MonotonicClock.processCPUSeconds()
    runStart = Timestamp(squeeze_coarse_realtime())
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
        logPath: options.taskLog, sampleInterval: options.sampleInterval, startTime: startTime,
        forceLog: options.force)
    } catch {
      let path = options.taskLog?.displayString ?? ""
      switch error {
      case .system: throw Failure(description: "cannot create task log '\(path)': \(error)")
      default: throw Failure(description: "task log '\(path)' \(error)")
      }
    }
    jobs = runSettings.jobs
    settings = CompressionSettings(plan: Self.plan(.besideSources, options, operation))
    settings.followsSymlinks = options.followSymlinks
    settings.operation = operation
    settings.level = options.level
    settings.engine = options.engine
    settings.force = options.force
    settings.usesHeaderNameAndTime = options.headerNameAndTime ?? (operation == .compress)
    settings.removesSources = options.removeSources
    settings.deletes = options.deletes
    discoveryOptions.wanted =
      operation == .compress
      ? .uncompressed : (operation == .test ? .compressedOrNamed : .compressedByName)
    discoveryOptions.suffix = options.suffix
    discoveryOptions.followSymlinks = options.followSymlinks
    discoveryOptions.oneFileSystem = options.oneFileSystem
    discoveryOptions.selection = RunCommand.selection(from: options)
    discoveryOptions.recordsSkippedPaths = options.verbosity == .verbose || options.dryRun
    discoveryOptions.removesStaleTemporaries = !options.dryRun
    discoveryOptions.listingThreads = min(jobs, runSettings.cpus.count)
    if let identity = diagnostics.log?.fileIdentity { discoveryOptions.excludedFiles = [identity] }
  }

  /// The output plan for `destination`.
  private static func plan(
    _ destination: OutputPlan.Destination, _ options: Options, _ operation: Operation
  ) -> OutputPlan {
    var plan = OutputPlan(
      destination: destination,
      naming: operation == .compress ? .addSuffix(options.suffix) : .removeSuffix(options.suffix))
    plan.besideSymlinks = options.followSymlinks ? .inFolders : .never
    return plan
  }

  /// Writes into the mirror open as `base` (nil in a dry run when it does not exist yet):
  /// arguments map as rsync's, the tree's links, folders and compressed names go in too, and
  /// discovery keeps out of the mirror.
  func useMirror(base: Int?, path: RawPath) {
    settings.plan = Self.mirrorPlan(base: base ?? -1, path: path, from: settings.plan)
    settings.wrapsCompressedNames = settings.operation == .compress
    discoveryOptions.mirrorsTree = settings.operation != .test
    discoveryOptions.skipsArchiveMarker = settings.operation == .decompress
    if settings.operation == .compress { discoveryOptions.wanted = .anything }
    guard let base else { return }
    mirrorBase = bases.descriptor(base)
    if let status = try? FileStatus.of(".", in: bases.descriptor(base)) {
      discoveryOptions.excludedFolders.insert(FileIdentity(status))
    }
  }

  private static func mirrorPlan(base: Int, path: RawPath, from plan: OutputPlan) -> OutputPlan {
    var mirror = OutputPlan(destination: .mirror(base: base, path: path), naming: plan.naming)
    mirror.besideSymlinks = plan.besideSymlinks
    return mirror
  }

  /// The archive marker's part (``ArchiveMarker``): `--delete` refuses a marked mirror;
  /// `--rm -o` marks the mirror before it removes any source.
  ///
  /// - Returns: why the run must stop, or nil.
  func archiveCheck(_ options: Options) -> String? {
    guard let mirrorBase, let output = options.output else { return nil }
    if options.deletes && ArchiveMarker.isPresent(in: mirrorBase) {
      return
        "'\(output.displayString)' is an archive: '--rm -o' moved files into it ('\(output.trimmingTrailingSlashes.appending(ArchiveMarker.name).displayString)' says so), and --delete would remove the only copies of files whose originals are gone; nothing was done"
    }
    if options.removeSources && settings.operation == .compress && !options.dryRun {
      do {
        try ArchiveMarker.leave(in: mirrorBase, namer: namer)
      } catch {
        return
          "cannot mark '\(output.displayString)' as an archive of removed originals ('\(ArchiveMarker.name.displayString)'): \(error); nothing was done"
      }
    }
    return nil
  }

  /// Ends a run that stops before its work: closes the diagnostics and prints `--json`
  /// naming `failure`.
  ///
  /// - Returns: the failure status.
  func stopEarly(_ options: Options, failure: DiscoveryFailure) -> ExitStatus {
    _ = diagnostics.end(files: 0, results: RunResults())
    if options.json {
      var discovery = DiscoveryResult()
      discovery.failures = [failure]
      _ = RunCommand(runSettings: runSettings).writeJSON(
        JSONSummary(
          mode: options.mode, results: RunResults(), discovery: discovery, jobs: jobs,
          cpus: runSettings.cpus, level: options.level, engine: options.engine,
          blockSize: options.chunkSize, isolation: options.isolation,
          wallSeconds: MonotonicClock.now() - startTime,
          cpuSeconds: MonotonicClock.processCPUSeconds() - startCPU, hangs: HangReport(),
          dryRun: options.dryRun))
    }
    return .failure
  }

  /// The mirror's folders, entries and deletions over `list`, or nil without a mirror (or
  /// in a dry run into a mirror that does not exist yet).
  func mirrorWork(list: FileList, verbose: Bool) -> MirrorWork? {
    guard let mirrorBase, settings.operation != .test else { return nil }
    return MirrorWork(
      list: list, settings: settings, bases: bases, namer: namer, base: mirrorBase,
      runStart: runStart, verbose: verbose)
  }
}
