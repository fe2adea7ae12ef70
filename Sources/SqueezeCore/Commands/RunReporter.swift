import SqueezeSystem
import SqueezeTaskLog

/// Everything a run of files says: discovery's failures, warnings and skips, the plan's
/// failures, each file's messages while the work goes on (through the ``ProgressReporter``),
/// the mirror's lines, the summary line, `--json`, and `--dry-run`'s plan. The phases hand
/// it what they found; nothing else writes to stdout or stderr (results on stdout, so they
/// can be piped; messages on stderr).
@MainActor
final class RunReporter {
  /// The run's configuration: verbosity, progress, `--json`.
  let configuration: RunConfiguration
  /// Where messages go.
  let stderr: TextOutput
  /// Where results go (`--json`, the dry run's plan).
  let stdout: TextOutput
  /// True once `--json` could not be written because standard output's file system is
  /// full or over quota: the run ends with ``ExitStatus/outOfSpace``.
  private(set) var resultsFoundNoRoom = false

  /// A reporter for a run configured as `configuration`.
  init(
    _ configuration: RunConfiguration, stderr: TextOutput = .standardError,
    stdout: TextOutput = .standardOutput
  ) {
    self.configuration = configuration
    self.stderr = stderr
    self.stdout = stdout
  }

  private var verbosity: Verbosity { configuration.verbosity }

  /// `squeeze: <message>` on stderr.
  func error(_ message: String) {
    stderr.write("squeeze: \(message)\n")
  }

  /// Lines on stderr, as they are.
  func lines(_ lines: [String]) {
    stderr.write(lines.map { $0 + "\n" }.joined())
  }

  /// What discovery found wrong, its warnings (unless `-q`) and, with `-v` (not in a dry
  /// run, whose plan lists them), its skips: all before the work starts.
  func discovered(_ discovery: DiscoveryResult) {
    var early = ""
    for failure in discovery.failures { early += "squeeze: \(failure)\n" }
    if verbosity > .quiet {
      for warning in discovery.warnings { early += "squeeze: \(warning)\n" }
    }
    if verbosity == .verbose && !configuration.dryRun {
      // An argument skipped with a warning has been told about once already.
      let warned = Set(discovery.warnings.map(\.path))
      for (path, reason) in discovery.skipped where !warned.contains(path) {
        early += "\(path.displayString): skipped: \(reason.phrase)\n"
      }
    }
    stderr.write(early)
  }

  /// Failures that are not a file's: the plan's, a mirror's folders that could not be made.
  func failed(_ failures: [DiscoveryFailure]) {
    stderr.write(failures.map { "squeeze: \($0)\n" }.joined())
  }

  /// The progress reporter for the work over `list`, measured against `totals`: it also
  /// says each file's outcome (``FileMessages``).
  ///
  /// - Parameter settings: the run's settings once prepared, which name a linked output's
  ///   earlier snapshot (`--link-dest`).
  func progress(
    list: FileList, totals: ProgressTotals, startTime: Double, settings: FileSettings? = nil
  ) -> ProgressReporter {
    var messages = FileMessages(
      list: list, operation: configuration.operation, verbosity: verbosity,
      storing: configuration.files)
    messages.plan = settings?.plan
    messages.linkDestinations = settings?.linkDestinations.map(\.display) ?? []
    return ProgressReporter(
      style: verbosity == .quiet ? .none : configuration.progress, output: stderr,
      totals: totals, startTime: startTime, fileMessages: messages)
  }

  /// The summary line and `--json` at the end of a run.
  ///
  /// - Parameters:
  ///   - failures: every failure that is not a file's (discovery's, the plan's, a mirror's
  ///     folders'), in that order.
  ///   - interrupted: a stopping signal arrived.
  /// - Returns: false when the summary failed the run (files failed, `--json` not written).
  func summarize(
    results: RunResults, discovery: DiscoveryResult, failures: [DiscoveryFailure],
    wallSeconds: Double, cpuSeconds: Double, hangs: HangReport, interrupted: Bool
  ) -> Bool {
    var reported = discovery
    reported.failures = failures
    let summary = RunSummary(
      operation: configuration.operation, results: results, skipped: reported.skippedCount,
      discoveryFailures: reported.failures.count, wallSeconds: wallSeconds,
      cpuSeconds: cpuSeconds, hangs: hangs, showsMainActor: configuration.asksForDiagnostics,
      notDone: results.notDone(selected: discovery.files.files.count))
    // -q prints errors only, and an interruption is none: the status (death by the signal)
    // tells the caller, as after gzip -q and pigz -q, and no temporary is left.
    let showSummary =
      verbosity == .verbose
      || (verbosity == .normal
        && (interrupted || stderr.isTerminal || configuration.progress == .plain
          || configuration.progress == .bar))
    if showSummary { stderr.write(summary.line + "\n") }
    var written = true
    if configuration.json {
      written = json(
        results: results, discovery: reported, wallSeconds: wallSeconds, cpuSeconds: cpuSeconds,
        hangs: hangs, plan: nil)
    }
    return summary.failed == 0 && written
  }

  /// The `--json` object of a run that stopped before its work: `failure` and nothing
  /// done (`diskFull` too when `fullDisk` says a full file system stopped it).
  ///
  /// - Returns: false when it could not be written.
  @discardableResult
  func stoppedEarly(
    failure: DiscoveryFailure, fullDisk: FullDisk? = nil, wallSeconds: Double,
    cpuSeconds: Double
  ) -> Bool {
    guard configuration.json else { return true }
    var discovery = DiscoveryResult()
    discovery.failures = [failure]
    var results = RunResults()
    results.fullDisk = fullDisk
    results.interrupted = fullDisk != nil
    return json(
      results: results, discovery: discovery, wallSeconds: wallSeconds,
      cpuSeconds: cpuSeconds, hangs: HangReport(), plan: nil)
  }

  /// `--dry-run`'s plan: on stdout a line per step (or inside `--json`), and unless `-q` its
  /// one-line summary on stderr.
  ///
  /// - Parameters:
  ///   - failures: every failure that is not a file's (discovery's, the plan's).
  /// - Returns: false when the plan could not be written.
  func dryRun(
    _ dryRun: DryRun, steps: [DryRun.Step], counts: DryRun.Counts, discovery: DiscoveryResult,
    failures: [DiscoveryFailure], deletions: MirrorDeletion.Report?, wallSeconds: Double,
    cpuSeconds: Double
  ) -> Bool {
    var written = true
    if configuration.json {
      var results = RunResults()
      results.done = counts.would
      results.upToDate = counts.upToDate
      results.linked = counts.linked
      results.hardLinked = counts.hardLinks
      results.linksWritten = counts.links
      results.linksUpToDate = counts.linksUpToDate
      results.foldersMade = counts.foldersMade
      results.foldersUpdated = counts.foldersUpdated
      results.foldersUpToDate = counts.foldersUpToDate
      results.deleted = deletions?.deleted ?? 0
      results.keptForeign = deletions?.keptForeign ?? 0
      results.deletionsOverLimit = deletions?.overLimit ?? 0
      var reported = discovery
      reported.failures = failures
      written = json(
        results: results, discovery: reported, wallSeconds: wallSeconds, cpuSeconds: cpuSeconds,
        hangs: HangReport(), plan: steps)
    } else {
      let plan = DryRun.write(steps, to: stdout)
      written = recordResults(plan)
    }
    if verbosity > .quiet {
      stderr.write(
        dryRun.summary(
          counts, skipped: discovery.skipped.count, deleted: deletions?.deleted,
          keptForeign: deletions?.keptForeign ?? 0))
    }
    return written
  }

  /// Notes what writing results came to (``resultsFoundNoRoom``).
  ///
  /// - Returns: true when they were written.
  func recordResults(_ written: ResultsWrite) -> Bool {
    if written == .outOfSpace { resultsFoundNoRoom = true }
    return written.succeeded
  }

  /// Prints the `--json` object on stdout; reports on stderr (and returns false) when it
  /// cannot be encoded or written: never a stand-in object.
  private func json(
    results: RunResults, discovery: DiscoveryResult, wallSeconds: Double, cpuSeconds: Double,
    hangs: HangReport, plan: [DryRun.Step]?
  ) -> Bool {
    var summary = JSONSummary(
      mode: configuration.mode, results: results, discovery: discovery, jobs: configuration.jobs,
      cpus: configuration.cpus, level: configuration.level, engine: configuration.engine,
      blockSize: configuration.chunkSize, isolation: configuration.isolation,
      wallSeconds: wallSeconds, cpuSeconds: cpuSeconds, hangs: hangs,
      dryRun: configuration.dryRun, plan: plan)
    summary.snapshot = !configuration.linkDestinations.isEmpty
    summary.limitsDeletions = configuration.files.maxDeletions != nil
    do throws(JSONSummary.EncodingFailure) {
      let text = try summary.encoded()
      // After a full disk stopped the run, its one line has said so already.
      return recordResults(
        stdout.writeResults(
          text, what: "the --json summary", quietWhenFull: results.fullDisk != nil))
    } catch {
      self.error("\(error)")
      return false
    }
  }
}
