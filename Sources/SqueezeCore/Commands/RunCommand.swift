import CSystem
import Foundation
import Glibc
import Synchronization

/// `squeeze [options] <path>...` with files and folders: compress (the default), decompress
/// (`-d`) or test (`-t`) them in parallel (spec §3, §4).
///
/// A run is five phases, each deciding one thing: ``prepare()`` (signals, diagnostics, the
/// output folder: can the run start at all?), ``discover(_:)`` (which entries are there),
/// ``plan(_:discovery:)`` (what each one needs: up to date, to do, failing, in the way),
/// ``execute(_:list:plan:)`` (doing it: mirror folders, the files, links, hard links,
/// deletions, folder metadata) and ``report(_:discovery:plan:results:)`` (summary, `--json`,
/// exit status).
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
    let setup: RunSetup
    switch prepare() {
    case .success(let prepared): setup = prepared
    case .failure(let stopped): return stopped.status
    }
    var discovery = await discover(setup)
    setup.walkErrors = discovery.failures.count
    if let finding = OldLayoutGuard.check(
      list: discovery.files, settings: setup.settings, bases: setup.bases)
    {
      setup.stderr.write("squeeze: \(finding.message)\n")
      return setup.stopEarly(
        options,
        failure: DiscoveryFailure(
          path: finding.argument, cause: finding.message))
    }
    var plan = await self.plan(setup, discovery: &discovery)
    if options.dryRun { return dryRun(setup, discovery: discovery, plan: plan) }
    let results = await execute(setup, list: discovery.files, plan: &plan)
    return report(setup, discovery: discovery, plan: plan, results: results)
  }

  // MARK: - Phases

  /// Phase 1: signals, diagnostics and the output folder; decides whether the run can start.
  ///
  /// - Returns: the run's shared state, or the status to stop with (a task log that cannot
  ///   be opened, an output folder that cannot be used, `--delete` on an archive).
  @MainActor
  func prepare() -> Result<RunSetup, StoppedEarly> {
    let setup: RunSetup
    do {
      setup = try RunSetup(runSettings: runSettings, operation: operation)
    } catch {
      TextOutput.standardError.write("squeeze: \(error)\n")
      return .failure(StoppedEarly(status: .failure))
    }
    guard let output = options.output else { return .success(setup) }
    if options.dryRun {
      // Nothing is created: an output folder that does not exist yet has no outputs.
      setup.useMirror(base: try? setup.bases.open(output), path: output)
    } else {
      do {
        let contentsGoToTop = options.paths.contains { ArgumentMapping.namesContents($0) }
        let (base, _) = try OutputFolder.prepare(
          output, bases: setup.bases, ownerMayNeedAccess: contentsGoToTop)
        setup.useMirror(base: base, path: output)
      } catch {
        setup.stderr.write("squeeze: \(error)\n")
        return .failure(
          StoppedEarly(
            status: setup.stopEarly(
              options, failure: DiscoveryFailure(path: output, cause: error.description))))
      }
    }
    if let refusal = setup.archiveCheck(options) {
      setup.stderr.write("squeeze: \(refusal)\n")
      return .failure(
        StoppedEarly(
          status: setup.stopEarly(options, failure: DiscoveryFailure(path: output, cause: refusal))
        ))
    }
    return .success(setup)
  }

  /// Phase 2: walks the arguments and prints what discovery found wrong (and, with `-v`, its
  /// skips) before the work starts.
  @MainActor
  func discover(_ setup: RunSetup) async -> DiscoveryResult {
    let discovery = await Self.discover(
      options.paths, options: setup.discoveryOptions, bases: setup.bases, namer: setup.namer)
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
    setup.stderr.write(early)
    return discovery
  }

  /// Phase 3: decides what each entry needs (``RunPlan``) and reports what fails before
  /// starting.
  @MainActor
  func plan(_ setup: RunSetup, discovery: inout DiscoveryResult) async -> RunPlan {
    let plan = await RunPlan.make(
      list: &discovery.files, settings: setup.settings, bases: setup.bases,
      linksHardLinks: options.shard == nil && !options.removeSources, width: setup.jobs)
    setup.stderr.write(plan.failures.map { "squeeze: \($0)\n" }.joined())
    return plan
  }

  /// Phase 4: does the work: makes a mirror's folders, compresses (or restores, or tests)
  /// the files with the progress bar, then writes links and hard links, prunes (`--delete`)
  /// and gives folders their metadata.
  @MainActor
  func execute(_ setup: RunSetup, list: FileList, plan: inout RunPlan) async -> RunResults {
    let mirror = setup.mirrorWork(list: list, verbose: options.verbosity == .verbose)
    if let mirror, var folders = plan.mirror {
      let unusable = mirror.folders.prepare(&folders)
      setup.stderr.write(unusable.map { "squeeze: \($0)\n" }.joined())
      plan.failures += unusable
      plan.mirror = folders
      plan.dropEntries(outsideUsable: folders, of: list)
    }
    let reporter = ProgressReporter(
      style: options.verbosity == .quiet ? .none : options.progress, totals: plan.progressTotals,
      startTime: setup.startTime)
    setup.diagnostics.begin(
      isolation: options.isolation, jobs: setup.jobs, cpus: runSettings.cpus.count,
      level: options.level, engine: options.engine, files: plan.filesToDo,
      bytes: plan.bytesToDo,
      chunkSize: options.chunkSize)
    var results = await compress(setup, list: list, plan: plan, reporter: reporter)
    if results.interrupted {
      // Outputs waiting for a folder in the way to give way will not take its place now.
      for entry in results.held { entry.replacement.abandon() }
      results.held = []
    } else if let mirror, let folders = plan.mirror {
      let lines = mirror.finish(folders, results: &results, walkErrors: setup.walkErrors)
      setup.stderr.write(lines.map { $0 + "\n" }.joined())
    }
    return results
  }

  /// Runs the files through ``ParallelCompressor`` with the progress reporter following.
  @MainActor
  private func compress(
    _ setup: RunSetup, list: FileList, plan: RunPlan, reporter: ProgressReporter
  ) async -> RunResults {
    var configuration = ParallelCompressor.Configuration(
      list: list, bases: setup.bases, settings: setup.settings, jobs: setup.jobs,
      isolation: options.isolation)
    configuration.chunkSize = options.chunkSize
    configuration.rsyncable = options.rsyncable
    configuration.dropped = plan.dropped.union(plan.upToDate)
    configuration.upToDate = plan.upToDate
    configuration.preFailed = plan.preFailed
    configuration.planned = plan.existing
    configuration.verbose = options.verbosity == .verbose
    configuration.quiet = options.verbosity == .quiet
    let feed = ProgressFeed()
    let compressor = ParallelCompressor(
      configuration: configuration, tracker: setup.diagnostics.tracker, feed: feed,
      stop: setup.stop, namer: setup.namer)
    setup.stopper.attach(compressor)
    let follower = Task { @MainActor in await reporter.follow(feed) }
    let results = await compressor.compressAll()
    feed.finish()
    await follower.value
    reporter.finish(feed)
    return results
  }

  /// Phase 5: the summary line, `--json`, and the exit status; re-raises a stopping signal.
  @MainActor
  func report(
    _ setup: RunSetup, discovery: DiscoveryResult, plan: RunPlan, results: RunResults
  ) -> ExitStatus {
    let hangs = setup.diagnostics.end(files: plan.filesToDo, results: results)
    // A log asked for and not written is a failure, as an unwritable --json is.
    var logWritten = true
    if let log = setup.diagnostics.log, let error = log.firstWriteError {
      setup.stderr.write("squeeze: cannot write task log '\(log.path.displayString)': \(error)\n")
      logWritten = false
    }
    var reported = discovery
    reported.failures += plan.failures
    let wall = MonotonicClock.now() - setup.startTime
    let cpu = MonotonicClock.processCPUSeconds() - setup.startCPU
    let summary = RunSummary(
      operation: operation, results: results, skipped: reported.skippedCount,
      discoveryFailures: reported.failures.count, wallSeconds: wall, cpuSeconds: cpu,
      hangs: hangs)
    let interrupted = setup.signals.receivedSignal != nil
    let showSummary =
      interrupted || options.verbosity == .verbose
      || (options.verbosity == .normal
        && (setup.stderr.isTerminal || options.progress == .plain || options.progress == .bar))
    if showSummary { setup.stderr.write(summary.line + "\n") }
    var written = true
    if options.json {
      written = writeJSON(
        JSONSummary(
          mode: options.mode, results: results, discovery: reported, jobs: setup.jobs,
          cpus: runSettings.cpus, level: options.level, engine: options.engine,
          blockSize: options.chunkSize, isolation: options.isolation,
          wallSeconds: wall, cpuSeconds: cpu, hangs: hangs, dryRun: false))
    }
    if let number = setup.signals.receivedSignal { SignalHandling.reraise(number) }
    return summary.failed > 0 || !written || !logWritten ? .failure : .success
  }

  /// `--dry-run` in place of phases 4 and 5: prints the plan, changes nothing.
  @MainActor
  private func dryRun(_ setup: RunSetup, discovery: DiscoveryResult, plan: RunPlan)
    -> ExitStatus
  {
    let mirror = setup.mirrorWork(list: discovery.files, verbose: false)
    var deletions: MirrorDeletion.Report? = nil
    if let mirror, let folders = plan.mirror {
      deletions = mirror.deletion(of: folders, dryRun: true, walkErrors: setup.walkErrors)
      setup.stderr.write((deletions?.warnings ?? []).map { $0 + "\n" }.joined())
    }
    let dryRun = DryRun(settings: setup.settings, list: discovery.files, bases: setup.bases)
    let (steps, counts) = dryRun.steps(
      plan: plan, skipped: discovery.skipped, deletions: deletions)
    var written = true
    if options.json {
      var results = RunResults()
      results.done = counts.would
      results.upToDate = counts.upToDate
      results.deleted = deletions?.deleted ?? 0
      results.keptForeign = deletions?.keptForeign ?? 0
      var reported = discovery
      reported.failures += plan.failures
      written = writeJSON(
        JSONSummary(
          mode: options.mode, results: results, discovery: reported, jobs: setup.jobs,
          cpus: runSettings.cpus, level: options.level, engine: options.engine,
          blockSize: options.chunkSize, isolation: options.isolation,
          wallSeconds: MonotonicClock.now() - setup.startTime,
          cpuSeconds: MonotonicClock.processCPUSeconds() - setup.startCPU, hangs: HangReport(),
          dryRun: true, plan: steps))
    } else {
      written = DryRun.write(steps, to: TextOutput.standardOutput)
    }
    if options.verbosity > .quiet {
      setup.stderr.write(
        dryRun.summary(counts, skipped: discovery.skipped.count, deleted: deletions?.deleted))
    }
    _ = setup.diagnostics.end(files: 0, results: RunResults())
    let failed = !discovery.failures.isEmpty || !plan.failures.isEmpty
    return !failed && written ? .success : .failure
  }

  // MARK: - Helpers

  /// Prints the `--json` object on stdout; reports (and returns false) when it cannot.
  func writeJSON(_ summary: JSONSummary) -> Bool {
    TextOutput.standardOutput.writeReporting(summary.text, what: "the --json summary")
  }

  /// The `--include`, `--exclude`, `--older-than` and `--shard` selection.
  static func selection(from options: Options) -> Selection {
    var selection = Selection()
    selection.includes = options.includes.compactMap(Glob.init)
    selection.excludes = options.excludes.compactMap(Glob.init)
    if let olderThan = options.olderThan {
      selection.modifiedBefore = Timestamp.now.subtracting(seconds: olderThan)
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

/// A run that stops before its work starts, and the status it ends with.
struct StoppedEarly: Error {
  var status: ExitStatus
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
