import SqueezeSystem

/// A mirror's work around its files (``MirrorPlan``), in the order that keeps it a backup
/// whatever happens to the run:
///
/// 1. before the files: its folders made, with owner `rwx` (``MirrorFolders/prepare(_:)``);
/// 2. after the files are published (and synced by the publisher): symbolic links, and
///    further names of hard-link groups linked to their group's output;
/// 3. with `--delete`, once all of that is on disk (one more `syncfs`), the pruning
///    (``MirrorDeletion``), unless the walk met an error;
/// 4. entries a folder was in the way of take its place, if it is empty now;
/// 5. compressing, the folders, links and further hard-link names made or found in place
///    recorded in the mirror's manifest (``MirrorManifest``), which step 3 reads, once
///    they are on disk (two more `syncfs`, only when the manifest changes);
/// 6. every folder given its source's metadata, deepest first, and counted (``FolderState``);
///    a last `syncfs`.
///
/// On FUSE, where `syncfs` commits nothing, each of those syncs `fsync`s every folder of the
/// mirror instead, deepest first (and one before a changed manifest is written, which
/// elsewhere its own `syncfs` covers).
struct MirrorWork {
  /// The run's listing.
  let list: FileList
  /// The run's settings.
  let settings: FileSettings
  /// The open folders.
  let bases: BaseDirectories
  /// Temporary names.
  let namer: TemporaryNamer
  /// The mirror's open folder.
  let base: Int32
  /// When the run started (coarse real time, for `--delete`'s `st_ctime` guard).
  let runStart: Timestamp
  /// Print a line per entry (`-v`).
  let verbose: Bool

  /// The folders' part.
  var folders: MirrorFolders {
    MirrorFolders(list: list, settings: settings, base: base, namer: namer)
  }

  /// The links' and hard links' part.
  var entries: MirrorEntries {
    MirrorEntries(
      list: list, settings: settings, bases: bases, namer: namer, base: base, verbose: verbose)
  }

  /// The pruning, or nil when not asked for (`--delete`) or skipped after walk errors.
  ///
  /// - Parameter linkedInodes: the inodes this run linked further hard-link names to.
  func deletion(
    of plan: MirrorPlan, dryRun: Bool, walkErrors: Int,
    linkedInodes: [FileIdentity: LinkedInode] = [:]
  ) -> MirrorDeletion.Report? {
    guard settings.deletes, settings.operation == .compress, walkErrors == 0 else { return nil }
    let reading = MirrorManifest.read(in: base)
    var report = MirrorDeletion(
      list: list, plan: plan, settings: settings, bases: bases, base: base, runStart: runStart,
      dryRun: dryRun, verbose: verbose, namer: namer,
      manifest: MirrorManifest(entries: reading.entries), linkedInodes: linkedInodes
    ).run()
    if case .unusable(let error) = reading {
      let cause = "\(error); --delete keeps every link and folder"
      if case .cannotRead = error {
        // An I/O error, not a state of the mirror: the run could not do all it was asked.
        report.failures.append(DiscoveryFailure(path: manifestDisplay, cause: cause))
      } else {
        report.warnings.append("squeeze: \(manifestDisplay.displayString): \(cause)")
      }
    }
    if dryRun {
      if report.overLimit > 0, let limit = settings.maxDeletions {
        report.warnings.append(
          MirrorDeletion.limitMessage(limit, kept: report.overLimit, dryRun: true))
      }
      // A dry run fails nothing: what it could not examine is said, as a warning.
      report.warnings += report.failures.map { "squeeze: \($0)" }
      report.failures = []
    }
    return report
  }

  /// The manifest's path as the user would write it.
  var manifestDisplay: RawPath { settings.plan.mirrorDisplay(MirrorManifest.name) }

  /// Records in the mirror's manifest the entries this run made or found in their place
  /// (`made`), with the other entries listed before that still are what was recorded;
  /// writes it only when that changed. A manifest that cannot be read, or a file squeeze did not
  /// write by that name, is never replaced; a damaged one is replaced whole.
  ///
  /// - Returns: the failure when the manifest cannot be read or written, with the full
  ///   file system when it found no room.
  ///
  /// - Parameter commitBeforeWriting: called before a changed manifest is written, when the
  ///   manifest's own `syncfs` commits nothing (FUSE): it commits the entries the manifest
  ///   lists, or returns why it could not (the manifest is then not written).
  func record(
    _ made: [RawPath: EntryIdentity], commitBeforeWriting: () -> SystemError? = { nil }
  ) -> (failure: DiscoveryFailure, fullDisk: FullDisk?)? {
    let reading = MirrorManifest.read(in: base)
    var current: MirrorManifest? = nil
    switch reading {
    case .read(let manifest): current = manifest
    case .absent, .unusable(.damaged): break
    case .unusable(let error):
      return (
        DiscoveryFailure(
          path: manifestDisplay, cause: "\(error); the entries made now are not recorded"),
        nil
      )
    }
    // What this run made or found is recorded as it saw it (an entry replaced since has
    // another identity, so its record never matches it); only older entries are looked at
    // again, and dropped once they are gone or replaced.
    let older = (current?.entries ?? [:]).filter { made[$0.key] == nil }
    var kept = MirrorManifest(entries: older).stillThere(in: base)
    kept.entries.merge(made) { _, new in new }
    if kept == current || (reading == .absent && kept.entries.isEmpty) { return nil }
    // A killed run's manifest temporary is cleaned here, as outputs' folders are. Writing
    // commits the file system before the rename: only what is on disk is recorded.
    TemporaryCleaner(namer: namer).cleanOnce(
      folderOf: RelativeLocation(base: base, directory: "", name: MirrorManifest.name))
    if let error = commitBeforeWriting() {
      let failure = DiscoveryFailure(
        path: manifestDisplay,
        cause: "cannot sync the mirror to disk: \(error); the entries made now are not recorded")
      return (failure, syncFullDisk(error))
    }
    do throws(ManifestError) {
      try kept.write(in: base, namer: namer)
    } catch {
      let failure = DiscoveryFailure(
        path: manifestDisplay, cause: "\(error); the entries made now are not recorded")
      guard case .cannotWrite(_, let cause) = error else { return (failure, nil) }
      return (
        failure,
        FullDisk(
          path: manifestDisplay, error: cause,
          cause: "'\(manifestDisplay.displayString)': \(error)")
      )
    }
    return nil
  }

  /// Steps 2 to 6, after the files.
  ///
  /// - Parameter stopped: true once a signal asks the run to stop: the run stops at the
  ///   next link or further name, as at a full disk (nothing pruned, no folder given its
  ///   times; the re-run does it), with ``RunResults/interrupted`` set.
  /// - Returns: lines for stderr (failures, and with `-v` each entry).
  func finish(
    _ plan: MirrorPlan, results: inout RunResults, walkErrors: Int,
    stopped: () -> Bool = { false }
  ) -> [String] {
    var report = MirrorEntries.Report()
    // One fstatfs a mirror run: on FUSE each sync below fsyncs the mirror's folders.
    let hollow = Descriptor.syncFileSystemIsHollow(base)
    let writer = entries
    let heldLinks = writer.writeLinks(
      plan, results: &results, report: &report, stopped: stopped)
    let heldFiles = results.held
    let waiting = Set(heldFiles.map(\.file))
    writer.linkFollowers(
      plan, waiting: waiting, results: &results, report: &report, stopped: stopped)
    if results.interrupted {
      // A link or a further name found no room, or a signal came: the run stops here, as
      // it does when an output finds none (nothing pruned, no folder given its times; the
      // re-run does it).
      results.abandonHeld()
      return report.lines
    }
    if settings.deletes {
      if walkErrors > 0 {
        results.deletionsSkipped = true
        report.lines.append(
          "squeeze: deletions skipped: \(walkErrors) walk error\(walkErrors == 1 ? "" : "s")")
      } else if let error = syncError(base, plan: plan, hollow: hollow) {
        // What this run wrote must be on disk before anything is removed; when that cannot
        // be made sure of, nothing is.
        if let full = syncFullDisk(error) {
          // No room: the run stops here, said once (FullDisk), nothing pruned.
          results.fullDisk = full
          results.interrupted = true
          results.abandonHeld()
          return report.lines
        }
        results.deletionsSkipped = true
        report.lines.append(
          "squeeze: deletions skipped: cannot sync '\(settings.plan.mirrorDisplay("").displayString)' to disk: \(error)"
        )
      } else {
        if let pruned = deletion(
          of: plan, dryRun: false, walkErrors: walkErrors, linkedInodes: report.linkedInodes)
        {
          results.deleted += pruned.deleted
          results.keptForeign += pruned.keptForeign
          results.deletionsOverLimit += pruned.overLimit
          report.lines += pruned.warnings + pruned.lines
          if pruned.overLimit > 0, let limit = settings.maxDeletions {
            report.lines.append(MirrorDeletion.limitMessage(limit, kept: pruned.overLimit))
          }
          for failure in pruned.failures {
            results.entryFailures.append(failure)
            report.lines.append("squeeze: \(failure)")
          }
        }
      }
    }
    var held: [(file: Int?, source: RawPath, replacement: HeldReplacement)] = heldFiles.map {
      ($0.file, list.displayPath(of: list.files[$0.file]), $0.replacement)
    }
    held += heldLinks.map { (nil, $0.display, $0) }
    writer.complete(held, results: &results, report: &report)
    if !waiting.isEmpty {
      writer.linkFollowers(plan, leaders: waiting, results: &results, report: &report)
    }
    if results.fullDisk != nil { return report.lines }
    // Before the folders get their sources' times: writing the manifest changes the top's.
    if settings.operation == .compress,
      let failure = record(
        plan.made.merging(report.made) { _, later in later },
        commitBeforeWriting: { hollow ? syncError(base, plan: plan, hollow: true) : nil })
    {
      results.entryFailures.append(failure.failure)
      if let full = failure.fullDisk {
        // No room for the manifest: the run stops here, said once.
        results.fullDisk = full
        results.interrupted = true
        return report.lines
      }
      report.lines.append("squeeze: \(failure.failure)")
    }
    let unfinished = folders.finalize(plan)
    for (_, failure) in unfinished {
      results.entryFailures.append(failure)
      report.lines.append("squeeze: \(failure)")
    }
    report.lines += folders.count(
      plan, failed: Set(unfinished.map(\.folder)), results: &results, verbose: verbose)
    // The links, folders' metadata and manifest written above are on disk when the run
    // ends, or the run fails.
    if let error = syncError(base, plan: plan, hollow: hollow) {
      let failure = DiscoveryFailure(
        path: settings.plan.mirrorDisplay(""), cause: "cannot sync to disk: \(error)")
      results.entryFailures.append(failure)
      if let full = syncFullDisk(error) {
        // Said once, in the run's full-disk line (status 74).
        results.fullDisk = full
      } else {
        report.lines.append("squeeze: \(failure)")
      }
    }
    return report.lines
  }

  /// The full file system when syncing the mirror failed for lack of room (`ENOSPC`,
  /// `EDQUOT`), or nil.
  private func syncFullDisk(_ error: SystemError) -> FullDisk? {
    let mirror = settings.plan.mirrorDisplay("")
    return FullDisk(
      path: mirror, error: error,
      cause: "'\(mirror.displayString)': cannot sync to disk: \(error)")
  }

  /// Syncs the file system holding `folder` (`syncfs(2)`); where that commits nothing
  /// (`hollow`: FUSE, ``Descriptor/syncFileSystemIsHollow(_:)``), fsyncs instead every
  /// folder of `plan` this run could make or use, deepest first and the mirror itself last:
  /// their entries (symbolic links, further hard-link names, the files' names), their own
  /// metadata, and each folder's name in its parent. Files' data is the publisher's to sync.
  ///
  /// - Returns: the first error (`openat(2)`, `fsync(2)`), or nil once it is on disk.
  private func syncError(_ folder: Int32, plan: MirrorPlan, hollow: Bool) -> SystemError? {
    do throws(SystemError) {
      guard hollow else {
        try Descriptor.syncFileSystem(folder)
        return nil
      }
      for index in plan.folders.indices.reversed() where plan.usable[index] {
        let path = plan.folders[index].path
        if path.isEmpty { continue }
        try FileDescriptor.open(path, in: folder, flags: .folder, symlinks: .never).sync()
      }
      try Descriptor.sync(folder)
      return nil
    } catch {
      return error
    }
  }
}
