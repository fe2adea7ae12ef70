import SqueezeGzip
import SqueezeSystem

/// The folders of a mirror: created before the work, given their sources' metadata after it.
///
/// Before: every mirrored folder is made (or found) and given owner `rwx` while squeeze
/// works in it, as rsync does (a folder made now gets its source's bits plus owner `rwx`), so a `0555` or `0500` source folder never blocks writing its
/// outputs, nor a later run by a user who is not root. A symbolic link where a folder goes
/// (the source was a link and is now a folder), or an output of a file that has become this
/// folder, is replaced only once the new folder is durable: the folder is made under a
/// temporary name, the file system synced, the two swapped (`RENAME_EXCHANGE`), and only
/// then the old entry removed. Everything is done relative to the mirror's open folder and
/// never through a link (``RelativeLocation/withFolder(_:)``).
///
/// After: once every output, link and deletion is done, each folder gets its first source
/// folder's owner and group (as root), permission bits and access and modification times,
/// deepest first, and only where they differ (an up-to-date re-run changes no folder's
/// time). With `--shard`, every shard does this for every folder after its own writes.
///
/// Each folder below the mirror's top is counted once, by what was where it goes before the
/// run changed anything (``FolderState``): made, up to date, or updated. The top (the `-o`
/// folder itself) is never counted: the user named it, and it is made or checked before
/// anything is listed.
struct MirrorFolders {
  /// The run's listing.
  let list: FileList
  /// The run's settings (operation, force, ownership).
  let settings: FileSettings
  /// The mirror's open folder.
  let base: Int32
  /// Temporary names for folders swapped in.
  let namer: TemporaryNamer

  /// The folder `index` of `plan` as a location.
  func location(_ index: Int, in plan: MirrorPlan) -> RelativeLocation {
    MirrorPlan.location(ofFolder: plan.folders[index].path, base: base)
  }

  /// Makes every folder of `plan` usable, recording in `plan.usable` which are.
  ///
  /// A folder that cannot be made because the mirror's file system has no room left
  /// (`ENOSPC`, `EDQUOT`) ends it: that folder and every later one are left unusable
  /// without a line each, and `plan.fullDisk` says why, so the run stops as for a full
  /// disk during the work (``FullDisk``).
  ///
  /// - Returns: one failure per folder that cannot be made (its entries are left out), but
  ///   those of a full disk.
  func prepare(_ plan: inout MirrorPlan) -> [DiscoveryFailure] {
    var failures: [DiscoveryFailure] = []
    var created = [Bool](repeating: false, count: plan.folders.count)
    plan.usable = [Bool](repeating: true, count: plan.folders.count)
    plan.folderStates = [FolderState?](repeating: nil, count: plan.folders.count)
    for (index, folder) in plan.folders.enumerated() {
      if folder.parent < 0 { continue }  // the mirror itself: prepared by OutputFolder
      guard plan.usable[folder.parent], plan.fullDisk == nil else {
        plan.usable[index] = false
        continue
      }
      do {
        let place = location(index, in: plan)
        let found = try make(
          place, parentIsNew: created[folder.parent], permissions: creationBits(of: index, in: plan)
        )
        created[index] = found == nil
        if plan.isMirrored[index] {
          let source = list.directories[Int(folder.sources[0])]
          plan.folderStates[index] = found.map { state(found: $0, source: source) } ?? .made
        }
        if plan.isMirrored[index], let identity = try? EntryIdentity.of(place),
          identity.kind == .folder
        {
          plan.made[folder.path] = identity
        }
      } catch {
        plan.usable[index] = false
        if let system = error as? SystemError, system.isOutOfSpace {
          let display = settings.plan.mirrorDisplay(folder.path)
          plan.fullDisk = FullDisk(
            file: folder.sources.first.map { list.displayPath(ofDirectory: $0) } ?? display,
            failure: .cannotCreateOutput(display, system))
          plan.fullDisk?.failedFiles = 0  // a folder, not a file
          continue
        }
        failures.append(
          DiscoveryFailure(
            path: settings.plan.mirrorDisplay(folder.path),
            cause: "cannot make this mirror folder: \(error)"))
      }
    }
    return failures
  }

  /// Why a folder's place cannot be taken.
  struct InTheWay: Error, CustomStringConvertible {
    var kind: FileKind
    var description: String {
      kind == .regular
        ? "a regular file that is not squeeze's is in the way; not replaced (use --force)"
        : "\(kind) is in the way; not replaced"
    }
  }

  /// The bits folder `index` of `plan` is made with: its source's read, write and search
  /// bits with the owner's `rwx` added (rsync makes folders so), which a typical `0755`
  /// source folder already has, so ``finalize(_:)`` finds them right and changes none;
  /// `0700` for a folder that only leads to mirrored ones. Special bits wait for
  /// ``finalize(_:)``; the umask or a default ACL may take bits away, which it gives back.
  private func creationBits(of index: Int, in plan: MirrorPlan) -> UInt32 {
    guard plan.isMirrored[index], let first = plan.folders[index].sources.first else {
      return 0o700
    }
    return UInt32(list.directories[Int(first)].permissions & 0o777) | 0o700
  }

  /// Makes the folder at `location` usable.
  ///
  /// - Parameters:
  ///   - parentIsNew: its parent was made by this run (so nothing is in the way).
  ///   - permissions: the bits a folder made now gets (always with the owner's `rwx`).
  /// - Returns: nil when the folder was made by this run; the status of the folder found in
  ///   place, as it was before anything of it was changed.
  /// - Throws: ``SystemError`` or ``InTheWay``.
  private func make(
    _ location: RelativeLocation, parentIsNew: Bool, permissions: UInt32
  ) throws -> FileStatus? {
    // A parent this run made may still gain this folder from another run writing the same
    // mirror (shards); when the quick make fails, the checked path below tells why.
    if parentIsNew, (try? location.makeDirectory(permissions: permissions)) != nil {
      return nil
    }
    let status: FileStatus
    do {
      status = try location.entryStatus()
    } catch  where error == .noSuchFile {
      do {
        try location.makeDirectory(permissions: permissions)
        return nil
      } catch  where error == .fileExists {
        // Made meanwhile (another run).
        return try make(location, parentIsNew: false, permissions: permissions)
      }
    }
    switch status.kind {
    case .directory:
      if status.permissions & 0o700 != 0o700 {
        let writable = location.isWritableFolder()
        if !writable { try location.setFolderPermissions(UInt32(status.permissions | 0o700)) }
      }
      return status
    case .symbolicLink:
      try replace(location)
      return nil
    case .regular where ownsRegularFile(at: location):
      try replace(location)
      return nil
    default:
      throw InTheWay(kind: status.kind)
    }
  }

  /// How a folder found in place, with `status`, compares with its source folder: as
  /// ``apply(_:to:)`` judges what to give it (permission bits, modification time, and as
  /// root owner and group).
  func state(found status: FileStatus, source: FileList.Directory) -> FolderState {
    let ownerDiffers =
      settings.copiesOwnership
      && (status.userID != source.userID || status.groupID != source.groupID)
    let differs =
      ownerDiffers || status.permissions != UInt32(source.permissions)
      || status.modificationTime != source.modificationTime
    return differs ? .updated : .upToDate
  }

  /// What ``prepare(_:)`` would find where folder `index` of `plan` goes, judged without
  /// changing anything (`--dry-run`).
  ///
  /// - Parameter parentIsNew: its parent would be made by the run (so it is not there).
  /// - Throws: ``SystemError`` when it cannot be examined, ``InTheWay`` when the run could
  ///   not make it.
  func expectedState(_ index: Int, in plan: MirrorPlan, parentIsNew: Bool) throws -> FolderState {
    // A mirror folder that does not exist yet (base -1) has nothing in it.
    guard !parentIsNew, base >= 0 else { return .made }
    let place = location(index, in: plan)
    let status: FileStatus
    do {
      status = try place.entryStatus()
    } catch  where error == .noSuchFile {
      return .made
    }
    switch status.kind {
    case .directory:
      return state(found: status, source: list.directories[Int(plan.folders[index].sources[0])])
    case .symbolicLink: return .made
    case .regular where ownsRegularFile(at: place): return .made
    default: throw InTheWay(kind: status.kind)
    }
  }

  /// True when the regular file where a folder goes may be replaced: compressing, an output
  /// of a file that has become this folder; restoring, only with `--force`.
  private func ownsRegularFile(at location: RelativeLocation) -> Bool {
    if settings.force { return true }
    guard settings.operation == .compress,
      let source = GzipNaming.decompressedName(
        of: location.name, suffix: settings.plan.naming.suffix)
    else { return false }
    return ExistingOutput.namesSource(location, sourceName: source)
  }

  /// Puts a new folder where a file or link is, once the new folder is on disk.
  private func replace(_ location: RelativeLocation) throws(SystemError) {
    let temporary = try TemporaryEntry.directory(
      in: FolderHandle.folder(of: location), namer: namer, permissions: 0o700)
    do throws(SystemError) {
      try Descriptor.syncFileSystem(base)
      // FUSE: that syncfs committed nothing; the new folder's entry is fsynced in its folder.
      if Descriptor.syncFileSystemIsHollow(base) { try temporary.syncFolder() }
    } catch {
      try? temporary.remove()
      throw error
    }
    do {
      try temporary.rename(to: location.name, .exchange)
    } catch {
      try? temporary.remove()
      throw error
    }
    // The temporary name now holds the link or file the folder replaced.
    try temporary.remove()
  }

  /// Gives every usable mirrored folder its first source's metadata, deepest first.
  ///
  /// - Returns: one failure per folder whose metadata could not be set, with its index.
  func finalize(_ plan: MirrorPlan) -> [(folder: Int, failure: DiscoveryFailure)] {
    var failures: [(folder: Int, failure: DiscoveryFailure)] = []
    for index in plan.folders.indices.reversed()
    where plan.isMirrored[index] && plan.usable[index] {
      let folder = plan.folders[index]
      let source = list.directories[Int(folder.sources[0])]
      do throws(SystemError) {
        try apply(source, to: location(index, in: plan))
      } catch {
        failures.append(
          (
            index,
            DiscoveryFailure(
              path: settings.plan.mirrorDisplay(folder.path),
              cause: "cannot give this mirror folder its source's metadata: \(error)")
          ))
      }
    }
    return failures
  }

  /// Counts the folders ``prepare(_:)`` judged (``MirrorPlan/folderStates``) in `results`. A
  /// folder found in place whose metadata could not be set (`failed`, by index) counts as a
  /// failure only; one this run made is still counted as made (it was).
  ///
  /// - Returns: with `verbose`, a line per folder counted, parents first:
  ///   `S/sub: folder made → M/sub`, `S/sub: folder updated → M/sub`, `S/sub: up to date`.
  func count(
    _ plan: MirrorPlan, failed: Set<Int>, results: inout RunResults, verbose: Bool
  ) -> [String] {
    var lines: [String] = []
    for (index, state) in plan.folderStates.enumerated() {
      guard let state, plan.usable[index], state == .made || !failed.contains(index) else {
        continue
      }
      switch state {
      case .made: results.foldersMade += 1
      case .updated: results.foldersUpdated += 1
      case .upToDate: results.foldersUpToDate += 1
      }
      guard verbose else { continue }
      let folder = plan.folders[index]
      let source = list.displayPath(ofDirectory: folder.sources[0]).displayString
      let display = settings.plan.mirrorDisplay(folder.path).displayString
      switch state {
      case .made: lines.append("\(source): folder made → \(display)")
      case .updated: lines.append("\(source): folder updated → \(display)")
      case .upToDate: lines.append("\(source): up to date")
      }
    }
    return lines
  }

  /// Sets what differs of `source`'s owner (as root), bits and times on `location`: the
  /// owner first (a change of owner clears setgid), the times last.
  private func apply(_ source: FileList.Directory, to location: RelativeLocation)
    throws(SystemError)
  {
    let now = try location.entryStatus()
    guard now.kind == .directory else { throw SystemError.notADirectory }
    var bits = now.permissions
    if settings.copiesOwnership && (now.userID != source.userID || now.groupID != source.groupID) {
      try location.setOwner(user: source.userID, group: source.groupID)
      // Looked at again only after a change of owner, which may have cleared bits.
      bits = try location.entryStatus().permissions
    }
    if bits != UInt32(source.permissions) {
      try location.setFolderPermissions(UInt32(source.permissions))
    }
    if now.modificationTime != source.modificationTime {
      try location.setTimes(access: source.accessTime, modification: source.modificationTime)
    }
  }
}

/// What a run finds where one folder of a mirror goes, before it changes anything: what the
/// run's summary, `--json` (`files.folders`), `-v` and `--dry-run` count the folder as.
enum FolderState: Sendable, Equatable {
  /// Not there, or a symbolic link or an output of a file that has become this folder (which
  /// the new folder replaces): the run makes it.
  case made
  /// There, with its source folder's permission bits, modification time and (as root) owner
  /// and group. The run may still give its time back after writing into it.
  case upToDate
  /// There, with other bits, another time or (as root) another owner: given its source's
  /// after the work.
  case updated
}
