import SqueezeSystem

/// `--dry-run`: what a run would compress (or decompress), link, skip, remove and delete,
/// from the run's own plan (``RunPlan``: existing outputs inspected read-only), with nothing
/// changed. The plan is a result, so it goes to stdout (a line per step, or `plan` inside
/// `--json`); its one-line summary is a message, on stderr.
struct DryRun {
  let settings: FileSettings
  let list: FileList
  let bases: BaseDirectories

  /// What the dry run found: the numbers a run in its place reports, kind by kind, from the
  /// same plan the run executes.
  struct Counts {
    /// Files that would be written.
    var would = 0
    /// Files whose output is already current, further names of hard-link groups included
    /// (their output already is a hard link of the group's).
    var upToDate = 0
    /// Files that would fail.
    var failing = 0
    /// Sources that would be removed (`--rm`).
    var removing = 0
    /// Files whose output would be a hard link of an earlier snapshot's (`--link-dest`).
    var linked = 0
    /// Further names of hard-link groups that would be made hard links of their group's
    /// output.
    var hardLinks = 0
    /// Symbolic links that would be written (created, replaced, or retimed in place).
    var links = 0
    /// Symbolic links already right.
    var linksUpToDate = 0
    /// Folders below the mirror's top that would be made (``FolderState/made``).
    var foldersMade = 0
    /// Folders below the mirror's top that would be given their source's metadata again
    /// (``FolderState/updated``).
    var foldersUpdated = 0
    /// Folders below the mirror's top already right (``FolderState/upToDate``).
    var foldersUpToDate = 0
  }

  /// One line of the plan: what would happen to one path.
  struct Step: Sendable, Equatable, Encodable {
    /// What would be done, as `--json`'s `plan[].action` names it.
    enum Action: String, Sendable {
      /// The file would be compressed to ``Step/output``.
      case compress
      /// The file would be restored to ``Step/output``.
      case decompress
      /// Its output is current: nothing to do.
      case upToDate
      /// It would fail; ``Step/cause`` says why.
      case fail
      /// Its original would be removed (`--rm`).
      case remove
      /// Its original would be kept despite `--rm`; ``Step/cause`` says why.
      case keep
      /// Discovery passes over it; ``Step/reason`` says why.
      case skip
      /// A symbolic link would be stored at ``Step/output`` (a mirror).
      case link
      /// A further name of a hard-link group would become a hard link at ``Step/output``
      /// of its group's output (``Step/cause``).
      case hardLink
      /// A mirror entry would be deleted (`--delete`).
      case delete
      /// The file's output at ``Step/output`` would be a hard link of an earlier snapshot's
      /// output (``Step/cause``: `--link-dest`).
      case linkFromSnapshot
      /// A mirror folder would be made at ``Step/output`` for the source folder ``Step/path``.
      case makeFolder
      /// The mirror folder at ``Step/output`` would be given the source folder's owner,
      /// permission bits and times again.
      case updateFolder
    }
    /// What would be done.
    var action: Action
    /// The source (or skipped entry), as displayed.
    var path: RawPath
    /// The output it would be written to (`compress`, `decompress`).
    var output: RawPath? = nil
    /// Why: the failure, why a source is kept, or the skip reason's phrase.
    var cause: String? = nil
    /// The skip reason (`skip`), as `--json`'s `byReason` keys name it.
    var reason: SkipReason? = nil

    /// The plan's line: `would compress: a → a.gz`.
    var line: String {
      let source = path.displayString
      switch action {
      case .compress, .decompress:
        return "would \(action.rawValue): \(source) → \(output?.displayString ?? "")"
      case .upToDate: return "up to date: \(source)"
      case .fail: return "would fail: \(source): \(cause ?? "")"
      case .remove: return "would remove: \(source)"
      case .keep: return "would keep: \(source) (\(cause ?? ""))"
      case .skip: return "would skip: \(source) (\(cause ?? ""))"
      case .link: return "would link: \(source) → \(output?.displayString ?? "")"
      case .hardLink:
        return "would hard-link: \(source) → \(output?.displayString ?? "") (\(cause ?? ""))"
      case .delete: return "would delete: \(source)"
      case .linkFromSnapshot:
        return
          "would link from snapshot: \(source) → \(output?.displayString ?? "") (\(cause ?? ""))"
      case .makeFolder: return "would make folder: \(source) → \(output?.displayString ?? "")"
      case .updateFolder:
        return "would update folder: \(source) → \(output?.displayString ?? "")"
      }
    }

    /// The step as a `--json` object: `{"action","path","output"|"cause"|"of"|"reason"}`.
    func encode(to encoder: any Encoder) throws {
      var object = encoder.container(keyedBy: Key.self)
      try object.encode(action.rawValue, forKey: .action)
      try object.encode(path.displayString, forKey: .path)
      if let output { try object.encode(output.displayString, forKey: .output) }
      let namesOther = action == .hardLink || action == .linkFromSnapshot
      if let cause, action != .skip && !namesOther {
        try object.encode(cause, forKey: .cause)
      }
      if namesOther, let cause { try object.encode(cause, forKey: .of) }
      if let reason { try object.encode(reason.rawValue, forKey: .reason) }
    }

    private enum Key: String, CodingKey {
      case action, path, output, cause, of, reason
    }
  }

  /// The plan: one step per file, folder, link, hard link, skip and deletion, from `plan`.
  ///
  /// - Parameter folders: the mirror's folders, to examine what is where they go; nil when
  ///   the mirror does not exist yet (every folder would be made).
  func steps(
    plan: RunPlan, skipped: [(path: RawPath, reason: SkipReason)],
    deletions: MirrorDeletion.Report?, folders: MirrorFolders? = nil
  ) -> (steps: [Step], counts: Counts) {
    var counts = Counts()
    var steps: [Step] = []
    // The folders first: entries in a folder the run could not make are left out, as the
    // run leaves them out.
    var mirror = plan.mirror
    var folderSteps: [Step] = []
    if var judged = mirror {
      folderSteps = self.folderSteps(&judged, folders: folders, counts: &counts)
      mirror = judged
    }
    for (index, disposition) in plan.dispositions.enumerated() where disposition != .leftOut {
      if let mirror, !mirror.isUsable(directory: list.files[index].directory) { continue }
      steps += fileSteps(index, disposition, counts: &counts)
    }
    if let mirror {
      steps += folderSteps
      steps += mirrorSteps(mirror, dispositions: plan.dispositions, counts: &counts)
    }
    for (path, reason) in skipped {
      steps.append(Step(action: .skip, path: path, cause: reason.phrase, reason: reason))
    }
    for path in deletions?.deletedPaths ?? [] { steps.append(Step(action: .delete, path: path)) }
    return (steps, counts)
  }

  /// The steps of file `index`.
  private func fileSteps(
    _ index: Int, _ disposition: FileDisposition, counts: inout Counts
  ) -> [Step] {
    let file = list.files[index]
    let source = list.displayPath(of: file)
    guard var name = settings.plan.outputName(for: list.name(of: file)) else {
      counts.failing += 1
      return [Step(action: .fail, path: source, cause: "\(FileFailure.unknownSuffix)")]
    }
    var display = settings.plan.displayPath(named: name, of: file, in: list)
    let failure: FileFailure?
    switch disposition {
    case .fails(let planned): failure = planned
    case .work where settings.operation == .decompress && settings.usesHeaderNameAndTime:
      // `-N`: the run restores under the header's name, and judges what is there then.
      do throws(FileFailure) {
        if let stored = try DecompressionJob.headerName(
          of: index, list: list, bases: bases, settings: settings)
        {
          name = stored
          display = settings.plan.displayPath(named: name, of: file, in: list)
        }
        let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
        let existing = try existingRestore(at: target, display: display)
        failure =
          isSource(existing, named: name, of: file)
          ? .outputIsSource(display) : self.failure(existing, display: display)
      } catch {
        failure = error
      }
    case .work(let existing) where settings.operation == .decompress:
      failure =
        isSource(existing, named: name, of: file)
        ? .outputIsSource(display) : self.failure(existing, display: display)
    case .work(let existing): failure = self.failure(existing, display: display)
    case .upToDate, .leftOut, .link: failure = nil
    }
    if let failure {
      counts.failing += 1
      return [Step(action: .fail, path: source, cause: "\(failure)")]
    }
    if disposition == .upToDate {
      counts.upToDate += 1
      return [Step(action: .upToDate, path: source)]
    }
    if case .link(let linked) = disposition,
      linked.destination < settings.linkDestinations.count
    {
      counts.linked += 1
      let relative = list.mirrorPath(ofDirectory: file.directory).appending(name)
      let earlier = settings.linkDestinations[linked.destination].display.appending(relative)
      return [
        Step(
          action: .linkFromSnapshot, path: source, output: display,
          cause: earlier.displayString)
      ]
    }
    counts.would += 1
    var steps = [
      Step(
        action: settings.operation == .compress ? .compress : .decompress, path: source,
        output: display)
    ]
    if settings.removesSources {
      if file.linkCount > 1 && !settings.force {
        steps.append(
          Step(
            action: .keep, path: source,
            cause: "\(file.linkCount) hard links; use --force to remove it"))
      } else {
        counts.removing += 1
        steps.append(Step(action: .remove, path: source))
      }
    }
    return steps
  }

  /// What sits at `target` for a `-N` restore, judged as the run judges it when it has no
  /// plan for that name (``DecompressionJob``): a file or, beside the sources, a link is
  /// another file's; anything else but nothing is in the way.
  ///
  /// - Throws: ``FileFailure/cannotCreateOutput(_:_:)`` when `target` cannot be examined
  ///   for a reason other than not existing.
  private func existingRestore(at target: RelativeLocation, display: RawPath) throws(FileFailure)
    -> ExistingOutput
  {
    do throws(SystemError) {
      return try ExistingOutput.inspectUnplannedRestore(target, inMirror: settings.inMirror)
    } catch {
      throw .cannotCreateOutput(display, error)
    }
  }

  /// True when a restore's output path (`name`, where `existing` was found) is the `.gz`
  /// file itself (``ExistingOutput/isSource(_:source:)``): the run refuses it. Only looked
  /// at when something is there (an output folder a dry run would make has nothing).
  private func isSource(
    _ existing: ExistingOutput?, named name: RawPath, of file: FileList.File
  ) -> Bool {
    guard let existing, existing != .absent else { return false }
    let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
    return ExistingOutput.isSource(
      target, source: FileIdentity(device: file.device, inode: file.inode))
  }

  /// Why the entry the plan found at an output path would make the file fail, or nil.
  private func failure(_ existing: ExistingOutput?, display: RawPath) -> FileFailure? {
    switch existing {
    case .foreign? where !settings.force: settings.foreignOutputFailure(display)
    case .inTheWay(let kind)?: .outputInTheWay(display, kind)
    case .folderInTheWay(empty: false)? where !settings.deletes: .folderNotEmpty(display)
    default: nil
    }
  }

  /// The steps of a mirror's folders below its top, in listing order (parents first), judged
  /// as ``MirrorFolders/prepare(_:)`` judges them when the run makes them: each counted
  /// once, as the run counts it. A folder the run could not make would fail, and is marked
  /// not usable in `mirror` (its entries are left out then).
  private func folderSteps(
    _ mirror: inout MirrorPlan, folders: MirrorFolders?, counts: inout Counts
  ) -> [Step] {
    var steps: [Step] = []
    var made = [Bool](repeating: true, count: mirror.folders.count)
    var usable = [Bool](repeating: true, count: mirror.folders.count)
    for (index, folder) in mirror.folders.enumerated() {
      guard folder.parent >= 0 else {
        made[index] = folders == nil
        continue
      }
      guard usable[folder.parent] else {
        usable[index] = false
        continue
      }
      let state: FolderState
      do {
        state =
          try folders?.expectedState(index, in: mirror, parentIsNew: made[folder.parent])
          ?? .made
      } catch {
        usable[index] = false
        made[index] = false
        if mirror.isMirrored[index] {
          counts.failing += 1
          steps.append(
            Step(
              action: .fail, path: list.displayPath(ofDirectory: folder.sources[0]),
              cause: "cannot make this mirror folder: \(error)"))
        }
        continue
      }
      made[index] = state == .made
      guard mirror.isMirrored[index] else { continue }
      let source = list.displayPath(ofDirectory: folder.sources[0])
      let display = settings.plan.mirrorDisplay(folder.path)
      switch state {
      case .made:
        counts.foldersMade += 1
        steps.append(Step(action: .makeFolder, path: source, output: display))
      case .updated:
        counts.foldersUpdated += 1
        steps.append(Step(action: .updateFolder, path: source, output: display))
      case .upToDate:
        counts.foldersUpToDate += 1
        steps.append(Step(action: .upToDate, path: source))
      }
    }
    mirror.usable = usable
    return steps
  }

  /// The steps of a mirror's links and hard links, judged as ``MirrorEntries`` judges them
  /// when the run writes them: every link and further name counted once, as the run counts
  /// it.
  private func mirrorSteps(
    _ mirror: MirrorPlan, dispositions: [FileDisposition], counts: inout Counts
  ) -> [Step] {
    var steps: [Step] = []
    for planned in mirror.links where mirror.isUsable(directory: list.links[planned.link].directory)
    {
      let link = list.links[planned.link]
      let source = list.displayPath(of: link)
      let display = settings.plan.mirrorDisplay(
        list.mirrorPath(ofDirectory: link.directory).appending(list.name(of: link)))
      if let failure = failure(planned.existing, display: display) {
        counts.failing += 1
        steps.append(Step(action: .fail, path: source, cause: "\(failure)"))
      } else if planned.existing == .upToDate {
        counts.linksUpToDate += 1
        steps.append(Step(action: .upToDate, path: source))
      } else {
        counts.links += 1
        steps.append(Step(action: .link, path: source, output: display))
      }
    }
    for follower in mirror.followers
    where mirror.isUsable(directory: list.files[follower.file].directory) {
      let file = list.files[follower.file]
      let leader = list.files[follower.leader]
      guard let name = settings.plan.outputName(for: list.name(of: file)),
        let leaderName = settings.plan.outputName(for: list.name(of: leader))
      else { continue }
      let source = list.displayPath(of: file)
      let display = settings.plan.displayPath(named: name, of: file, in: list)
      let leaderDisplay = settings.plan.displayPath(named: leaderName, of: leader, in: list)
      if case .fails = dispositions[follower.leader] {
        counts.failing += 1
        steps.append(
          Step(
            action: .fail, path: source, cause: "\(FileFailure.groupOutputFailed(leaderDisplay))"))
        continue
      }
      if let failure = followerFailure(follower.existing, display: display) {
        counts.failing += 1
        steps.append(Step(action: .fail, path: source, cause: "\(failure)"))
      } else if follower.existing == .upToDate {
        counts.upToDate += 1
        steps.append(Step(action: .upToDate, path: source))
      } else {
        counts.hardLinks += 1
        steps.append(
          Step(
            action: .hardLink, path: source, output: display,
            cause: leaderDisplay.displayString))
      }
    }
    return steps
  }

  /// Why the entry where a further name of a hard-link group goes would make linking it
  /// fail, as ``MirrorEntries/linkFollowers(_:leaders:waiting:results:report:)`` decides.
  private func followerFailure(_ existing: ExistingOutput, display: RawPath) -> FileFailure? {
    switch existing {
    case .foreign where !settings.force: settings.foreignOutputFailure(display)
    case .inTheWay(let kind): .outputInTheWay(display, kind)
    case .folderInTheWay: .outputInTheWay(display, .directory)
    default: nil
    }
  }

  /// Writes the plan's text, a line per step (what `--dry-run` prints on stdout), in pieces
  /// of about 64 KiB: a plan of 100,000 files held its whole text, 30 MB, at once.
  ///
  /// - Returns: what the writes came to; a failed one is said on stderr, once.
  static func write(_ steps: [Step], to output: TextOutput) -> ResultsWrite {
    var text = ""
    for step in steps {
      text += step.line
      text += "\n"
      if text.utf8.count >= 64 << 10 {
        let written = output.writeResults(text, what: "the --dry-run plan")
        guard written == .written else { return written }
        text.removeAll(keepingCapacity: true)
      }
    }
    return text.isEmpty ? .written : output.writeResults(text, what: "the --dry-run plan")
  }

  /// The summary line (stderr): `squeeze: dry run: 2 would be compressed, …; nothing was
  /// changed`.
  ///
  /// - Parameters:
  ///   - deleted: with `--delete`, the entries that would be deleted.
  ///   - keptForeign: with `--delete`, the entries it would leave alone because squeeze did
  ///     not make them (said when not zero, in the run's words: `3 foreign kept`).
  func summary(_ counts: Counts, skipped: Int, deleted: Int? = nil, keptForeign: Int = 0)
    -> String
  {
    let verb = settings.operation == .compress ? "compress" : "decompress"
    var summary = [
      "\(ByteFormat.count(counts.would)) would be \(verb)ed",
      "\(ByteFormat.count(counts.upToDate)) up to date",
      "\(ByteFormat.count(skipped)) skipped",
    ]
    if !settings.linkDestinations.isEmpty {
      summary.insert(
        "\(ByteFormat.count(counts.linked)) would be linked from an earlier snapshot", at: 1)
    }
    if counts.hardLinks > 0 {
      summary.append("\(ByteFormat.count(counts.hardLinks)) would be hard-linked")
    }
    if counts.links > 0 {
      summary.append(
        "\(ByteFormat.count(counts.links, "symbolic link")) would be written"
      )
    }
    if counts.foldersMade > 0 {
      summary.append(
        "\(ByteFormat.count(counts.foldersMade, "folder")) would be made"
      )
    }
    if counts.foldersUpdated > 0 {
      summary.append(
        "\(ByteFormat.count(counts.foldersUpdated, "folder")) would be updated"
      )
    }
    if settings.removesSources {
      summary.append("\(ByteFormat.count(counts.removing)) would be removed")
    }
    if let deleted { summary.append("\(ByteFormat.count(deleted)) would be deleted") }
    if keptForeign > 0 { summary.append("\(ByteFormat.count(keptForeign)) foreign kept") }
    if counts.failing > 0 { summary.append("\(ByteFormat.count(counts.failing)) would fail") }
    return "squeeze: dry run: " + summary.joined(separator: ", ") + "; nothing was changed\n"
  }
}
