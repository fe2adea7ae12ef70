import Foundation
import Glibc
import Synchronization

/// `squeeze [options] <path>...` with files and folders: compress (the default), decompress
/// (`-d`) or test (`-t`) them in parallel (spec §3, §4).
struct RunCommand {
  /// The options and the width, resolved once.
  let runSettings: RunSettings
  /// The command line.
  var options: Options { runSettings.options }

  /// The operation the mode asks for.
  var operation: Operation {
    switch options.mode {
    case .decompress: .decompress
    case .test: .test
    case .compress, .list: .compress
    }
  }

  /// Runs the work and prints what the user should see; re-raises a stopping signal after
  /// cleaning up.
  @MainActor
  func run() async -> ExitStatus {
    // A reader of the task log or of --json that goes away must not kill the run midway
    // (temporaries left, files undone): the write fails with EPIPE and is reported.
    // Streams (-c) keep SIGPIPE, as gzip: `squeeze -dc x.gz | head` ends quietly.
    signal(SIGPIPE, SIG_IGN)
    let startTime = MonotonicClock.now()
    let startCPU = MonotonicClock.processCPUSeconds()
    let stderr = TextOutput.standardError
    let bases = BaseDirectories()
    let namer = TemporaryNamer()
    let stop = AtomicFlag()
    let stopper = Stopper()
    let signals = SignalHandling { _ in
      stop.set()
      stopper.stop()
    }
    let diagnostics: RunDiagnostics
    do {
      diagnostics = try RunDiagnostics(
        logPath: options.taskLog, sampleInterval: options.sampleInterval, startTime: startTime,
        forceLog: options.force)
    } catch {
      let path = options.taskLog?.displayString ?? ""
      switch error {
      case .system: stderr.write("squeeze: cannot create task log '\(path)': \(error)\n")
      default: stderr.write("squeeze: task log '\(path)' \(error)\n")
      }
      return .failure
    }

    // The output folder: created if missing, and usable at all, or the run stops at once.
    var destination = OutputPlan.Destination.besideSources
    var discoveryOptions = DiscoveryOptions()
    discoveryOptions.wanted =
      operation == .compress
      ? .uncompressed : (operation == .test ? .compressedOrNamed : .compressedByName)
    discoveryOptions.suffix = options.suffix
    discoveryOptions.followSymlinks = options.followSymlinks
    discoveryOptions.oneFileSystem = options.oneFileSystem
    discoveryOptions.selection = Self.selection(from: options)
    discoveryOptions.recordsSkippedPaths = options.verbosity == .verbose || options.dryRun
    discoveryOptions.removesStaleTemporaries = !options.dryRun
    if let identity = diagnostics.log?.fileIdentity { discoveryOptions.excludedFiles = [identity] }
    if let output = options.output {
      if options.dryRun {
        // Nothing is created: an output folder that does not exist yet has no outputs.
        destination = .mirror(base: -1, path: output)
        if let base = try? bases.open(output) {
          destination = .mirror(base: base, path: output)
          if let status = try? FileStatus.of(".", in: bases.descriptor(base)) {
            discoveryOptions.excludedFolders.insert(FileIdentity(status))
          }
        }
      } else {
        do {
          let (base, identity) = try OutputFolder.prepare(output, bases: bases)
          destination = .mirror(base: base, path: output)
          discoveryOptions.excludedFolders.insert(identity)
        } catch {
          stderr.write("squeeze: \(error)\n")
          _ = diagnostics.end(files: 0, results: RunResults())
          if options.json {
            var discovery = DiscoveryResult()
            discovery.failures = [DiscoveryFailure(path: output, cause: error.description)]
            _ = writeJSON(
              JSONSummary(
                mode: options.mode, results: RunResults(), discovery: discovery,
                jobs: runSettings.jobs, cpus: runSettings.cpus, level: options.level,
                engine: options.engine, blockSize: options.chunkSize,
                isolation: options.isolation,
                wallSeconds: MonotonicClock.now() - startTime,
                cpuSeconds: MonotonicClock.processCPUSeconds() - startCPU, hangs: HangReport(),
                dryRun: options.dryRun))
          }
          return .failure
        }
      }
    }

    let discovery = await Self.discover(
      options.paths, options: discoveryOptions, bases: bases, namer: namer)
    let list = discovery.files
    var early = ""
    for failure in discovery.failures { early += "squeeze: \(failure)\n" }
    if options.verbosity > .quiet {
      for warning in discovery.warnings { early += "squeeze: \(warning)\n" }
    }
    if options.verbosity == .verbose && !options.dryRun {
      // An argument skipped with a warning has been told about once already.
      let warned = Set(discovery.warnings.map(\.path))
      for (path, reason) in discovery.skipped where !warned.contains(path) {
        early += "\(path.displayString): skipped: \(reason.phrase)\n"
      }
    }
    stderr.write(early)

    var plan = OutputPlan(
      destination: destination,
      naming: operation == .compress ? .addSuffix(options.suffix) : .removeSuffix(options.suffix))
    plan.besideSymlinks = options.followSymlinks ? .inFolders : .never
    var settings = CompressionSettings(plan: plan)
    settings.followsSymlinks = options.followSymlinks
    settings.operation = operation
    settings.level = options.level
    settings.engine = options.engine
    settings.force = options.force
    settings.usesHeaderNameAndTime = options.headerNameAndTime ?? (operation == .compress)
    settings.removesSources = options.removeSources
    let jobs = runSettings.jobs

    if options.dryRun {
      let dryRun = DryRun(settings: settings, list: list, bases: bases)
      let (steps, counts) = dryRun.plan(skipped: discovery.skipped)
      var written = true
      if options.json {
        var results = RunResults()
        results.done = counts.would
        results.upToDate = counts.upToDate
        written = writeJSON(
          JSONSummary(
            mode: options.mode, results: results, discovery: discovery, jobs: jobs,
            cpus: runSettings.cpus, level: options.level, engine: options.engine,
            blockSize: options.chunkSize, isolation: options.isolation,
            wallSeconds: MonotonicClock.now() - startTime,
            cpuSeconds: MonotonicClock.processCPUSeconds() - startCPU, hangs: HangReport(),
            dryRun: true, plan: steps))
      } else {
        written = TextOutput.standardOutput.writeReporting(
          DryRun.text(steps), what: "the --dry-run plan")
      }
      if options.verbosity > .quiet {
        stderr.write(dryRun.summary(counts, skipped: discovery.skipped.count))
      }
      _ = diagnostics.end(files: 0, results: RunResults())
      return discovery.failures.isEmpty && written ? .success : .failure
    }

    var configuration = ParallelCompressor.Configuration(
      list: list, bases: bases, settings: settings, jobs: jobs, isolation: options.isolation)
    configuration.chunkSize = options.chunkSize
    let (collisions, duplicates) = settings.plan.collisions(in: list)
    configuration.dropped = duplicates
    // -t writes nothing: two files that would restore to one name are both tested.
    for (index, other) in collisions where operation != .test {
      configuration.preFailed[index] = .outputCollision(
        settings.plan.displayPath(of: list.files[index], in: list), otherSource: other)
    }
    configuration.verbose = options.verbosity == .verbose
    configuration.quiet = options.verbosity == .quiet
    let filesTotal = list.files.count - duplicates.count
    let feed = ProgressFeed()
    let reporter = ProgressReporter(
      style: options.verbosity == .quiet ? .none : options.progress, filesTotal: filesTotal,
      bytesTotal: list.totalBytes, startTime: startTime)
    diagnostics.begin(
      isolation: options.isolation, jobs: jobs, cpus: runSettings.cpus.count, level: options.level,
      engine: options.engine, files: filesTotal,
      bytes: list.totalBytes, chunkSize: options.chunkSize)
    let compressor = ParallelCompressor(
      configuration: configuration, tracker: diagnostics.tracker, feed: feed, stop: stop,
      namer: namer)
    stopper.attach(compressor)
    let follower = Task { @MainActor in await reporter.follow(feed) }
    let results = await compressor.compressAll()
    feed.finish()
    await follower.value
    reporter.finish(feed)
    let hangs = diagnostics.end(files: filesTotal, results: results)
    // A log asked for and not written is a failure, as an unwritable --json is.
    var logWritten = true
    if let log = diagnostics.log, let error = log.firstWriteError {
      stderr.write("squeeze: cannot write task log '\(log.path.displayString)': \(error)\n")
      logWritten = false
    }

    let wall = MonotonicClock.now() - startTime
    let cpu = MonotonicClock.processCPUSeconds() - startCPU
    let summary = RunSummary(
      operation: operation, results: results, skipped: discovery.skippedCount,
      discoveryFailures: discovery.failures.count, wallSeconds: wall, cpuSeconds: cpu, hangs: hangs)
    let interrupted = signals.receivedSignal != nil
    let showSummary =
      interrupted || options.verbosity == .verbose
      || (options.verbosity == .normal
        && (stderr.isTerminal || options.progress == .plain || options.progress == .bar))
    if showSummary { stderr.write(summary.line + "\n") }
    var written = true
    if options.json {
      written = writeJSON(
        JSONSummary(
          mode: options.mode, results: results, discovery: discovery, jobs: jobs,
          cpus: runSettings.cpus, level: options.level, engine: options.engine,
            blockSize: options.chunkSize, isolation: options.isolation,
          wallSeconds: wall, cpuSeconds: cpu, hangs: hangs, dryRun: false))
    }
    if let number = signals.receivedSignal { SignalHandling.reraise(number) }
    return summary.failed > 0 || !written || !logWritten ? .failure : .success
  }

  /// Prints the `--json` object on stdout; reports (and returns false) when it cannot.
  private func writeJSON(_ summary: JSONSummary) -> Bool {
    TextOutput.standardOutput.writeReporting(summary.text, what: "the --json summary")
  }

  /// The `--include`, `--exclude`, `--older-than` and `--shard` selection.
  static func selection(from options: Options) -> Selection {
    var selection = Selection()
    selection.includes = options.includes.compactMap(Glob.init)
    selection.excludes = options.excludes.compactMap(Glob.init)
    if let olderThan = options.olderThan {
      let now = Timestamp.now
      let cutoff = now.secondsSinceEpoch - olderThan
      let seconds = cutoff.rounded(.down)
      selection.modifiedBefore = Timestamp(
        seconds: Int64(seconds), nanoseconds: Int32((cutoff - seconds) * 1e9))
    }
    selection.shard = options.shard
    return selection
  }

  /// Runs discovery on the cooperative pool, off the main actor (it is blocking file-system
  /// work: ~0.1–0.2 s for 80,000 files).
  @concurrent
  static func discover(
    _ paths: [RawPath], options: DiscoveryOptions, bases: BaseDirectories, namer: TemporaryNamer
  ) async -> DiscoveryResult {
    Discovery.run(arguments: paths, options: options, bases: bases, namer: namer)
  }
}

/// Passes a stop request (a signal) to the compressor once there is one.
final class Stopper: Sendable {
  private let compressor = Mutex<ParallelCompressor?>(nil)
  private let stopped = AtomicFlag()

  /// Stops the attached compressor now, or the one attached later.
  func stop() {
    stopped.set()
    compressor.withLock { $0 }?.requestStop()
  }

  /// Attaches the run's compressor (stopping it at once if a stop came before).
  func attach(_ compressor: ParallelCompressor) {
    self.compressor.withLock { $0 = compressor }
    if stopped.isSet { compressor.requestStop() }
  }
}
