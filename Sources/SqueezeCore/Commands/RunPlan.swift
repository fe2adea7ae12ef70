import SqueezeSystem

/// What the plan decided for one listed file: its one disposition.
enum FileDisposition: Sendable, Equatable {
  /// To work on. `existing` is what sits at its output path, as the plan found it; nil when
  /// the job looks for itself (`-d -N`: the name comes from each header) or writes nothing
  /// (`-t`).
  case work(existing: ExistingOutput?)
  /// Its output is already current (not with `--force` or `--rm`): counted apart, never
  /// worked on.
  case upToDate
  /// It fails before starting (an output collision, a name clash): reported at once and
  /// counted as failed.
  indirect case fails(FileFailure)
  /// Its output is to be a hard link of an earlier snapshot's (`--link-dest`): the output
  /// there is current by the re-run rules and has every attribute the new one would get.
  /// Should the link fail (`EMLINK`, `EXDEV`), the file is compressed instead.
  case link(LinkSource)
  /// Left out: the same source reached twice, a further name of a hard-link group (linked
  /// instead), a file of an argument that collides with an earlier one.
  case leftOut
}

/// What a run will do with each listed entry, decided before any work starts (the "plan"
/// phase of ``RunCommand``) and never changed after: one ``FileDisposition`` per file, the
/// mirror's folders, links and hard-link groups, the failures that are not a file's, and the
/// totals progress is measured against (progress counts this run's work: files already up
/// to date are counted apart, so a re-run's bar does not start half full).
///
/// Existing outputs are inspected here, in parallel over contiguous ranges of the list (a
/// folder's files are contiguous), each range listing an output folder once (`getdents64`)
/// so that only names actually there are opened. The jobs then use these findings rather
/// than inspecting again.
struct RunPlan: Sendable {
  /// What becomes of each file, by index.
  let dispositions: [FileDisposition]
  /// Folders, links and hard-link groups of a mirror (`-o`, compressing or restoring).
  let mirror: MirrorPlan?
  /// Failures found while planning that are not a file's (colliding arguments, clashing
  /// links); reported with discovery's.
  let failures: [DiscoveryFailure]
  /// What progress is measured against, as planned (before a mirror's folders are made:
  /// ``totals(of:folders:)``).
  let progressTotals: ProgressTotals

  /// Plans a run over `list`, which it reads and never changes.
  ///
  /// - Parameters:
  ///   - list: the listing.
  ///   - settings: destination, naming, force, `--rm`.
  ///   - bases: the open folders.
  ///   - linksHardLinks: mirror hard-link groups as hard links (not with `--shard`, `--rm`).
  ///   - width: how many ranges are inspected at once.
  static func make(
    list: FileList, settings: FileSettings, bases: BaseDirectories,
    linksHardLinks: Bool, width: Int
  ) async -> RunPlan {
    // A dry run into an output folder that does not exist yet: nothing is there.
    var mirrorExists = true
    if case .mirror(let base, _) = settings.plan.destination { mirrorExists = base >= 0 }
    let (leftOutRoots, argumentFailures) = ArgumentCollisions.colliding(
      in: list, plan: settings.plan)
    var failures = argumentFailures
    // `-d -N` restores under the names in the headers: two files collide when those do.
    var headerNames: [Int: RawPath] = [:]
    if settings.operation == .decompress && settings.usesHeaderNameAndTime {
      for index in list.files.indices {
        // A header that cannot be read fails its file when the job opens it.
        if let name = try? DecompressionJob.headerName(
          of: index, list: list, bases: bases, settings: settings)
        {
          headerNames[index] = name
        }
      }
    }
    let (collisions, duplicates) = settings.plan.collisions(
      in: list, leavingOut: leftOutRoots, names: headerNames)
    var leftOut = duplicates
    for (index, file) in list.files.enumerated()
    where leftOutRoots.contains(Int(list.directories[Int(file.directory)].root)) {
      leftOut.insert(index)
    }
    var failing: [Int: FileFailure] = [:]
    // -t writes nothing: two files that would restore to one name are both tested.
    for (index, other) in collisions where settings.operation != .test {
      let file = list.files[index]
      failing[index] = .outputCollision(
        headerNames[index].map { settings.plan.displayPath(named: $0, of: file, in: list) }
          ?? settings.plan.displayPath(of: file, in: list), otherSource: other)
    }
    // A restore whose output is another file of this run (its header names that file):
    // a collision within the run, never an earlier run's output in the way.
    if settings.operation == .decompress {
      for (index, input) in settings.plan.outputsOnOtherInputs(in: list, names: headerNames)
      where failing[index] == nil && !leftOut.contains(index) {
        failing[index] = .outputIsAnotherInput(input)
      }
    }
    var mirror: MirrorPlan? = nil
    if settings.inMirror && settings.operation != .test {
      var planned = MirrorPlan.make(
        list: list, settings: settings, linksHardLinks: linksHardLinks, leavingOut: leftOutRoots)
      planned.followers.removeAll { leftOut.contains($0.file) }
      leftOut.formUnion(planned.droppedFiles)
      failing.merge(planned.failedFiles) { first, _ in first }
      failures += planned.failures
      mirror = planned
    }
    var existing: [ExistingOutput]? = nil
    if settings.operation != .test
      && !(settings.operation == .decompress && settings.usesHeaderNameAndTime)
    {
      let skip = leftOut.union(failing.keys)
      existing =
        mirrorExists
        ? await OutputInspection.inspectAll(
          list, settings: settings, bases: bases, skipping: skip,
          groupNames: mirror?.groupNames ?? [:], width: width)
        : Array(repeating: .absent, count: list.files.count)
    }
    if let found = existing, mirrorExists, settings.inMirror {
      existing = OutputInspection.recognizingGroupOutputs(
        found, list: list, settings: settings, bases: bases)
    }
    if let planned = mirror, let existing, mirrorExists {
      mirror = OutputInspection.inspectMirrorEntries(
        planned, existing: existing, list: list, settings: settings, bases: bases)
    }
    var links: [Int: LinkSource] = [:]
    // `-f` trusts no earlier output: with it a snapshot links nothing and writes every
    // output anew (the way to replace a backup that `--check` found to differ).
    if !settings.linkDestinations.isEmpty, !settings.force, let existing {
      let candidates = list.files.indices.filter {
        existing[$0] == .absent && !leftOut.contains($0) && failing[$0] == nil
      }
      links = await SnapshotLinks.plan(
        list, candidates: candidates, settings: settings, bases: bases, width: width)
    }
    let keepsCurrent = !settings.force && !settings.removesSources
    var dispositions: [FileDisposition] = []
    dispositions.reserveCapacity(list.files.count)
    for index in list.files.indices {
      if leftOut.contains(index) {
        dispositions.append(.leftOut)
      } else if let failure = failing[index] {
        dispositions.append(.fails(failure))
      } else if keepsCurrent, existing?[index] == .upToDate {
        dispositions.append(.upToDate)
      } else if let source = links[index] {
        dispositions.append(.link(source))
      } else {
        dispositions.append(.work(existing: existing?[index]))
      }
    }
    return RunPlan(
      dispositions: dispositions, mirror: mirror, failures: failures,
      progressTotals: totals(dispositions, of: list, folders: nil))
  }

  /// File `index`'s disposition once the mirror's folders have been made: the plan's, or
  /// ``FileDisposition/leftOut`` when its folder could not be made (`folders`, the mirror
  /// plan as ``MirrorFolders/prepare(_:)`` left it; nil without a mirror).
  func disposition(of index: Int, in list: FileList, folders: MirrorPlan?) -> FileDisposition {
    Self.disposition(dispositions[index], of: list.files[index], folders: folders)
  }

  private static func disposition(
    _ planned: FileDisposition, of file: FileList.File, folders: MirrorPlan?
  ) -> FileDisposition {
    if let folders, !folders.isUsable(directory: file.directory) { return .leftOut }
    return planned
  }

  /// The files up to date, the files to do and their bytes: what progress goes from 0 to
  /// 100 % over (a file that fails before starting counts as one to do, with no bytes).
  ///
  /// - Parameter folders: the mirror plan once its folders were made (files in folders that
  ///   could not be made are left out), or nil.
  func totals(of list: FileList, folders: MirrorPlan?) -> ProgressTotals {
    Self.totals(dispositions, of: list, folders: folders)
  }

  private static func totals(
    _ dispositions: [FileDisposition], of list: FileList, folders: MirrorPlan?
  ) -> ProgressTotals {
    var totals = ProgressTotals(files: 0, bytes: 0, upToDate: 0)
    for (index, file) in list.files.enumerated() {
      switch disposition(dispositions[index], of: file, folders: folders) {
      case .leftOut: break
      case .upToDate: totals.upToDate += 1
      case .fails: totals.files += 1
      case .work, .link:
        totals.files += 1
        totals.bytes = totals.bytes.addingSaturated(file.size)
      }
    }
    return totals
  }
}

/// What the progress reporter measures a run against: the files and bytes this
/// run has to do, and the files already up to date, counted apart.
struct ProgressTotals: Sendable, Equatable {
  /// Files to work on.
  var files: Int
  /// Their total size in bytes.
  var bytes: Int64
  /// Files whose output was already current: not in ``files``.
  var upToDate: Int
}
