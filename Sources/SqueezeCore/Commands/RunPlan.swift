import Glibc

/// What a run will do with each listed entry, decided before any work starts (the "plan"
/// phase of ``RunCommand``): which outputs are already up to date (counted apart, never
/// worked on), what sits at every other output path, which files fail or are left out
/// before starting, and the totals progress is measured against (spec §4, "Re-runs"; issue
/// 11: "Progress counts this run's work").
///
/// Existing outputs are inspected here, in parallel over contiguous ranges of the list (a
/// folder's files are contiguous), each range listing an output folder once (`getdents64`)
/// so that only names actually there are opened. The jobs then use these findings rather
/// than inspecting again.
struct RunPlan: Sendable {
  /// For each file (by index), what sits at its output path; nil when the jobs inspect
  /// themselves (`-d -N`: the name comes from each header) or nothing is written (`-t`).
  var existing: [ExistingOutput]?
  /// Files whose output is already current (not with `--force` or `--rm`): not worked on.
  var upToDate: [Int] = []
  /// Source bytes of the up-to-date files.
  var upToDateBytes: Int64 = 0
  /// Files left out before starting: the same source reached twice, further names of
  /// hard-link groups (linked instead), files of dropped arguments or unusable folders.
  var dropped: Set<Int> = []
  /// Files that fail before starting (output collisions, name clashes), by index.
  var preFailed: [Int: FileFailure] = [:]
  /// Folders, links and hard-link groups of a mirror (`-o`, compressing or restoring).
  var mirror: MirrorPlan?
  /// Failures found while planning that are not a file's (colliding arguments, clashing
  /// links); reported with discovery's.
  var failures: [DiscoveryFailure] = []

  /// Files the run will work on.
  var filesToDo = 0
  /// Their size in bytes: what progress goes from 0 to 100 % over.
  var bytesToDo: Int64 = 0

  /// What the progress reporter is given.
  var progressTotals: ProgressTotals {
    ProgressTotals(files: filesToDo, bytes: bytesToDo, upToDate: upToDate.count)
  }

  /// Plans a run over `list`.
  ///
  /// - Parameters:
  ///   - list: the listing; arguments that collide in a mirror are marked dropped in it.
  ///   - settings: destination, naming, force, `--rm`.
  ///   - bases: the open folders.
  ///   - linksHardLinks: mirror hard-link groups as hard links (not with `--shard`, `--rm`).
  ///   - width: how many ranges are inspected at once.
  static func make(
    list: inout FileList, settings: CompressionSettings, bases: BaseDirectories,
    linksHardLinks: Bool, width: Int
  ) async -> RunPlan {
    var plan = RunPlan()
    // A dry run into an output folder that does not exist yet: nothing is there.
    var mirrorExists = true
    if case .mirror(let base, _) = settings.plan.destination { mirrorExists = base >= 0 }
    plan.failures = ArgumentCollisions.dropColliding(in: &list, plan: settings.plan)
    let (collisions, duplicates) = settings.plan.collisions(in: list)
    plan.dropped = duplicates
    for (index, file) in list.files.enumerated() where list.root(of: file).isDropped {
      plan.dropped.insert(index)
    }
    // -t writes nothing: two files that would restore to one name are both tested.
    for (index, other) in collisions where settings.operation != .test {
      plan.preFailed[index] = .outputCollision(
        settings.plan.displayPath(of: list.files[index], in: list), otherSource: other)
    }
    if settings.inMirror && settings.operation != .test {
      var mirror = MirrorPlan.make(list: list, settings: settings, linksHardLinks: linksHardLinks)
      mirror.followers.removeAll { plan.dropped.contains($0.file) }
      plan.dropped.formUnion(mirror.droppedFiles)
      plan.preFailed.merge(mirror.failedFiles) { first, _ in first }
      plan.failures += mirror.failures
      plan.mirror = mirror
    }
    if settings.operation != .test
      && !(settings.operation == .decompress && settings.usesHeaderNameAndTime)
    {
      let frozen = list
      let skip = plan.dropped.union(plan.preFailed.keys)
      plan.existing =
        mirrorExists
        ? await OutputInspection.inspectAll(
          frozen, settings: settings, bases: bases, skipping: skip,
          groupNames: plan.mirror?.groupNames ?? [:], width: width)
        : Array(repeating: .absent, count: list.files.count)
    }
    plan.countWork(in: list, settings: settings)
    if let mirror = plan.mirror, let existing = plan.existing, mirrorExists {
      plan.mirror = OutputInspection.inspectMirrorEntries(
        mirror, existing: existing, list: list, settings: settings, bases: bases)
    }
    return plan
  }

  /// Leaves out the files of mirror folders that could not be made (each such folder is
  /// reported once), and totals the work again.
  mutating func dropEntries(outsideUsable mirror: MirrorPlan, of list: FileList) {
    guard mirror.usable.contains(false) else { return }
    for (index, file) in list.files.enumerated() where !mirror.isUsable(directory: file.directory) {
      dropped.insert(index)
      preFailed[index] = nil
    }
    upToDate.removeAll { dropped.contains($0) }
    (filesToDo, bytesToDo, upToDateBytes) = (0, 0, 0)
    let current = Set(upToDate)
    upToDate = []
    countWork(in: list, keepingCurrent: current)
  }

  /// Totals the work again, the up-to-date files being `current`.
  private mutating func countWork(in list: FileList, keepingCurrent current: Set<Int>) {
    for (index, file) in list.files.enumerated() where !dropped.contains(index) {
      if current.contains(index) {
        upToDate.append(index)
        upToDateBytes = upToDateBytes.addingSaturated(file.size)
      } else {
        filesToDo += 1
        if preFailed[index] == nil { bytesToDo = bytesToDo.addingSaturated(file.size) }
      }
    }
  }

  /// Splits the files into up to date and to do, and totals the work.
  private mutating func countWork(in list: FileList, settings: CompressionSettings) {
    let keepsCurrent = !settings.force && !settings.removesSources
    for (index, file) in list.files.enumerated() where !dropped.contains(index) {
      if preFailed[index] != nil {
        filesToDo += 1  // reported at once, as a failure
        continue
      }
      if keepsCurrent, existing?[index] == .upToDate {
        upToDate.append(index)
        upToDateBytes = upToDateBytes.addingSaturated(file.size)
        continue
      }
      filesToDo += 1
      bytesToDo = bytesToDo.addingSaturated(file.size)
    }
  }
}

/// What the progress reporter measures a run against (issue 11): the files and bytes this
/// run has to do, and the files already up to date, counted apart.
struct ProgressTotals: Sendable, Equatable {
  /// Files to work on.
  var files: Int
  /// Their total size in bytes.
  var bytes: Int64
  /// Files whose output was already current: not in ``files``.
  var upToDate: Int
}
