import SqueezeSystem

/// An inode this run linked a further name of a hard-link group to, and its change times
/// (`st_ctime`) around the run's links of it.
struct LinkedInode: Sendable, Equatable {
  /// Its change time right before this run first linked it.
  var changeTimeBefore: Timestamp
  /// Its change time right after this run last linked it.
  var changeTime: Timestamp
  /// False when its change time moved between two of this run's links (someone else
  /// changed it meanwhile).
  var untouched: Bool

  /// True when `status` (of this inode) shows no change since the run started but this
  /// run's own links: before them it was older than `runStart`, and it is as the last of
  /// them left it.
  func onlyLinkedSince(_ runStart: Timestamp, status: FileStatus) -> Bool {
    untouched && changeTimeBefore < runStart && status.changeTime == changeTime
  }
}

/// The entries of a mirror written once the files' outputs are published: symbolic links
/// (stored as links with the same target bytes, never resolved), further names of hard-link
/// groups (hard links of the group's output, as `rsync -H` makes them), and outputs that a
/// folder was in the way of (``HeldReplacement``).
///
/// A new link or hard link is created under its final name directly when nothing is there
/// (`symlinkat` and `linkat` fail rather than replace); one that replaces an entry is made
/// under a temporary name, made durable (one `syncfs` for all of them; on FUSE, where that
/// commits nothing, an `fsync` of each one's folder), then renamed over
/// the old entry, so a crash leaves the old entry or the new one, never neither.
struct MirrorEntries {
  /// The run's listing.
  let list: FileList
  /// Destination, naming, force, operation, ownership.
  let settings: FileSettings
  /// The open folders.
  let bases: BaseDirectories
  /// Temporary names.
  let namer: TemporaryNamer
  /// The mirror's open folder (for `syncfs`).
  let base: Int32
  /// Print a line per entry written (`-v`).
  let verbose: Bool

  /// What writing entries came to: the run's results grow, lines go to stderr.
  struct Report {
    var lines: [String] = []
    /// The links and further hard-link names made or found in place, by path below the
    /// mirror: recorded in the mirror's manifest at the end of the run.
    var made: [RawPath: EntryIdentity] = [:]
    /// The inodes this run gave a further name (hard-link groups' outputs): a link changes
    /// an inode's `st_ctime`, which ``MirrorDeletion`` must not take for a change by
    /// someone else.
    var linkedInodes: [FileIdentity: LinkedInode] = [:]

    /// Notes that this run linked the inode `before` describes (its status right before
    /// the link), which `after` describes once linked; nothing when either is unknown.
    mutating func linked(before: FileStatus?, after: FileStatus?) {
      guard let before, let after, before.isSameFile(as: after) else { return }
      let identity = FileIdentity(after)
      if let earlier = linkedInodes[identity] {
        // Changed between two of this run's links: by someone else.
        let untouched = earlier.untouched && before.changeTime == earlier.changeTime
        linkedInodes[identity] = LinkedInode(
          changeTimeBefore: earlier.changeTimeBefore, changeTime: after.changeTime,
          untouched: untouched)
      } else {
        linkedInodes[identity] = LinkedInode(
          changeTimeBefore: before.changeTime, changeTime: after.changeTime, untouched: true)
      }
    }

    /// Notes the identity of the entry at `location`, which squeeze has just made or found
    /// right; nothing when it is not of `kind` now or, a link, does not lead to `target`.
    mutating func made(
      _ location: RelativeLocation, _ kind: EntryIdentity.Kind, target: RawPath? = nil
    ) {
      guard let identity = try? EntryIdentity.of(location), identity.kind == kind else { return }
      if let target, (try? location.symbolicLinkTarget()) != target { return }
      made[location.relativePath] = identity
    }

    /// Records that the entry of `path` failed, with a line for stderr; when its file
    /// system is full, no line: the run stops there (``RunResults/fullDisk``) and says so
    /// once, as for a file.
    ///
    /// - Parameter isLink: the entry is a symbolic link, not a file: one more entry not
    ///   done when it stops the run.
    mutating func fail(
      _ path: RawPath, _ failure: FileFailure, results: inout RunResults, isLink: Bool = false
    ) {
      results.failures.append((path, failure))
      if var full = FullDisk(file: path, failure: failure) {
        if results.fullDisk == nil {
          // A link or a further hard-link name: not a file the plan counts as failed.
          full.failedFiles = 0
          results.fullDisk = full
          results.interrupted = true
        }
        if isLink { results.fullDisk?.entriesNotDone += 1 }
        return
      }
      lines.append("squeeze: \(path.displayString): \(failure)")
    }
  }

  /// Writes the planned symbolic links.
  ///
  /// - Parameter stopped: true once a signal asks the run to stop: no further link is made
  ///   and ``RunResults/interrupted`` is set, as a full disk stops the links.
  /// - Returns: links a folder is in the way of, made durable under temporary names.
  func writeLinks(
    _ plan: MirrorPlan, results: inout RunResults, report: inout Report,
    stopped: () -> Bool = { false }
  ) -> [HeldReplacement] {
    var replacing:
      [(temporary: TemporaryEntry, final: RelativeLocation, source: RawPath, target: RawPath)] =
        []
    var held: [HeldReplacement] = []
    for planned in plan.links {
      if !results.interrupted && stopped() { results.interrupted = true }
      if results.interrupted && results.fullDisk == nil { break }
      if results.fullDisk != nil {
        // The run stopped at a link that found no room: the rest are not made.
        results.fullDisk?.entriesNotDone += 1
        continue
      }
      let link = list.links[planned.link]
      guard plan.isUsable(directory: link.directory),
        let location = settings.plan.mirrorLocation(
          named: list.name(of: link), inDirectory: link.directory, of: list, bases: bases)
      else { continue }
      let source = list.displayPath(of: link)
      let display = settings.plan.mirrorDisplay(location.relativePath)
      do throws(SystemError) {
        switch planned.existing {
        case .upToDate:
          results.linksUpToDate += 1
          report.made(location, .link, target: list.target(of: link))
          if verbose { report.lines.append("\(source.displayString): up to date") }
        case .stale where planned.retimeOnly:
          // Written in place: counted with the links written, as the dry run's plan lists it.
          try location.setTimes(access: link.accessTime, modification: link.modificationTime)
          results.linksWritten += 1
          report.made(location, .link, target: list.target(of: link))
          if verbose {
            report.lines.append("\(source.displayString): link → \(display.displayString)")
          }
        case .absent:
          do throws(SystemError) {
            try location.makeSymbolicLink(to: list.target(of: link))
          } catch  where error == .fileExists {
            if try adoptAppeared(link, at: location) {
              results.linksUpToDate += 1
              report.made(location, .link, target: list.target(of: link))
              if verbose { report.lines.append("\(source.displayString): up to date") }
            } else {
              report.fail(source, .outputAppeared(display), results: &results, isLink: true)
            }
            continue
          }
          do throws(SystemError) {
            try giveMetadata(of: link, to: location)
          } catch {
            // Not left under its name with the wrong owner or times: the next run would
            // take it for the mirrored link and keep it as it is.
            try? location.removeEntry()
            throw error
          }
          results.linksWritten += 1
          report.made(location, .link, target: list.target(of: link))
          if verbose {
            report.lines.append("\(source.displayString): link → \(display.displayString)")
          }
        case .stale:
          replacing.append(
            (try temporaryLink(link, beside: location), location, source, list.target(of: link)))
        case .foreign where settings.force:
          replacing.append(
            (try temporaryLink(link, beside: location), location, source, list.target(of: link)))
        case .folderInTheWay(let empty) where empty || settings.deletes:
          held.append(
            HeldReplacement(
              temporary: try temporaryLink(link, beside: location), final: location,
              display: display, removal: nil))
        case .folderInTheWay:
          report.fail(source, .folderNotEmpty(display), results: &results, isLink: true)
        case .foreign:
          report.fail(
            source, settings.foreignOutputFailure(display), results: &results, isLink: true)
        case .inTheWay(let kind):
          report.fail(source, .outputInTheWay(display, kind), results: &results, isLink: true)
        }
      } catch {
        report.fail(source, .cannotCreateOutput(display, error), results: &results, isLink: true)
      }
    }
    guard !replacing.isEmpty || !held.isEmpty else { return held }
    if results.interrupted {
      // Stopped (a full disk, a signal): the links made under temporary names are not put
      // in place.
      for entry in replacing { try? entry.temporary.remove() }
      for entry in held { entry.abandon() }
      results.fullDisk?.entriesNotDone += replacing.count + held.count
      return []
    }
    do throws(SystemError) {
      try Descriptor.syncFileSystem(base)
      if Descriptor.syncFileSystemIsHollow(base) {
        // FUSE: that syncfs committed nothing; each temporary link's folder is fsynced.
        for entry in replacing { try entry.temporary.syncFolder() }
        for entry in held { try entry.temporary.syncFolder() }
      }
    } catch {
      for entry in replacing {
        try? entry.temporary.remove()
        report.fail(
          entry.source,
          .cannotPublish(settings.plan.mirrorDisplay(entry.final.relativePath), .sync, error),
          results: &results, isLink: true)
      }
      for entry in held { try? entry.temporary.remove() }
      return []
    }
    for entry in replacing {
      let display = settings.plan.mirrorDisplay(entry.final.relativePath)
      do throws(SystemError) {
        try entry.temporary.rename(to: entry.final.name, .replace)
        results.linksWritten += 1
        report.made(entry.final, .link, target: entry.target)
        if verbose {
          report.lines.append("\(entry.source.displayString): link → \(display.displayString)")
        }
      } catch {
        try? entry.temporary.remove()
        report.fail(
          entry.source, .cannotPublish(display, .rename, error), results: &results, isLink: true)
      }
    }
    return held
  }

  /// Judges a link that appeared at `location` while this run was making `link` there
  /// (another run writing the same mirror at the same time made it first): true when it is
  /// a symbolic link to the same target, which is then given `link`'s owner and times as
  /// the mirror keeps them (the other run gives it the very same ones, and may not have
  /// yet); false when it is anything else, which is left alone.
  ///
  /// - Throws: ``SystemError`` when it cannot be examined or its metadata set.
  private func adoptAppeared(
    _ link: FileList.Link, at location: RelativeLocation
  ) throws(SystemError) -> Bool {
    let status: FileStatus
    do throws(SystemError) {
      status = try location.entryStatus()
    } catch  where error == .noSuchFile {
      return false  // gone again: another run's failed link, not one to count as made
    }
    guard status.kind == .symbolicLink,
      (try? location.symbolicLinkTarget()) == list.target(of: link)
    else { return false }
    let ownerDiffers =
      settings.copiesOwnership && (status.userID != link.userID || status.groupID != link.groupID)
    if ownerDiffers || status.modificationTime != link.modificationTime {
      try giveMetadata(of: link, to: location)
    }
    return true
  }

  /// A link like `link` under a temporary name beside `location` (in its folder, opened
  /// once: ``TemporaryEntry``), with its metadata.
  private func temporaryLink(
    _ link: FileList.Link, beside location: RelativeLocation
  ) throws(SystemError) -> TemporaryEntry {
    let temporary = try TemporaryEntry.symbolicLink(
      to: list.target(of: link), in: FolderHandle.folder(of: location), namer: namer)
    do throws(SystemError) {
      try giveMetadata(of: link, to: temporary.location)
    } catch {
      try? temporary.remove()
      throw error
    }
    return temporary
  }

  /// Gives a mirrored link its source's owner (as root) and times.
  private func giveMetadata(of link: FileList.Link, to location: RelativeLocation)
    throws(SystemError)
  {
    if settings.copiesOwnership
      && (link.userID != TemporaryOutput.owner.user
        || link.groupID != TemporaryOutput.owner.group)
    {
      try location.setOwner(user: link.userID, group: link.groupID)
    }
    try location.setTimes(access: link.accessTime, modification: link.modificationTime)
  }

  /// Makes each further name of a hard-link group a hard link of the group's output, once
  /// that output is in place (done or up to date in this run).
  ///
  /// - Parameters:
  ///   - leaders: only the followers of these leaders (all when nil).
  ///   - stopped: true once a signal asks the run to stop: no further name is made and
  ///     ``RunResults/interrupted`` is set.
  func linkFollowers(
    _ plan: MirrorPlan, leaders: Set<Int>? = nil, waiting: Set<Int> = [],
    results: inout RunResults, report: inout Report, stopped: () -> Bool = { false }
  ) {
    for follower in plan.followers {
      if let leaders, !leaders.contains(follower.leader) { continue }
      if leaders == nil && waiting.contains(follower.leader) { continue }
      if !results.interrupted && stopped() { results.interrupted = true }
      // The run stopped (a full disk, a signal): the names left are files not done, but for
      // those already right, which need no room and stay up to date.
      if results.interrupted && follower.existing != .upToDate { continue }
      let file = list.files[follower.file]
      let leaderFile = list.files[follower.leader]
      guard plan.isUsable(directory: file.directory),
        let name = settings.plan.outputName(for: list.name(of: file)),
        let leaderName = settings.plan.outputName(for: list.name(of: leaderFile))
      else { continue }
      let source = list.displayPath(of: file)
      let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
      let leaderTarget = settings.plan.target(
        named: leaderName, of: leaderFile, in: list, bases: bases)
      let display = settings.plan.displayPath(named: name, of: file, in: list)
      let leaderDisplay = settings.plan.displayPath(named: leaderName, of: leaderFile, in: list)
      if results.failedFiles.contains(follower.leader) {
        report.fail(source, .groupOutputFailed(leaderDisplay), results: &results)
        continue
      }
      do throws(SystemError) {
        switch follower.existing {
        case .upToDate:
          results.upToDate += 1
          report.made(target, .file)
          if verbose { report.lines.append("\(source.displayString): up to date") }
          continue
        case .absent:
          let before = try? leaderTarget.entryStatus()
          do throws(SystemError) {
            try leaderTarget.hardLink(at: target)
            report.linked(before: before, after: try? leaderTarget.entryStatus())
          } catch  where error == .fileExists {
            // Another run writing the same mirror at the same time linked it first: in
            // place when it is the group's output itself (one inode), else left alone.
            if let appeared = try? target.entryStatus(), appeared.kind == .regular,
              let leader = try? leaderTarget.entryStatus(), leader.isSameFile(as: appeared)
            {
              results.upToDate += 1
              report.made(target, .file)
              if verbose { report.lines.append("\(source.displayString): up to date") }
            } else {
              report.fail(source, .outputAppeared(display), results: &results)
            }
            continue
          }
        case .stale:
          try replace(target, withLinkOf: leaderTarget, report: &report)
        case .foreign where settings.force:
          try replace(target, withLinkOf: leaderTarget, report: &report)
        case .foreign:
          report.fail(source, settings.foreignOutputFailure(display), results: &results)
          continue
        case .inTheWay(let kind):
          report.fail(source, .outputInTheWay(display, kind), results: &results)
          continue
        case .folderInTheWay:
          report.fail(source, .outputInTheWay(display, .directory), results: &results)
          continue
        }
        results.hardLinked += 1
        report.made(target, .file)
        if verbose {
          report.lines.append(
            "\(source.displayString): hard link of \(leaderDisplay.displayString) → \(display.displayString)"
          )
        }
      } catch {
        report.fail(source, .cannotCreateOutput(display, error), results: &results)
      }
    }
  }

  /// Replaces the entry at `target` with a hard link of `leader`, made under a temporary
  /// name and renamed over it.
  private func replace(
    _ target: RelativeLocation, withLinkOf leader: RelativeLocation, report: inout Report
  ) throws(SystemError) {
    let before = try? leader.entryStatus()
    let temporary = try TemporaryEntry.hardLink(
      of: leader, in: FolderHandle.folder(of: target), namer: namer)
    // Noted once the last of its steps is done: each of them changes the inode's st_ctime.
    defer { report.linked(before: before, after: try? leader.entryStatus()) }
    do throws(SystemError) {
      try temporary.rename(to: target.name, .replace)
    } catch {
      try? temporary.remove()
      throw error
    }
    // rename(2) does nothing, and succeeds, when both names are links of one file: the
    // target already was the group's output (judged stale when it could not be examined),
    // and the temporary name is still there.
    try? temporary.remove()
  }

  /// Completes held outputs and links: each takes its folder's place if the folder is empty
  /// now (then a held output's source is removed with `--rm`); otherwise it is dropped and
  /// the folder kept.
  ///
  /// - Parameter sources: for each held entry, the source to name in messages and, for an
  ///   output, its file index (its outcome becomes a failure if it cannot take its place).
  func complete(
    _ held: [(file: Int?, source: RawPath, replacement: HeldReplacement)],
    results: inout RunResults, report: inout Report
  ) {
    for (position, entry) in held.enumerated() {
      if results.fullDisk != nil {
        // Stopped: the rest keep their folders, their temporaries removed.
        for rest in held[position...] {
          rest.replacement.abandon()
          if rest.file == nil {
            results.fullDisk?.entriesNotDone += 1
          } else {
            results.done -= 1  // not done after all, nor failed on its own
          }
        }
        return
      }
      switch entry.replacement.complete() {
      case .replaced:
        if entry.file == nil {
          results.linksWritten += 1
          report.made(entry.replacement.final, .link)
        }
        if let removal = entry.replacement.removal {
          if case .removed = SourceRemoval.remove(removal, force: settings.force) {
            results.removed += 1
          }
        }
      case .folderKept:
        undo(entry.file, results: &results)
        report.fail(entry.source, .folderNotEmpty(entry.replacement.display), results: &results)
      case .failed(let error):
        undo(entry.file, results: &results)
        report.fail(
          entry.source, .cannotPublish(entry.replacement.display, .rename, error),
          results: &results)
      }
    }
  }

  /// A held output that did not take its place is not done after all.
  private func undo(_ file: Int?, results: inout RunResults) {
    guard let file else { return }
    results.done -= 1
    results.failedFiles.insert(file)
  }
}
