import Foundation
import Glibc

/// `squeeze [options] <path>...`: compress files and folders (spec §3, §4).
struct CompressCommand {
  let options: Options

  /// Runs the compression and prints what the user should see.
  @MainActor
  func run() async -> ExitStatus {
    let startTime = MonotonicClock.now()
    let startCPU = MonotonicClock.processCPUSeconds()
    let stderr = TextOutput.standardError
    let bases = BaseDirectories()
    let namer = TemporaryNamer()
    let diagnostics: RunDiagnostics
    do {
      diagnostics = try RunDiagnostics(
        logPath: options.taskLog, sampleInterval: options.sampleInterval, startTime: startTime)
    } catch {
      stderr.write(
        "squeeze: cannot create task log '\(options.taskLog?.displayString ?? "")': \(error)\n")
      return .failure
    }

    // The output folder: created if missing, and usable at all, or the run stops at once.
    var destination = OutputPlan.Destination.besideSources
    var discoveryOptions = DiscoveryOptions()
    discoveryOptions.recordsSkippedPaths = options.verbosity == .verbose
    if let output = options.output {
      do {
        let (base, identity) = try OutputFolder.prepare(output, bases: bases, namer: namer)
        destination = .mirror(base: base, path: output)
        discoveryOptions.excludedFolders.insert(identity)
      } catch {
        stderr.write("squeeze: \(error)\n")
        _ = diagnostics.end(files: 0, results: RunResults())
        return .failure
      }
    }

    let discovery = await Self.discover(
      options.paths, options: discoveryOptions, bases: bases, namer: namer)
    for failure in discovery.failures {
      stderr.write("squeeze: \(failure)\n")
    }
    if options.verbosity == .verbose {
      for (path, reason) in discovery.skipped {
        stderr.write("\(path.displayString): skipped: \(reason.phrase)\n")
      }
    }

    var settings = CompressionSettings(plan: OutputPlan(destination: destination, suffix: ".gz"))
    settings.level = options.level
    settings.force = options.force
    let jobs = options.jobs ?? Self.activeProcessorCount
    var configuration = ParallelCompressor.Configuration(
      list: discovery.files, bases: bases, settings: settings, jobs: jobs,
      isolation: options.isolation)
    configuration.blockSize = options.blockSize
    let (collisions, duplicates) = settings.plan.collisions(in: discovery.files)
    configuration.dropped = duplicates
    for (index, other) in collisions {
      configuration.preFailed[index] = .outputCollision(
        settings.plan.displayPath(of: discovery.files.files[index], in: discovery.files),
        otherSource: other)
    }
    configuration.verbose = options.verbosity == .verbose

    let filesTotal = discovery.files.files.count - duplicates.count
    let feed = ProgressFeed()
    let reporter = ProgressReporter(
      style: options.verbosity == .quiet ? .none : .auto, filesTotal: filesTotal,
      bytesTotal: discovery.files.totalBytes, startTime: startTime)
    diagnostics.begin(
      isolation: options.isolation, jobs: jobs, level: options.level, files: filesTotal,
      bytes: discovery.files.totalBytes, blockSize: options.blockSize)
    let compressor = ParallelCompressor(
      configuration: configuration, tracker: diagnostics.tracker, feed: feed, stop: AtomicFlag(),
      namer: namer)
    let follower = Task { @MainActor in await reporter.follow(feed) }
    let results = await compressor.compressAll()
    feed.finish()
    await follower.value
    reporter.finish(feed)
    let hangs = diagnostics.end(files: filesTotal, results: results)
    if let log = diagnostics.log, let error = log.firstWriteError {
      stderr.write("squeeze: cannot write task log '\(log.path.displayString)': \(error)\n")
    }

    let summary = RunSummary(
      results: results, skipped: discovery.skippedCount,
      discoveryFailures: discovery.failures.count,
      wallSeconds: MonotonicClock.now() - startTime,
      cpuSeconds: MonotonicClock.processCPUSeconds() - startCPU, hangs: hangs)
    let showSummary =
      options.verbosity == .verbose || (options.verbosity == .normal && stderr.isTerminal)
    if showSummary { stderr.write(summary.line + "\n") }
    return summary.failed > 0 ? .failure : .success
  }

  /// Runs discovery on the cooperative pool, off the main actor (it is blocking file-system
  /// work: ~0.1–0.2 s for 80,000 files).
  @concurrent
  static func discover(
    _ paths: [RawPath], options: DiscoveryOptions, bases: BaseDirectories, namer: TemporaryNamer
  ) async -> DiscoveryResult {
    Discovery.run(arguments: paths, options: options, bases: bases, namer: namer)
  }

  /// The number of processors available to this process (Foundation's
  /// `ProcessInfo.activeProcessorCount`: online processors narrowed by the affinity mask
  /// and cgroup quota).
  static var activeProcessorCount: Int {
    max(1, ProcessInfo.processInfo.activeProcessorCount)
  }
}
