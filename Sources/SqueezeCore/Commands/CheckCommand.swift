import Foundation
import SqueezeSystem

extension RunCommand {
  /// `--check` in place of phases 4 and 5: compares the mirror with the source
  /// (``BackupCheck``), prints a line per difference on stdout (or `--json`), and changes
  /// nothing in either.
  ///
  /// - Returns: success when every entry of the source is in the backup as it is now and
  ///   the backup holds nothing the source lost; failure otherwise, or when anything could
  ///   not be read.
  @MainActor
  func check(
    _ prepared: PreparedRun, discovery: DiscoveryResult, plan: RunPlan, reporter: RunReporter
  ) async -> ExitStatus {
    let environment = prepared.environment
    defer { _ = environment.diagnostics.end(files: 0, results: RunResults()) }
    guard let mirrorBase = prepared.mirrorBase, let output = configuration.output else {
      // The backup folder could not be opened: say why, once.
      let output = configuration.output ?? ""
      var cause = "cannot be opened"
      do throws(SystemError) {
        _ = try environment.bases.open(output)
      } catch {
        cause = "cannot open it: \(error)"
      }
      reporter.error("cannot check the backup '\(output.displayString)': \(cause)")
      return .failure
    }
    let check = BackupCheck(
      list: discovery.files, settings: prepared.settings, bases: environment.bases,
      width: configuration.jobs, stop: environment.stop,
      decoders: DecoderPool(engine: configuration.engine))
    var report = await check.run(plan: plan, verbose: configuration.verbosity == .verbose)
    if !report.interrupted {
      lostEntries(
        prepared, discovery: discovery, plan: plan, mirror: mirrorBase, output: output,
        report: &report)
    }
    let failures = discovery.failures + plan.failures + report.failures
    let written = reporter.checked(
      report, discovery: discovery, failures: failures,
      wallSeconds: environment.wallSeconds, cpuSeconds: environment.cpuSeconds)
    if let number = environment.signals.receivedSignal { SignalHandling.reraise(number) }
    let clean = report.findings.isEmpty && failures.isEmpty && !report.interrupted
    if reporter.resultsFoundNoRoom { return .outOfSpace }
    return clean && written ? .success : .failure
  }

  /// Adds the entries of the backup whose source is gone: what `--delete` would remove,
  /// found by its dry run (squeeze's outputs by their header, links and folders by the
  /// mirror's manifest), so nobody else's files are reported. Not looked for after a walk
  /// error (a source that could not be listed is not gone), nor in an archive (`--rm -o`
  /// moved the sources there on purpose).
  @MainActor
  private func lostEntries(
    _ prepared: PreparedRun, discovery: DiscoveryResult, plan: RunPlan, mirror: Int32,
    output: RawPath, report: inout BackupCheck.Report
  ) {
    guard let mirrorPlan = plan.mirror else { return }
    if !discovery.failures.isEmpty {
      report.notes.append(
        "squeeze: entries of the backup whose source is gone were not looked for: the walk met errors"
      )
      return
    }
    if (try? ArchiveMarker.isPresent(in: mirror)) == true {
      report.notes.append(
        "squeeze: '\(output.displayString)' is an archive ('--rm -o' moved files into it): entries whose source is gone are expected there and not reported"
      )
      return
    }
    var settings = prepared.settings
    settings.deletes = true
    let work = MirrorWork(
      list: discovery.files, settings: settings, bases: prepared.environment.bases,
      namer: prepared.environment.namer, base: mirror, runStart: prepared.environment.runStart,
      verbose: false)
    guard let deletion = work.deletion(of: mirrorPlan, dryRun: true, walkErrors: 0) else {
      return
    }
    report.notes += deletion.warnings
    for path in deletion.deletedPaths {
      report.findings.append(
        BackupCheck.Finding(
          kind: .lost, path: path, backup: path, detail: "lost: in the backup, its source is gone"))
    }
  }
}

extension RunReporter {
  /// `--check`'s results: on stdout a line per difference (or the `--json` object), on
  /// stderr the failures, the notes, `-v`'s line per matching entry and the summary (on a
  /// terminal, with `-v`, or when anything differs; never with `-q`).
  ///
  /// - Returns: false when stdout could not be written.
  func checked(
    _ report: BackupCheck.Report, discovery: DiscoveryResult, failures: [DiscoveryFailure],
    wallSeconds: Double, cpuSeconds: Double
  ) -> Bool {
    var messages = ""
    for failure in report.failures { messages += "squeeze: \(failure)\n" }
    for note in report.notes where configuration.verbosity > .quiet { messages += note + "\n" }
    for line in report.verboseLines { messages += line + "\n" }
    stderr.write(messages)
    var written = true
    if configuration.json {
      let summary = CheckSummary(
        report: report, discovery: discovery, failures: failures, wallSeconds: wallSeconds,
        cpuSeconds: cpuSeconds, jobs: configuration.jobs)
      do throws(JSONSummary.EncodingFailure) {
        written = recordResults(
          stdout.writeResults(try summary.encoded(), what: "the --json summary"))
      } catch {
        self.error("\(error)")
        written = false
      }
    } else if !report.findings.isEmpty {
      written = recordResults(
        stdout.writeResults(
          report.findings.map { $0.line + "\n" }.joined(), what: "the --check findings"))
    }
    let verbosity = configuration.verbosity
    let show =
      verbosity == .verbose
      || (verbosity == .normal
        && (stderr.isTerminal || !report.findings.isEmpty || !failures.isEmpty
          || report.interrupted))
    if show {
      stderr.write(
        Self.checkLine(
          report, skipped: discovery.skippedCount, failed: failures.count,
          wallSeconds: wallSeconds) + "\n")
    }
    return written
  }

  /// `squeeze: check: 4,463 files match their backup's CRC-32 and size (120 MB read, 1.58 s,
  /// 76.3 MB/s), 1 differs with the same size and time, 1 missing`: the counts that are not
  /// zero. A match is of the source with what the backup's trailer says it holds; `-t`
  /// checks that the backup decodes to it.
  static func checkLine(
    _ report: BackupCheck.Report, skipped: Int, failed: Int, wallSeconds: Double
  ) -> String {
    let files = report.matching == 1 ? "1 file" : "\(ByteFormat.count(report.matching)) files"
    var rate = ""
    if report.bytesRead > 0 && wallSeconds > 0 {
      rate =
        ", \(ByteFormat.format(Int64(saturating: Double(report.bytesRead) / wallSeconds)))/s"
    }
    var parts = [
      "\(files) \(report.matching == 1 ? "matches its" : "match their") backup's CRC-32 and size (\(ByteFormat.format(report.bytesRead)) read, \(ByteFormat.seconds(wallSeconds))\(rate))"
    ]
    let differ = report.count(.differs) == 1 ? "differs" : "differ"
    let phrases: [(BackupCheck.Finding.Kind, String)] = [
      (.differs, "\(differ) with the same size and time"), (.outOfDate, "out of date"),
      (.missing, "missing"), (.notBackup, "not backed up"), (.damaged, "damaged"),
      (.lost, "lost by the source"),
    ]
    for (kind, phrase) in phrases where report.count(kind) > 0 {
      parts.append("\(ByteFormat.count(report.count(kind))) \(phrase)")
    }
    if skipped > 0 { parts.append("\(ByteFormat.count(skipped)) skipped") }
    if failed > 0 { parts.append("\(ByteFormat.count(failed)) failed") }
    if report.interrupted { parts.append("interrupted") }
    return "squeeze: check: " + parts.joined(separator: ", ")
  }
}

/// `--check --json`: one object on stdout, keys sorted: `{"schema":2,"mode":"check",
/// "files":{"selected","matching","skipped":{…},"failed":{…}},"findings":[{"kind","path",
/// "backup","detail"}],"counts":{<kind>: n},"bytesRead","wallSeconds","cpuSeconds","jobs",
/// "interrupted"}`.
struct CheckSummary: Encodable {
  let report: BackupCheck.Report
  let discovery: DiscoveryResult
  let failures: [DiscoveryFailure]
  let wallSeconds: Double
  let cpuSeconds: Double
  let jobs: Int

  /// One line of JSON with sorted keys, as ``JSONSummary/encoded()``.
  ///
  /// - Throws: ``JSONSummary/EncodingFailure`` when a time is not a finite number.
  func encoded() throws(JSONSummary.EncodingFailure) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    do {
      return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    } catch {
      throw JSONSummary.EncodingFailure(cause: "\(error)")
    }
  }

  private enum Key: String, CodingKey {
    case schema, mode, files, findings, counts, bytesRead, wallSeconds, cpuSeconds, jobs
    case interrupted
  }

  private struct Files: Encodable {
    var selected: Int
    var matching: Int
    var skipped: Skipped
    var failed: Failed
  }

  private struct Skipped: Encodable {
    var total: Int
    var byReason: [String: Int]
  }

  private struct Failed: Encodable {
    var count: Int
    var list: [Failure]
  }

  private struct Failure: Encodable {
    var path: String
    var cause: String
  }

  private struct Item: Encodable {
    var kind: String
    var path: String
    var backup: String?
    var detail: String
  }

  func encode(to encoder: any Encoder) throws {
    var object = encoder.container(keyedBy: Key.self)
    try object.encode(JSONSummary.schema, forKey: .schema)
    try object.encode("check", forKey: .mode)
    var byReason: [String: Int] = [:]
    for (reason, count) in discovery.skipCounts { byReason[reason.rawValue] = count }
    try object.encode(
      Files(
        selected: discovery.files.files.count, matching: report.matching,
        skipped: Skipped(total: discovery.skippedCount, byReason: byReason),
        failed: Failed(
          count: failures.count,
          list: failures.map { Failure(path: $0.path.displayString, cause: $0.cause) })),
      forKey: .files)
    try object.encode(
      report.findings.map {
        Item(
          kind: $0.kind.rawValue, path: $0.path.displayString, backup: $0.backup?.displayString,
          detail: $0.detail)
      }, forKey: .findings)
    var counts: [String: Int] = [:]
    for kind in BackupCheck.Finding.Kind.allCases { counts[kind.rawValue] = report.count(kind) }
    try object.encode(counts, forKey: .counts)
    try object.encode(report.bytesRead, forKey: .bytesRead)
    try object.encode(try JSONSummary.rounded(wallSeconds, 3), forKey: .wallSeconds)
    try object.encode(try JSONSummary.rounded(cpuSeconds, 3), forKey: .cpuSeconds)
    try object.encode(jobs, forKey: .jobs)
    try object.encode(report.interrupted, forKey: .interrupted)
  }
}
