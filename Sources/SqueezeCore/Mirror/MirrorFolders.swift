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
  /// - Returns: one failure per folder that cannot be made (its entries are left out).
  func prepare(_ plan: inout MirrorPlan) -> [DiscoveryFailure] {
    var failures: [DiscoveryFailure] = []
    var created = [Bool](repeating: false, count: plan.folders.count)
    plan.usable = [Bool](repeating: true, count: plan.folders.count)
    for (index, folder) in plan.folders.enumerated() {
      if folder.parent < 0 { continue }  // the mirror itself: prepared by OutputFolder
      guard plan.usable[folder.parent] else {
        plan.usable[index] = false
        continue
      }
      do {
        let place = location(index, in: plan)
        created[index] = try make(
          place, parentIsNew: created[folder.parent], permissions: creationBits(of: index, in: plan)
        )
        if plan.isMirrored[index], let identity = try? EntryIdentity.of(place),
          identity.kind == .folder
        {
          plan.made[folder.path] = identity
        }
      } catch {
        plan.usable[index] = false
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
  /// - Returns: true when the folder was made by this run.
  /// - Throws: ``SystemError`` or ``InTheWay``.
  private func make(
    _ location: RelativeLocation, parentIsNew: Bool, permissions: UInt32
  ) throws -> Bool {
    // A parent this run made may still gain this folder from another run writing the same
    // mirror (shards); when the quick make fails, the checked path below tells why.
    if parentIsNew, (try? location.makeDirectory(permissions: permissions)) != nil {
      return true
    }
    let status: FileStatus
    do {
      status = try location.entryStatus()
    } catch  where error == .noSuchFile {
      do {
        try location.makeDirectory(permissions: permissions)
        return true
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
      return false
    case .symbolicLink:
      try replace(location)
      return true
    case .regular where ownsRegularFile(at: location):
      try replace(location)
      return true
    default:
      throw InTheWay(kind: status.kind)
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
  /// - Returns: one failure per folder whose metadata could not be set.
  func finalize(_ plan: MirrorPlan) -> [DiscoveryFailure] {
    var failures: [DiscoveryFailure] = []
    for index in plan.folders.indices.reversed()
    where plan.isMirrored[index] && plan.usable[index] {
      let folder = plan.folders[index]
      let source = list.directories[Int(folder.sources[0])]
      do throws(SystemError) {
        try apply(source, to: location(index, in: plan))
      } catch {
        failures.append(
          DiscoveryFailure(
            path: settings.plan.mirrorDisplay(folder.path),
            cause: "cannot give this mirror folder its source's metadata: \(error)"))
      }
    }
    return failures
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
