import SqueezeSystem

/// `--delete`: removes the mirror's entries whose source no longer exists or is no longer
/// the kind of entry it mirrored, as `rsync -a --delete` does, and only what squeeze itself
/// put there.
///
/// - Only each argument's own destination is pruned (`M/x/` for `x`, all of M for `x/`);
///   entries of M that no argument maps to are never touched.
/// - Removed: outputs squeeze wrote (regular files named `<source><suffix>` whose gzip header
///   names that source, or name another name of its hard-link group beside it or listed in
///   the manifest), and the symbolic links and folders the mirror's manifest lists with the
///   identity they have now (``MirrorManifest``), a folder once squeeze's entries in it are
///   gone. Anything else is kept and is no failure (listed under `-v`, counted as kept): a
///   user's files, links and folders, empty or not (a user's folder is looked into for
///   squeeze's outputs, never changed otherwise), and, until a run has recorded them, the
///   links and folders of a mirror made before squeeze kept a manifest.
/// - Resuming an unfinished snapshot (`--link-dest` into a folder holding its marker), the
///   run prunes as if `--delete` were given, and every gzip file, link and folder in it is
///   squeeze's, recorded or not: the folder was empty when the marker was written, and a
///   run killed before it recorded its entries left them unrecorded. Other regular files
///   and special files are still kept.
/// - Sources still there are never pruned, whatever left them out of the run (`--include`,
///   `--exclude`, `--older-than`, `--one-file-system`): only absence, or another kind, counts.
/// - Safety: this runs after the run's new outputs are durable; right before each removal
///   the source's absence is checked again with `lstat`; entries whose `st_ctime` is not
///   earlier than the run's start are kept (an overlapping run made them), unless the only
///   change is this run's own hard links of that inode (a further name of a hard-link group
///   linked to an output a removed name shares) or its own removals of the inode's other
///   names (a group whose every name is gone); folders are removed with `AT_REMOVEDIR`,
///   which fails on a folder that is not empty. Every path is opened below the mirror's own
///   descriptor without following links. A folder squeeze did not make is never made
///   writable, nor removed.
struct MirrorDeletion {
  /// The run's listing.
  let list: FileList
  /// The mirror's folders and their sources.
  let plan: MirrorPlan
  /// Naming, links followed or not.
  let settings: FileSettings
  /// The open folders.
  let bases: BaseDirectories
  /// The mirror's open folder.
  let base: Int32
  /// When the run started, on the clock file times are stamped with (coarse real time).
  let runStart: Timestamp
  /// List what would go, remove nothing.
  let dryRun: Bool
  /// Print a line per removal and per foreign entry kept.
  let verbose: Bool
  /// Removes stale temporaries of dead runs met in pruned folders.
  let namer: TemporaryNamer
  /// What squeeze recorded it made in the mirror (empty when the mirror has no usable
  /// manifest: then no link or folder is removed).
  let manifest: MirrorManifest
  /// The inodes this run itself linked further hard-link names to (``MirrorEntries``), with
  /// their change times: the `st_ctime` guard does not take these links for a change by
  /// someone else.
  var linkedInodes: [FileIdentity: LinkedInode] = [:]

  /// What pruning did.
  struct Report {
    /// Entries removed (or, in a dry run, that would be).
    var deleted = 0
    /// Entries that would have been removed but were kept because `--max-delete`
    /// (``FileSettings/maxDeletions``) was reached; in a dry run, that would be.
    var overLimit = 0
    /// Entries left alone because squeeze did not write them.
    var keptForeign = 0
    /// Lines for stderr (`-v`).
    var lines: [String] = []
    /// Warnings for stderr, in a dry run too (a manifest that cannot be used).
    var warnings: [String] = []
    /// In a dry run, the entries that would be deleted, as displayed.
    var deletedPaths: [RawPath] = []
    /// Entries that could not be examined or removed.
    var failures: [DiscoveryFailure] = []
    /// The inodes whose other names this run's own removals changed (unlinking one name of
    /// a hard-link group sets the change time of the inode the others share), with their
    /// change times before the first removal and after the last: the `st_ctime` guard does
    /// not take such a removal for a change by someone else.
    var unlinkedInodes: [FileIdentity: LinkedInode] = [:]
  }

  /// The line for entries kept by `--max-delete`: `squeeze: deletions stopped at
  /// --max-delete=2: 3 entries whose source is gone were kept` (rsync says `Deletions
  /// stopped due to --max-delete limit (3 skipped)`), and in a dry run what would happen.
  static func limitMessage(_ limit: Int, kept: Int, dryRun: Bool = false) -> String {
    let entries =
      kept == 1 ? "1 entry whose source is gone" : "\(kept) entries whose source is gone"
    if dryRun {
      return "squeeze: deletions would stop at --max-delete=\(limit): \(entries) would be kept"
    }
    return
      "squeeze: deletions stopped at --max-delete=\(limit): \(entries) \(kept == 1 ? "was" : "were") kept"
  }

  /// One source place an entry of the mirror may mirror: a folder descriptor and the path
  /// below it.
  private typealias SourcePath = (base: Int32, path: RawPath)

  /// Prunes every folder argument's destination.
  func run() -> Report {
    var report = Report()
    var children: [Int: [RawPath: Int]] = [:]
    for (index, folder) in plan.folders.enumerated() where folder.parent >= 0 {
      children[folder.parent, default: [:]][
        MirrorPlan.location(ofFolder: folder.path, base: -1).name] = index
    }
    var pending: [Int] = []
    var seen: Set<Int> = []
    for (index, directory) in list.directories.enumerated() where directory.parent < 0 {
      let root = list.roots[Int(directory.root)]
      guard !root.isFileArgument, !plan.leftOutRoots.contains(Int(directory.root)) else {
        continue
      }
      let folder = plan.folderOfDirectory[index]
      if folder >= 0 && plan.usable[folder] && seen.insert(folder).inserted {
        pending.append(folder)
      }
    }
    while let folder = pending.popLast() {
      pending += prune(mirrored: folder, children: children[folder] ?? [:], report: &report)
    }
    return report
  }

  /// The source places of entry `name` of mirrored folder `folder`.
  private func sources(of name: RawPath, in folder: Int) -> [SourcePath] {
    plan.folders[folder].sources.map { directory in
      let root = list.roots[Int(list.directories[Int(directory)].root)]
      return (
        bases.descriptor(root.base), list.relativePath(ofDirectory: directory).appending(name)
      )
    }
  }

  /// Names at the mirror's top that file and link arguments put there: never pruned.
  private var namesOfArgumentEntries: Set<RawPath> {
    var names: Set<RawPath> = []
    for file in list.files where list.root(of: file).isFileArgument {
      if let name = settings.plan.outputName(for: list.name(of: file)) { names.insert(name) }
    }
    for link in list.links
    where list.roots[Int(list.directories[Int(link.directory)].root)]
      .isFileArgument
    {
      names.insert(list.name(of: link))
    }
    return names
  }

  /// Prunes the entries of a mirrored folder that mirror nothing.
  ///
  /// - Returns: the mirrored subfolders to prune next.
  private func prune(
    mirrored folder: Int, children: [RawPath: Int], report: inout Report
  ) -> [Int] {
    let path = plan.folders[folder].path
    let entries: [(name: RawPath, type: UInt8)]
    do {
      let opened = try FileDescriptor.open(
        path.isEmpty ? "." : path, in: base, flags: .folder)
      entries = try DirectoryReader.entries(of: opened.rawValue)
    } catch {
      report.failures.append(
        DiscoveryFailure(
          path: settings.plan.mirrorDisplay(path), cause: "cannot list for --delete: \(error)"))
      return []
    }
    let kept = path.isEmpty ? namesOfArgumentEntries : []
    var next: [Int] = []
    var judged: [Judged] = []
    for entry in entries.sorted(by: { $0.name < $1.name }) {
      let name = entry.name
      if TemporaryNamer.isTemporary(name) {
        // A killed run's: removed (never a live run's, see TemporaryNamer).
        if !dryRun,
          let opened = try? FileDescriptor.open(
            path.isEmpty ? "." : path, in: base, flags: .folder)
        {
          _ = TemporaryCleaner.removeIfStale(name, in: opened.rawValue, namer: namer)
        }
        continue
      }
      if kept.contains(name) { continue }
      if path.isEmpty
        && (name == ArchiveMarker.name || name == MirrorManifest.name
          || name == SnapshotMarker.name)
      {
        continue
      }
      let child = RelativeLocation(base: base, directory: path, name: name)
      guard let status = examine(child, report: &report) else { continue }
      if status.kind == .directory, let subfolder = children[name],
        plan.usable[subfolder] && plan.isMirrored[subfolder]
      {
        next.append(subfolder)
        continue
      }
      judged.append(judge(child, status: status, sources: { sources(of: $0, in: folder) }))
    }
    // Every entry is judged before any is removed: a further name of a hard-link group is
    // known by its group's output beside it, which may be removed too.
    for entry in judged { _ = apply(entry, report: &report) }
    return next
  }

  /// An entry of a folder being pruned and what is to become of it.
  private struct Judged {
    var location: RelativeLocation
    var status: FileStatus
    /// The places of its source (all absent when it is to go).
    var places: [SourcePath]
    var verdict: Verdict
  }

  /// What pruning decides about one entry.
  private enum Verdict {
    /// It mirrors a source that is there: kept.
    case mirrors
    /// Squeeze did not make it (or cannot prove it did): kept, and reported.
    case foreign
    /// Squeeze made it, and it mirrors nothing now: removed.
    case remove(FileKind)
    /// A folder that mirrors nothing: pruned inside, then removed if squeeze made it and it
    /// is empty.
    case folder
    /// Whether squeeze made it cannot be told (its header or identity cannot be read): kept,
    /// and reported as a failure.
    case unexaminable(SystemError)
  }

  /// The status of the entry at `location`, or nil when it is gone or cannot be examined
  /// (then a failure is reported: it is kept, and the run is not a success).
  private func examine(_ location: RelativeLocation, report: inout Report) -> FileStatus? {
    do {
      return try location.entryStatus()
    } catch  where error == .noSuchFile {
      return nil
    } catch {
      report.failures.append(
        DiscoveryFailure(
          path: display(location), cause: "cannot examine for --delete: \(error); kept"))
      return nil
    }
  }

  /// Decides about the entry at `location` without changing anything.
  ///
  /// - Parameter sources: the source places of a name in `location`'s folder.
  private func judge(
    _ location: RelativeLocation, status: FileStatus, sources: (RawPath) -> [SourcePath]
  ) -> Judged {
    let name = location.name
    var judged = Judged(location: location, status: status, places: [], verdict: .foreign)
    do throws(SystemError) {
      switch status.kind {
      case .regular:
        guard let sourceName = sourceName(ofOutput: name) else { return judged }
        judged.places = sources(sourceName)
        if try exists(judged.places, as: .regular) {
          judged.verdict = .mirrors
        } else if try isOutput(location, of: sourceName) {
          judged.verdict = .remove(.regular)
        }
      case .symbolicLink:
        judged.places = sources(name)
        if try exists(judged.places, as: .symbolicLink) {
          judged.verdict = .mirrors
        } else if settings.resumesSnapshot {
          judged.verdict = .remove(.symbolicLink)
        } else if try manifest.lists(location.relativePath, in: base) {
          judged.verdict = .remove(.symbolicLink)
        }
      case .directory:
        judged.places = sources(name)
        // There, but not walked (excluded, another file system): kept.
        judged.verdict = try exists(judged.places, as: .directory) ? .mirrors : .folder
      default:
        break
      }
    } catch {
      judged.verdict = .unexaminable(error)
    }
    return judged
  }

  /// Does what `entry`'s verdict says.
  ///
  /// - Returns: true when the entry is gone (or, in a dry run, would be).
  private func apply(_ entry: Judged, report: inout Report) -> Bool {
    switch entry.verdict {
    case .mirrors:
      return false
    case .foreign:
      return keepForeign(
        entry.location, report: &report,
        why: entry.status.kind == .regular ? "not written by squeeze" : Self.notMade)
    case .remove(let kind):
      return removeEntry(
        entry.location, status: entry.status, places: entry.places, kind: kind, report: &report)
    case .folder:
      return prune(
        unmirrored: entry.location, status: entry.status, places: entry.places, report: &report)
    case .unexaminable(let error):
      report.failures.append(
        DiscoveryFailure(
          path: display(entry.location), cause: "cannot examine for --delete: \(error); kept"))
      return false
    }
  }

  /// Prunes a folder whose source is gone of what squeeze made in it (outputs by their
  /// header, links and folders by the manifest), then removes it if squeeze made it too and
  /// nothing else is left in it. A folder squeeze did not make is looked into (outputs in it
  /// are squeeze's by their header) but never changed otherwise, nor removed.
  private func prune(
    unmirrored location: RelativeLocation, status: FileStatus, places: [SourcePath],
    report: inout Report
  ) -> Bool {
    if status.changeTime >= runStart { return keptNew(location, report: &report) }
    let made: Bool
    do {
      made = settings.resumesSnapshot ? true : try manifest.lists(location.relativePath, in: base)
    } catch {
      report.failures.append(
        DiscoveryFailure(
          path: display(location), cause: "cannot examine for --delete: \(error); kept"))
      return false
    }
    if made && !dryRun && status.permissions & 0o700 != 0o700 {
      let writable = location.isWritableFolder()
      if !writable { try? location.setFolderPermissions(UInt32(status.permissions | 0o700)) }
    }
    let entries: [(name: RawPath, type: UInt8)]
    do {
      let opened = try FileDescriptor.open(
        location.relativePath, in: base, flags: .folder)
      entries = try DirectoryReader.entries(of: opened.rawValue)
    } catch {
      guard made else { return keepForeign(location, report: &report, why: Self.notMade) }
      report.failures.append(
        DiscoveryFailure(
          path: display(location), cause: "cannot list for --delete: \(error)"))
      return false
    }
    var allGone = true
    var judged: [Judged] = []
    for entry in entries.sorted(by: { $0.name < $1.name }) {
      let child = RelativeLocation(base: base, directory: location.relativePath, name: entry.name)
      if TemporaryNamer.isTemporary(entry.name) {
        allGone = false  // a live run's, or removed by the next run's cleaning
        continue
      }
      guard let childStatus = examine(child, report: &report) else {
        allGone = false
        continue
      }
      judged.append(
        judge(
          child, status: childStatus,
          sources: { name in places.map { ($0.base, $0.path.appending(name)) } }))
    }
    for entry in judged {
      let gone = apply(entry, report: &report)
      allGone = allGone && gone
    }
    guard made else { return keepForeign(location, report: &report, why: Self.notMade) }
    guard allGone else { return false }
    return removeEntry(location, status: status, places: places, kind: .directory, report: &report)
  }

  /// Removes one entry after the last checks: not changed since the run started, and its
  /// source still absent (`lstat`, right before the removal).
  private func removeEntry(
    _ location: RelativeLocation, status: FileStatus, places: [SourcePath], kind: FileKind,
    report: inout Report
  ) -> Bool {
    // A folder's own time changed when its entries were removed just now: it was checked
    // before that.
    let identity = FileIdentity(status)
    let ownChange = report.unlinkedInodes[identity] ?? linkedInodes[identity]
    if kind != .directory && status.changeTime >= runStart
      && ownChange?.onlyLinkedSince(runStart, status: status) != true
    {
      return keptNew(location, report: &report)
    }
    do {
      if try exists(places, as: kind) { return false }
    } catch {
      report.failures.append(
        DiscoveryFailure(
          path: display(location), cause: "cannot examine for --delete: \(error); kept"))
      return false
    }
    // As rsync's --max-delete: once the limit is reached, every further deletion is
    // skipped (and counted), after the same checks, so only what would go is counted.
    if let limit = settings.maxDeletions, report.deleted >= limit {
      report.overLimit += 1
      if verbose {
        report.lines.append("\(display(location).displayString): kept (--max-delete reached)")
      }
      return false
    }
    if dryRun {
      report.deleted += 1
      report.deletedPaths.append(display(location))
      return true
    }
    do {
      if kind == .regular && status.linkCount > 1 {
        try removeName(location, status: status, ownChange: ownChange, report: &report)
      } else {
        try location.removeEntry(folder: kind == .directory)
      }
    } catch  where error == .noSuchFile {
      return true
    } catch  where error == .directoryNotEmpty || error == .fileExists {
      return false
    } catch {
      report.failures.append(
        DiscoveryFailure(path: display(location), cause: "cannot delete: \(error)"))
      return false
    }
    report.deleted += 1
    if verbose { report.lines.append("\(display(location).displayString): deleted") }
    return true
  }

  /// Removes `location`, one name of a file with other names, and notes the change time
  /// the removal gave the names left (read through a descriptor held across the removal),
  /// so that removing them too is not refused as if someone else had changed them since
  /// the run started: an output shared by a hard-link group whose every source name is gone
  /// goes in one run, not one name a night.
  ///
  /// - Parameter ownChange: this run's own earlier changes of the inode, when `status`
  ///   shows one.
  /// - Throws: ``SystemError`` from `unlinkat(2)`.
  private func removeName(
    _ location: RelativeLocation, status: FileStatus, ownChange: LinkedInode?,
    report: inout Report
  ) throws(SystemError) {
    let held: FileDescriptor
    do {
      held = try location.open(flags: [.pathOnly, .noFollow])
    } catch {
      // Not noted: the names left are then kept until the next run, as before.
      try location.removeEntry()
      return
    }
    try location.removeEntry()
    guard let after = try? held.status(), after.isSameFile(as: status), after.linkCount > 0
    else { return }
    let before = status.changeTime < runStart ? status.changeTime : ownChange?.changeTimeBefore
    guard let before else { return }
    report.unlinkedInodes[FileIdentity(status)] = LinkedInode(
      changeTimeBefore: before, changeTime: after.changeTime,
      untouched: status.changeTime < runStart || ownChange?.untouched == true)
  }

  /// The source name an output called `name` has: `name` without the suffix.
  private func sourceName(ofOutput name: RawPath) -> RawPath? {
    let suffix = settings.plan.naming.suffix.bytes
    guard name.hasSuffix(suffix) else { return nil }
    return RawPath(bytes: name.bytes.dropLast(suffix.count))
  }

  /// True when the regular file at `location` is squeeze's output of `sourceName`: its
  /// FNAME names it, or it is a hard link of the output of another name of the same file,
  /// whose FNAME it carries: in the same folder, or listed in the manifest (a further name
  /// of a hard-link group squeeze linked).
  ///
  /// - Throws: ``SystemError`` when the file cannot be opened or read, or its manifest
  ///   identity examined.
  private func isOutput(
    _ location: RelativeLocation, of sourceName: RawPath
  ) throws(SystemError) -> Bool {
    guard let (header, status) = try ExistingOutput.readHeader(at: location),
      let named = header.name
    else { return false }
    if named == sourceName.bytes { return true }
    // In an unfinished snapshot every gzip file is squeeze's: the folder was empty when
    // it was marked.
    if settings.resumesSnapshot { return true }
    if try manifest.lists(location.relativePath, in: base) { return true }
    guard status.linkCount > 1 else { return false }
    let sibling = location.sibling(
      named: RawPath(bytes: named).addingSuffix(settings.plan.naming.suffix))
    return (try? sibling.entryStatus())?.isSameFile(as: status) ?? false
  }

  /// True when any of `places` holds an entry of `kind` (following a link there when links
  /// are followed: it was mirrored as what it leads to).
  ///
  /// - Throws: ``SystemError`` when a place cannot be examined (not `ENOENT`, `ENOTDIR` or
  ///   `ELOOP`): the source may be there, so its mirror is kept, and the failure reported.
  private func exists(_ places: [SourcePath], as kind: FileKind) throws(SystemError) -> Bool {
    for place in places {
      let location = MirrorPlan.location(ofFolder: place.path, base: place.base)
      do {
        var status = try location.entryStatus()
        if status.kind == .symbolicLink && settings.followsSymlinks && kind != .symbolicLink {
          status = try FileStatus.of(place.path, in: place.base, followingSymlinks: true)
        }
        if status.kind == kind { return true }
      } catch
        where [SystemError.noSuchFile, .notADirectory, .symbolicLinkLoop].contains(error)
      {
        continue
      }
    }
    return false
  }

  /// Why a link or folder is kept.
  private static let notMade = "not recorded as made by squeeze"

  private func keepForeign(
    _ location: RelativeLocation, report: inout Report, why: String = "not written by squeeze"
  ) -> Bool {
    report.keptForeign += 1
    if verbose { report.lines.append("\(display(location).displayString): kept (\(why))") }
    return false
  }

  private func keptNew(_ location: RelativeLocation, report: inout Report) -> Bool {
    if verbose {
      report.lines.append(
        "\(display(location).displayString): kept (changed since this run started)")
    }
    return false
  }

  private func display(_ location: RelativeLocation) -> RawPath {
    settings.plan.mirrorDisplay(location.relativePath)
  }
}
