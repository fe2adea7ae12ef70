import SqueezeSystem
import SqueezeTaskLog
import Synchronization

/// `squeeze [options] <path>...` with files and folders: compress (the default), decompress
/// (`-d`) or test (`-t`) them in parallel.
///
/// A run is five phases, each deciding one thing and handing it on, never changing what an
/// earlier phase decided: `prepare(_:)` (signals, diagnostics, the output folder: can the
/// run start at all?), `discover(_:reporter:)` (which entries are there: a `FileList`),
/// `plan(_:list:reporter:)` (what each one needs: a frozen `RunPlan`, one disposition per
/// file), `execute(_:discovery:plan:reporter:)` (doing it: stale temporaries, mirror folders, the files, links,
/// hard links, deletions, folder metadata; it reports outcomes) and the report (summary,
/// `--json`, exit status). Every message goes through the `RunReporter`.
package struct RunCommand {
  /// The run's configuration, resolved once.
  let configuration: RunConfiguration

  /// The command of a run configured as `configuration`.
  package init(configuration: RunConfiguration) {
    self.configuration = configuration
  }

  /// What the execution phase came to.
  struct Execution {
    /// What happened to each file and mirror entry.
    var results: RunResults
    /// The mirror's folders that could not be made (their entries were left out).
    var unusableFolders: [DiscoveryFailure]
    /// The work the run set out to do.
    var totals: ProgressTotals
  }

  /// Runs the work and prints what the user should see; re-raises a stopping signal after
  /// cleaning up.
  @MainActor
  package func run() async -> ExitStatus {
    // A reader of the task log or of --json that goes away must not kill the run midway
    // (temporaries left, files undone): the write fails with EPIPE and is reported.
    // Streams (-c) keep SIGPIPE, as gzip: `squeeze -dc x.gz | head` ends quietly.
    ProcessControl.ignoreBrokenPipes()
    let reporter = RunReporter(configuration)
    let prepared: PreparedRun
    switch prepare(reporter) {
    case .success(let ready): prepared = ready
    case .failure(let stopped): return stopped.status
    }
    let discovery = await discover(prepared, reporter: reporter)
    if let finding = TrailingSlashGuard.check(
      list: discovery.files, settings: prepared.settings, bases: prepared.environment.bases)
    {
      reporter.error(finding.message)
      return stopEarly(
        prepared.environment, reporter: reporter,
        failure: DiscoveryFailure(path: finding.argument, cause: finding.message))
    }
    let plan = await self.plan(prepared, list: discovery.files, reporter: reporter)
    if configuration.checksBackup {
      return await check(prepared, discovery: discovery, plan: plan, reporter: reporter)
    }
    if configuration.dryRun {
      return dryRun(prepared, discovery: discovery, plan: plan, reporter: reporter)
    }
    let execution = await execute(
      prepared, discovery: discovery, plan: plan, reporter: reporter)
    return report(
      prepared, discovery: discovery, plan: plan, execution: execution, reporter: reporter)
  }

  // MARK: - Phases

  /// Phase 1: signals, diagnostics and the output folder; decides whether the run can start.
  ///
  /// - Returns: the prepared run, or the status to stop with (a task log that cannot be
  ///   opened, an output folder that cannot be used, `--delete` on an archive).
  @MainActor
  func prepare(_ reporter: RunReporter) -> Result<PreparedRun, StoppedEarly> {
    let environment: RunEnvironment
    do {
      environment = try RunEnvironment(configuration)
    } catch {
      reporter.error("\(error)")
      return .failure(StoppedEarly(status: .failure))
    }
    let logIdentity = environment.diagnostics.log?.fileIdentity
    guard let output = configuration.output else {
      return .success(
        PreparedRun(
          environment: environment, settings: configuration.settings(mirrorBase: nil),
          discovery: configuration.discovery(excludingFolder: nil, file: logIdentity),
          mirrorBase: nil))
    }
    // The output folder cannot take this run: says why (stderr, and `--json`) and stops;
    // with status 74 when its file system has no room left for it.
    func refuse(_ cause: String, fullDisk: FullDisk? = nil) -> Result<PreparedRun, StoppedEarly> {
      reporter.error(cause)
      let status = stopEarly(
        environment, reporter: reporter, failure: DiscoveryFailure(path: output, cause: cause),
        fullDisk: fullDisk)
      return .failure(StoppedEarly(status: status))
    }
    let base: Int?
    var linkDestinations: [LinkDestination]? = nil
    if configuration.dryRun || configuration.checksBackup {
      // Nothing is created: an output folder that does not exist yet has no outputs.
      base = try? environment.bases.open(output)
    } else {
      // A snapshot into a folder not made yet: its earlier snapshots are checked first, so
      // a run refused for them leaves no folder behind.
      if !configuration.linkDestinations.isEmpty,
        (try? FileStatus.of(output, in: Descriptor.currentDirectory, followingSymlinks: true))
          == nil
      {
        do throws(SnapshotError) {
          linkDestinations = try openLinkDestinations(
            output: output, mirror: nil, environment: environment)
        } catch {
          return refuse("\(error)")
        }
      }
      do {
        let contentsGoToTop = configuration.paths.contains { ArgumentMapping.namesContents($0) }
        (base, _) = try OutputFolder.prepare(
          output, bases: environment.bases, ownerMayNeedAccess: contentsGoToTop)
      } catch {
        return refuse(
          "\(error)",
          fullDisk: FullDisk(file: output, failure: .cannotCreateOutput(output, error.cause)).map {
            var folder = $0
            folder.failedFiles = 0  // the -o folder, not a file
            return folder
          })
      }
    }
    let mirrorBase = base.map { environment.bases.descriptor($0) }
    let mirrorIdentity = mirrorBase.flatMap { try? FileStatus.of(".", in: $0) }.map {
      FileIdentity($0)
    }
    var settings = configuration.settings(mirrorBase: base ?? -1)
    var discovery = configuration.discovery(excludingFolder: mirrorIdentity, file: logIdentity)
    if !configuration.linkDestinations.isEmpty {
      do throws(SnapshotError) {
        let snapshot = try prepareSnapshot(
          output: output, mirror: mirrorBase, environment: environment, opened: linkDestinations)
        settings.linkDestinations = snapshot.destinations
        if snapshot.resumes {
          // A snapshot is the source as it was when it finished: what the stopped run
          // made for entries the source has lost since goes, as --delete would remove it.
          settings.deletes = true
          settings.resumesSnapshot = true
        }
      } catch {
        return refuse("\(error)", fullDisk: error.fullDisk)
      }
      discovery.excludedFolders.formUnion(
        Self.identities(of: settings.linkDestinations, bases: environment.bases))
    }
    let prepared = PreparedRun(
      environment: environment, settings: settings, discovery: discovery,
      mirrorBase: mirrorBase)
    if let mirrorBase, let refusal = archiveCheck(prepared, mirror: mirrorBase, output: output) {
      return refuse(refusal.cause, fullDisk: refusal.fullDisk)
    }
    return .success(prepared)
  }

  /// Phase 2: walks the arguments; the reporter prints what discovery found wrong (and,
  /// with `-v`, its skips) before the work starts.
  @MainActor
  func discover(_ prepared: PreparedRun, reporter: RunReporter) async -> DiscoveryResult {
    var discovery = await Self.discover(
      configuration.paths, options: prepared.discovery, bases: prepared.environment.bases,
      namer: prepared.environment.namer)
    if configuration.mode == .decompress || configuration.mode == .test {
      discovery.warnings += Self.unfinishedSnapshots(among: configuration.paths)
    }
    reporter.discovered(discovery)
    return discovery
  }

  /// A warning for each argument that is a snapshot a stopped run left unfinished (it holds
  /// ``SnapshotMarker/name``): restoring or testing it works, but it lacks what that run had
  /// not reached yet.
  static func unfinishedSnapshots(among paths: [RawPath]) -> [DiscoveryFailure] {
    paths.compactMap { path in
      guard
        (try? FileStatus.of(
          path.appending(SnapshotMarker.name), in: Descriptor.currentDirectory))?.kind == .regular
      else { return nil }
      return DiscoveryFailure(
        path: path,
        cause:
          "an unfinished snapshot (it holds '\(SnapshotMarker.name.displayString)'): the run that made it stopped before the end, so files it had not reached are missing"
      )
    }
  }

  /// Phase 3: decides what each entry needs (``RunPlan``); the reporter prints what fails
  /// before starting.
  @MainActor
  func plan(_ prepared: PreparedRun, list: FileList, reporter: RunReporter) async -> RunPlan {
    let plan = await RunPlan.make(
      list: list, settings: prepared.settings, bases: prepared.environment.bases,
      linksHardLinks: configuration.linksHardLinks, width: configuration.jobs)
    reporter.failed(plan.failures)
    return plan
  }

  /// Phase 4: does the work: makes a mirror's folders, compresses (or restores, or tests)
  /// the files with the progress bar, then writes links and hard links, prunes (`--delete`)
  /// and gives folders their metadata. Changes neither the list nor the plan: files in a
  /// mirror folder that could not be made are left out here, by the execution's own copy of
  /// the mirror plan.
  @MainActor
  func execute(
    _ prepared: PreparedRun, discovery: DiscoveryResult, plan: RunPlan, reporter: RunReporter
  ) async -> Execution {
    let environment = prepared.environment
    let list = discovery.files
    let walkErrors = discovery.failures.count
    // What killed runs left behind in the folders walked goes first.
    StaleTemporaries.remove(
      discovery.staleTemporaries, in: list, bases: environment.bases,
      symlinks: prepared.discovery.followSymlinks ? .always : .never,
      namer: environment.namer)
    let mirror = prepared.mirrorWork(list: list, verbose: configuration.verbosity == .verbose)
    var folders: MirrorPlan? = nil
    var unusable: [DiscoveryFailure] = []
    if let mirror, var prepared = plan.mirror {
      unusable = mirror.folders.prepare(&prepared)
      reporter.failed(unusable)
      folders = prepared
    }
    let totals = plan.totals(of: list, folders: folders)
    let progress = reporter.progress(
      list: list, totals: totals, startTime: environment.startTime, settings: prepared.settings)
    environment.diagnostics.begin(
      isolation: configuration.isolation, jobs: configuration.jobs,
      cpus: configuration.cpus.count, level: configuration.level, engine: configuration.engine,
      files: totals.files, bytes: totals.bytes, chunkSize: configuration.chunkSize)
    environment.diagnostics.stallMainActorIfAsked()
    // A task log whose file system is full stops the run as an output would (FullDisk).
    let stopper = environment.stopper
    environment.diagnostics.log?.whenAWriteFails { error in
      if error.isOutOfSpace { stopper.stopForFullDisk() }
    }
    if folders?.fullDisk != nil {
      // No room for the mirror's folders: no file starts, as after a full-disk failure.
      environment.stopper.stopForFullDisk()
    }
    var results = await work(
      prepared, list: list, plan: plan, folders: folders, progress: progress)
    if results.fullDisk == nil, let fullDisk = folders?.fullDisk {
      results.fullDisk = fullDisk
      results.interrupted = true
    }
    if results.fullDisk == nil, results.interrupted, environment.signals.receivedSignal == nil,
      let log = environment.diagnostics.log, let fullDisk = Self.fullDisk(writing: log)
    {
      results.fullDisk = fullDisk
    }
    if results.interrupted {
      // Outputs waiting for a folder in the way to give way will not take its place now,
      // and their files are not done.
      results.abandonHeld()
      // Further names already right stay so: up to date, as the links would find them.
      results.upToDate += folders?.followersUpToDate(in: list) ?? 0
    } else if let mirror, let folders {
      let signals = environment.signals
      let lines = mirror.finish(
        folders, results: &results, walkErrors: walkErrors,
        stopped: { signals.receivedSignal != nil })
      reporter.lines(lines)
      if !prepared.settings.linkDestinations.isEmpty, let output = configuration.output,
        let failure = finishSnapshot(
          mirror: mirror.base, output: output, results: results,
          otherFailures: walkErrors + plan.failures.count + unusable.count,
          namer: environment.namer)
      {
        results.entryFailures.append(failure)
        reporter.failed([failure])
      }
    }
    return Execution(results: results, unusableFolders: unusable, totals: totals)
  }

  /// Runs the files through ``ParallelCompressor`` with the progress reporter following.
  @MainActor
  private func work(
    _ prepared: PreparedRun, list: FileList, plan: RunPlan, folders: MirrorPlan?,
    progress: ProgressReporter
  ) async -> RunResults {
    let environment = prepared.environment
    let feed = ProgressFeed()
    let compressor = ParallelCompressor(
      work: ParallelCompressor.Work(
        configuration: configuration, settings: prepared.settings, list: list,
        bases: environment.bases, plan: plan, folders: folders),
      tracker: environment.diagnostics.tracker, feed: feed, stop: environment.stop,
      namer: environment.namer)
    environment.stopper.attach(compressor)
    let follower = Task { @MainActor in await progress.follow(feed) }
    let results = await compressor.processAll()
    feed.finish()
    await follower.value
    progress.finish(feed)
    return results
  }

  /// Phase 5: the summary line, `--json`, and the exit status; re-raises a stopping signal.
  @MainActor
  func report(
    _ prepared: PreparedRun, discovery: DiscoveryResult, plan: RunPlan, execution: Execution,
    reporter: RunReporter
  ) -> ExitStatus {
    let environment = prepared.environment
    let hangs = environment.diagnostics.end(
      files: execution.totals.files, results: execution.results)
    // A log asked for and not written is a failure, as an unwritable --json is; a log
    // whose file system is full ends the run as a full disk does, said once.
    var logWritten = true
    var results = execution.results
    if let log = environment.diagnostics.log, let error = log.firstWriteError {
      if let fullDisk = Self.fullDisk(writing: log) {
        if results.fullDisk == nil { results.fullDisk = fullDisk }
      } else {
        reporter.error("cannot write task log '\(log.path.displayString)': \(error)")
        logWritten = false
      }
    }
    let fullDisk = results.fullDisk
    if let fullDisk, environment.signals.receivedSignal == nil {
      reporter.error(
        fullDisk.message(
          notDone: results.notDone(selected: discovery.files.files.count)))
    }
    let succeeded = reporter.summarize(
      results: results, discovery: discovery,
      failures: discovery.failures + plan.failures + execution.unusableFolders,
      wallSeconds: environment.wallSeconds, cpuSeconds: environment.cpuSeconds, hangs: hangs,
      interrupted: environment.signals.receivedSignal != nil || results.interrupted)
    if let number = environment.signals.receivedSignal { SignalHandling.reraise(number) }
    if fullDisk != nil || reporter.resultsFoundNoRoom { return .outOfSpace }
    return succeeded && logWritten ? .success : .failure
  }

  /// `--dry-run` in place of phases 4 and 5: prints the plan, changes nothing.
  @MainActor
  private func dryRun(
    _ prepared: PreparedRun, discovery: DiscoveryResult, plan: RunPlan, reporter: RunReporter
  ) -> ExitStatus {
    let environment = prepared.environment
    let mirror = prepared.mirrorWork(list: discovery.files, verbose: false)
    var deletions: MirrorDeletion.Report? = nil
    if let mirror, let folders = plan.mirror {
      deletions = mirror.deletion(
        of: folders, dryRun: true, walkErrors: discovery.failures.count)
      reporter.lines(deletions?.warnings ?? [])
    }
    let dryRun = DryRun(
      settings: prepared.settings, list: discovery.files, bases: environment.bases)
    let (steps, counts) = dryRun.steps(
      plan: plan, skipped: discovery.skipped, deletions: deletions, folders: mirror?.folders)
    // What the run would report failed: the walk's and the plan's failures, and every file
    // the plan says would fail (an output in the way, a clash) that they do not name already.
    var failures = discovery.failures + plan.failures
    let named = Set(failures.map(\.path))
    for step in steps where step.action == .fail && !named.contains(step.path) {
      failures.append(DiscoveryFailure(path: step.path, cause: step.cause ?? ""))
    }
    let written = reporter.dryRun(
      dryRun, steps: steps, counts: counts, discovery: discovery,
      failures: failures, deletions: deletions,
      wallSeconds: environment.wallSeconds, cpuSeconds: environment.cpuSeconds)
    _ = environment.diagnostics.end(files: 0, results: RunResults())
    if reporter.resultsFoundNoRoom { return .outOfSpace }
    return failures.isEmpty && written ? .success : .failure
  }

  // MARK: - Helpers

  /// The full file system that kept the task log from being written, or nil when it was
  /// written or failed for another reason.
  static func fullDisk(writing log: TaskLog) -> FullDisk? {
    guard let error = log.firstWriteError else { return nil }
    return FullDisk(
      path: log.path, error: error,
      cause: "cannot write task log '\(log.path.displayString)': \(error)")
  }

  /// Ends a run that stops before its work: closes the diagnostics and prints `--json`
  /// naming `failure` (and `fullDisk`, when a full file system is why).
  ///
  /// - Returns: the failure status, or ``ExitStatus/outOfSpace`` with a `fullDisk`.
  @MainActor
  private func stopEarly(
    _ environment: RunEnvironment, reporter: RunReporter, failure: DiscoveryFailure,
    fullDisk: FullDisk? = nil
  ) -> ExitStatus {
    _ = environment.diagnostics.end(files: 0, results: RunResults())
    reporter.stoppedEarly(
      failure: failure, fullDisk: fullDisk, wallSeconds: environment.wallSeconds,
      cpuSeconds: environment.cpuSeconds)
    return fullDisk == nil && !reporter.resultsFoundNoRoom ? .failure : .outOfSpace
  }

  /// The archive marker's part (``ArchiveMarker``): `--delete` refuses a marked mirror;
  /// `--rm -o` marks the mirror before it removes any source.
  ///
  /// - Returns: why the run must stop (and the full file system, when the marker found no
  ///   room), or nil.
  @MainActor
  private func archiveCheck(_ prepared: PreparedRun, mirror: Int32, output: RawPath) -> (
    cause: String, fullDisk: FullDisk?
  )? {
    let settings = prepared.settings
    let marker = output.trimmingTrailingSlashes.appending(ArchiveMarker.name).displayString
    if settings.deletes {
      do throws(SystemError) {
        if try ArchiveMarker.isPresent(in: mirror) {
          return (
            "'\(output.displayString)' is an archive: '--rm -o' moved files into it ('\(marker)' says so), and --delete would remove the only copies of files whose originals are gone; nothing was done",
            nil
          )
        }
      } catch {
        // Pruning an archive would remove the only copies of files: not knowing is a no.
        return (
          "cannot tell whether '\(output.displayString)' is an archive: cannot examine '\(marker)': \(error); nothing was done",
          nil
        )
      }
    }
    if settings.removesSources && settings.operation == .compress && !configuration.dryRun {
      do {
        try ArchiveMarker.leave(in: mirror, namer: prepared.environment.namer)
      } catch {
        let cause =
          "cannot mark '\(output.displayString)' as an archive of removed originals ('\(ArchiveMarker.name.displayString)'): \(error); nothing was done"
        return (
          cause,
          FullDisk(
            path: output.trimmingTrailingSlashes.appending(ArchiveMarker.name), error: error,
            cause: cause)
        )
      }
    }
    return nil
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

/// Passes a stop request (a signal, or a full disk outside the outputs) to the compressor
/// once there is one.
final class Stopper: Sendable {
  private let compressor = Lock<ParallelCompressor?>(nil)
  /// A signal stopped the run.
  private let stopped = AtomicFlag()
  /// A full disk stopped the run.
  private let stoppedStarting = AtomicFlag()

  /// Stops the attached compressor now, or the one attached later, for a signal: the
  /// outputs not yet published are removed (``ParallelCompressor/requestStop()``).
  func stop() {
    stopped.set()
    compressor.withLock { $0 }?.requestStop()
  }

  /// Stops the attached compressor now, or the one attached later, for a full disk (the
  /// task log's, the mirror's folders'): no file starts, the outputs already whole are
  /// published (``ParallelCompressor/stopStarting()``).
  func stopForFullDisk() {
    stoppedStarting.set()
    compressor.withLock { $0 }?.stopStarting()
  }

  /// Attaches the run's compressor (stopping it at once if a stop came before).
  func attach(_ compressor: ParallelCompressor) {
    self.compressor.withLock { $0 = compressor }
    if stopped.isSet {
      compressor.requestStop()
    } else if stoppedStarting.isSet {
      compressor.stopStarting()
    }
  }
}
