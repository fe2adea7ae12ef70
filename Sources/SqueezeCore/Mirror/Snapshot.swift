import SqueezeSystem

/// An earlier snapshot named by `--link-dest`, open for the run: outputs of unchanged files
/// are hard-linked from it into the new snapshot instead of compressed again.
struct LinkDestination: Sendable, Equatable {
  /// Its index in the run's ``BaseDirectories``.
  var base: Int
  /// Its path as messages show it (a relative `--link-dest` joined to the `-o` folder).
  var display: RawPath
}

/// Where the plan found the output a file's output is to be a hard link of.
struct LinkSource: Sendable, Hashable {
  /// The earlier snapshot, by index in ``FileSettings/linkDestinations``.
  var destination: Int
  /// The identity of the output found there when planning: the link made must be this very
  /// file, or the file is compressed after all.
  var identity: FileIdentity
}

/// Why a snapshot (`-o NEW --link-dest DIR`) cannot start. Messages are lowercase without a
/// final period and name paths in single quotes, keeping the cause.
enum SnapshotError: Error, Equatable, CustomStringConvertible {
  /// The `-o` folder holds entries and is not a snapshot a stopped run left unfinished.
  case notEmpty(RawPath)
  /// The `-o` folder could not be listed, or the marker examined.
  case cannotExamine(RawPath, SystemError)
  /// A `--link-dest` folder could not be opened.
  case cannotOpen(RawPath, SystemError)
  /// A `--link-dest` folder is the `-o` folder itself.
  case isOutputFolder(RawPath)
  /// A `--link-dest` folder is a source folder or lies inside one (first path: the folder,
  /// second: the source argument).
  case insideSource(RawPath, RawPath)
  /// The marker of an unfinished snapshot could not be written.
  case cannotMark(RawPath, SystemError)

  /// The full file system when the marker found no room (`ENOSPC`, `EDQUOT`): the run
  /// ends with ``ExitStatus/outOfSpace``; nil for every other refusal.
  var fullDisk: FullDisk? {
    guard case .cannotMark(let path, let error) = self else { return nil }
    return FullDisk(
      path: path.trimmingTrailingSlashes.appending(SnapshotMarker.name), error: error,
      cause: description)
  }

  var description: String {
    switch self {
    case .notEmpty(let path):
      "'\(path.displayString)' is not empty and is not an unfinished snapshot (it has no '\(SnapshotMarker.name.displayString)'): --link-dest makes each snapshot in a new folder; nothing was done"
    case .cannotExamine(let path, let error):
      "cannot examine '\(path.displayString)': \(error); nothing was done"
    case .cannotOpen(let path, let error):
      "cannot open --link-dest folder '\(path.displayString)': \(error); nothing was done"
    case .isOutputFolder(let path):
      "--link-dest folder '\(path.displayString)' is the --output folder itself; nothing was done"
    case .insideSource(let path, let source):
      "--link-dest folder '\(path.displayString)' lies inside the source '\(source.displayString)': keep snapshots outside the tree they back up; nothing was done"
    case .cannotMark(let path, let error):
      "cannot mark '\(path.displayString)' as an unfinished snapshot: \(error); nothing was done"
    }
  }
}

/// The file a snapshot run (`--link-dest`) leaves at the top of its `-o` folder while the
/// snapshot is unfinished: written (and synced) before any output, removed once every entry
/// is in place and on disk. A folder holding it is a snapshot a stopped run was making, which
/// the next run into it resumes; a folder holding nothing but the temporaries of runs that
/// are gone (a run killed while it wrote the marker) is empty; any other folder that is not
/// empty is refused, so a snapshot is never mixed into an older tree. Restores and `--delete`
/// leave it alone.
///
/// What a kill at each point of a snapshot run leaves, and what the next run does, is in
/// the Reliability article ("Snapshots stopped midway").
enum SnapshotMarker {
  /// The marker's name. Not a squeeze temporary (`.squeeze-*.tmp`), and without a
  /// compressed suffix, so no run takes it for either.
  static let name: RawPath = ".squeeze-snapshot"

  /// What the marker says, for whoever finds it.
  static let text = """
    This folder is a squeeze snapshot that is not finished: the run that makes it
    (squeeze -o with --link-dest) was stopped or met errors. Running the same command again
    resumes it. The run that finishes it removes this file.

    """

  /// What the `-o` folder of a snapshot run holds.
  enum State: Equatable {
    /// Nothing: a new snapshot.
    case empty
    /// A snapshot a stopped run was making: resumed.
    case unfinished
  }

  /// Checks that the folder open as `folder` (shown as `display`) may take a snapshot.
  /// A folder holding nothing but squeeze temporaries is empty: a run killed while it wrote
  /// the marker leaves only its temporary, and another run starting the same snapshot at
  /// the same time may be writing its marker (``MarkerFile`` keeps whichever marker lands
  /// first); either way the folder is still a new snapshot's.
  ///
  /// - Throws: ``SnapshotError/notEmpty(_:)`` when it holds entries and no marker;
  ///   ``SnapshotError/cannotExamine(_:_:)`` when it cannot be listed.
  static func state(of folder: Int32, display: RawPath) throws(SnapshotError) -> State {
    let entries: [(name: RawPath, type: UInt8)]
    do throws(SystemError) {
      // A descriptor of its own: listing moves the read position.
      let listing = try FileDescriptor.open(".", in: folder, flags: .folder)
      entries = try DirectoryReader.entries(of: listing.rawValue)
    } catch {
      throw .cannotExamine(display, error)
    }
    if entries.contains(where: { $0.name == name }) { return .unfinished }
    // squeeze's temporaries alone (another run at once writing the marker, or what a run
    // killed while writing it left) are no entry of anyone's: the snapshot is still to
    // begin. A real run then removes those whose writer is gone (``TemporaryCleaner``).
    if entries.allSatisfy({ TemporaryNamer.isTemporary($0.name) }) { return .empty }
    throw .notEmpty(display)
  }

  /// Leaves the marker in the folder open as `folder`, durably (written to a temporary,
  /// synced, renamed into place, the folder synced), before any output is written. An
  /// existing marker is kept.
  ///
  /// - Throws: ``SystemError`` from the first step that fails.
  static func leave(in folder: Int32, namer: TemporaryNamer) throws(SystemError) {
    do throws(SystemError) {
      _ = try FileStatus.of(name, in: folder)
      return
    } catch  where error == .noSuchFile {
      // Not there yet: written below.
    }
    try MarkerFile.write(text, as: name, in: folder, namer: namer)
  }

  /// Removes the marker from the folder open as `folder` and syncs the folder: the
  /// snapshot is finished. Called only once everything the run made is on disk, after the
  /// folder was given its source's times, which removing an entry changes: they are given
  /// back, in the very next system call. Removing an entry always sets its folder's
  /// modification time, so no order puts the times before the removal; a run killed between
  /// the two leaves a finished snapshot whose top folder has the time of the removal, which
  /// the next run refuses as finished, changing nothing.
  ///
  /// When giving the times back or syncing fails, the marker is left again: the snapshot
  /// is not finished, and the next run resumes it (and sets the times) rather than refuse a
  /// folder that looks finished and is not.
  ///
  /// - Throws: ``SystemError`` from `fstat(2)`, `unlinkat(2)` (not `ENOENT`), `futimens(2)`
  ///   or `fsync(2)`.
  static func remove(from folder: Int32, namer: TemporaryNamer) throws(SystemError) {
    let times = try Descriptor.status(folder)
    do throws(SystemError) {
      try RelativeLocation(base: folder, directory: "", name: name).removeEntry()
    } catch  where error == .noSuchFile {
      return
    }
    do throws(SystemError) {
      try Descriptor.setTimes(
        folder, access: times.accessTime, modification: times.modificationTime)
      try Descriptor.sync(folder)
    } catch {
      try? leave(in: folder, namer: namer)
      throw error
    }
  }
}

/// `--link-dest`'s two parts: planning which outputs can be hard links of an earlier
/// snapshot's, and making those links.
///
/// An output is linked from an earlier snapshot DIR only when the output at the same path
/// in DIR is one a re-run into DIR would leave alone (``ExistingOutput/inspect``: a regular
/// gzip file whose header names the source, with the source's MTIME and ISIZE, and the
/// source's modification time to the nanosecond) and it has every other attribute squeeze
/// gives an output: the source's permission bits and, as root, its owner and group. Linked
/// names share one inode, so an output that differs in any of them is written anew rather
/// than changed: nothing in DIR is ever changed. As rsync's `--link-dest` (rsync(1)), the
/// earlier snapshots are searched in the order given, and the first match is linked.
enum SnapshotLinks {
  /// For each file the plan would compress into an empty output path, the earlier
  /// snapshot's output to link instead, in parallel over up to `width` contiguous ranges of
  /// the list. An output in an earlier snapshot is linked for one file at most: two files
  /// linked to one inode would come back from a restore as one hard-link group, which their
  /// sources are not.
  ///
  /// - Parameters:
  ///   - candidates: the files whose output path is empty and that would be compressed.
  @concurrent
  static func plan(
    _ list: FileList, candidates: [Int], settings: FileSettings, bases: BaseDirectories,
    width: Int
  ) async -> [Int: LinkSource] {
    guard !settings.linkDestinations.isEmpty, !candidates.isEmpty else { return [:] }
    let rangeCount = max(1, min(width * 4, candidates.count / 256))
    let size = (candidates.count + rangeCount - 1) / rangeCount
    let found = await withTaskGroup(of: [(Int, LinkSource)].self) { group in
      var start = 0
      while start < candidates.count {
        let slice = candidates[start..<min(candidates.count, start + size)]
        group.addTask {
          slice.compactMap { index in
            source(for: index, list: list, settings: settings, bases: bases).map { (index, $0) }
          }
        }
        start += size
      }
      var all: [(Int, LinkSource)] = []
      for await part in group { all += part }
      return all
    }
    var links: [Int: LinkSource] = [:]
    var taken: Set<LinkSource> = []
    for (index, source) in found.sorted(by: { $0.0 < $1.0 }) where taken.insert(source).inserted {
      links[index] = source
    }
    return links
  }

  /// The output of an earlier snapshot that file `index`'s output can be a hard link of:
  /// the first `--link-dest` folder whose output at the same path is current by the re-run
  /// rules and has the attributes squeeze would give the new output.
  static func source(
    for index: Int, list: FileList, settings: FileSettings, bases: BaseDirectories
  ) -> LinkSource? {
    let file = list.files[index]
    let name = list.name(of: file)
    guard let outputName = settings.plan.outputName(for: name) else { return nil }
    let status = list.listedStatus(of: file)
    // The same path below each earlier snapshot as below the new one (which a dry run may
    // not have made yet).
    let directory = list.mirrorPath(ofDirectory: file.directory)
    for (position, destination) in settings.linkDestinations.enumerated() {
      let earlier = RelativeLocation(
        base: bases.descriptor(destination.base), directory: directory, name: outputName)
      // The status is the open output's own (`fstat`), so the very file judged current is
      // the one whose attributes are compared and whose identity the link must find.
      guard
        let inspected = try? ExistingOutput.inspectWithStatus(
          earlier, sourceName: name, source: status, inMirror: true,
          nameless: !settings.usesHeaderNameAndTime),
        inspected.existing == .upToDate, let found = inspected.status, found.kind == .regular,
        found.permissions
          == CreationPermissions.kept(status.permissions, keepsOwner: settings.copiesOwnership),
        found.modificationTime == status.modificationTime
      else { continue }
      // As root an output gets its source's owner and group: the listing's, as for the bits.
      if settings.copiesOwnership, found.userID != file.userID || found.groupID != file.groupID {
        continue
      }
      return LinkSource(destination: position, identity: FileIdentity(found))
    }
    return nil
  }

  /// What making one planned link came to.
  enum Outcome {
    /// The output is a hard link of the earlier snapshot's.
    case linked
    /// The link could not be made for a reason of the earlier output (`EMLINK`: it has as
    /// many links as its file system allows; `EXDEV`: the earlier snapshot is on another
    /// file system; `EPERM`: the kernel refuses to link a file this user does not own
    /// (`fs.protected_hardlinks`); `ENOENT`, or another file there now: it is no longer the
    /// one planned): the file is compressed instead.
    case fallBack(SystemError?)
    /// Making the link failed for a reason of the new snapshot (`EACCES`, `ENOSPC`, `EIO`):
    /// the file fails, as writing its output would (and `ENOSPC` stops the run: ``FullDisk``).
    case failed(FileFailure)
  }

  /// The `linkat(2)` errors that say the earlier output cannot be linked, but a new output
  /// can still be written.
  static let fallBackErrors: Set<SystemError> = [
    .tooManyLinks, .crossDevice, .notPermitted, .noSuchFile,
  ]

  /// How many planned links one task makes in a row, holding one slot (``SmallFileBatch``'s
  /// role for links): a link costs a few system calls, far less than handing a file to a
  /// task, and a batch of this many still ends within milliseconds, so a stop request or the
  /// last files' compression never waits long behind one.
  static let batchSize = 256

  /// The two folders a link goes between (the earlier snapshot's and the new one's), held
  /// open while consecutive files share them: a folder's files are contiguous in the list,
  /// so each link costs its `linkat(2)` and the `fstatat(2)` that checks it, not also two
  /// `openat2(2)` and two `close(2)` to reach both folders from their snapshots' tops.
  ///
  /// Both are opened as ``RelativeLocation`` opens them for one entry (`O_PATH`, following
  /// no link on the way): a link swapped in for a folder after it was opened is never
  /// followed, since the descriptor names the folder itself.
  struct OpenFolders {
    /// The earlier snapshot (by index in ``FileSettings/linkDestinations``) and the folder
    /// below both snapshots' tops that ``earlier`` and ``new`` are.
    private var key: (destination: Int, directory: RawPath)? = nil
    /// The folder in the earlier snapshot.
    private var earlier: FolderHandle? = nil
    /// The same folder in the new snapshot.
    private var new: FolderHandle? = nil

    /// The open folders of `earlier` and `new`, opened (the earlier one first) unless they
    /// are the ones held. A folder that cannot be opened is not held: the next file in it
    /// meets the error again, as it would alone.
    ///
    /// - Throws: ``SystemError`` from `openat2(2)`.
    mutating func handles(
      earlier: RelativeLocation, new: RelativeLocation, destination: Int
    ) throws(SystemError) -> (earlier: FolderHandle, new: FolderHandle) {
      if let key, key.destination == destination, key.directory == new.directory,
        let held = self.earlier, let heldNew = self.new
      {
        return (held, heldNew)
      }
      (key, self.earlier, self.new) = (nil, nil, nil)
      let openedEarlier = try FolderHandle.folder(of: earlier)
      let openedNew = try FolderHandle.folder(of: new)
      (key, self.earlier, self.new) = ((destination, new.directory), openedEarlier, openedNew)
      return (openedEarlier, openedNew)
    }
  }

  /// Makes file `index`'s output a hard link of the earlier snapshot's output the plan
  /// chose (`linkat(2)` under the final name: it fails rather than replace anything), and
  /// checks the new name is that very file. Nothing in the earlier snapshot is changed but
  /// the link count (and so the change time) of the shared inode, as with any hard link.
  ///
  /// - Parameter folders: the folders the previous link of the caller went between, reused
  ///   when this one goes between the same.
  static func link(
    _ index: Int, from source: LinkSource, list: FileList, settings: FileSettings,
    bases: BaseDirectories, folders: inout OpenFolders
  ) -> Outcome {
    let file = list.files[index]
    guard let outputName = settings.plan.outputName(for: list.name(of: file)),
      source.destination < settings.linkDestinations.count
    else { return .fallBack(nil) }
    let target = settings.plan.target(named: outputName, of: file, in: list, bases: bases)
    var earlier = target
    earlier.base = bases.descriptor(settings.linkDestinations[source.destination].base)
    let made: RelativeLocation
    do throws(SystemError) {
      let (from, to) = try folders.handles(
        earlier: earlier, new: target, destination: source.destination)
      made = to.location(of: target.name)
      try from.location(of: earlier.name).hardLink(at: made)
    } catch  where fallBackErrors.contains(error) {
      return .fallBack(error)
    } catch  where error == .fileExists {
      // Another run into the same snapshot (an overlapping cron job) made it meanwhile:
      // compressing judges what is there now, as for any output that appeared.
      return .fallBack(error)
    } catch {
      return .failed(
        .cannotCreateOutput(settings.plan.displayPath(named: outputName, of: file, in: list), error)
      )
    }
    guard let status = try? made.entryStatus(), FileIdentity(status) == source.identity else {
      // The earlier output was replaced since the plan looked at it: the name just made is
      // not the output judged current. Removed, and the file compressed.
      try? made.removeEntry()
      return .fallBack(nil)
    }
    return .linked
  }
}
