import SqueezeGzip
import SqueezeSystem

/// Inspects what sits at every output path before a run starts (``RunPlan``), with as few
/// system calls as the answer allows: an output folder is listed once (`getdents64`), and
/// only names that are there are opened and judged (``ExistingOutput``). Beside the sources,
/// discovery's own listing already says which outputs exist.
enum OutputInspection {
  /// The names in one output folder, listed once for all its files.
  private struct FolderNames {
    var base: Int32 = -1
    var directory: RawPath = ""
    /// The names there; nil when the folder could not be listed (then each file is
    /// inspected on its own).
    var names: Set<RawPath>? = nil
    /// The folder does not exist: nothing is there.
    var missing = false

    /// The listing of `target`'s folder, read when it is not the one held.
    mutating func update(for target: RelativeLocation) {
      guard target.base != base || target.directory != directory else { return }
      base = target.base
      directory = target.directory
      names = nil
      missing = false
      do {
        let folder = try FileDescriptor.open(
          directory.isEmpty ? "." : directory, in: base, flags: .folder,
          symlinks: target.symlinks.forFolders)
        names = Set(try DirectoryReader.entries(of: folder.rawValue).map(\.name))
      } catch {
        missing = error == .noSuchFile
      }
    }

    /// False only when `name` is known not to be there.
    func mayHold(_ name: RawPath) -> Bool {
      if missing { return false }
      return names?.contains(name) ?? true
    }
  }

  /// What sits at each file's output path (`.absent` for files skipped), in parallel over
  /// up to `width` contiguous ranges of the list.
  ///
  /// - Parameters:
  ///   - skipping: files not to inspect (dropped or failing before starting).
  ///   - groupNames: for each hard-link group's first name, all its names.
  @concurrent
  static func inspectAll(
    _ list: FileList, settings: FileSettings, bases: BaseDirectories,
    skipping: Set<Int>, groupNames: [Int: [RawPath]], width: Int
  ) async -> [ExistingOutput] {
    let count = list.files.count
    let rangeCount = max(1, min(width * 4, count / 256))
    let size = (count + rangeCount - 1) / max(1, rangeCount)
    return await withTaskGroup(of: (Int, [ExistingOutput]).self) { group in
      var start = 0
      while start < count {
        let range = start..<min(count, start + size)
        group.addTask {
          (
            range.lowerBound,
            inspect(
              range, of: list, settings: settings, bases: bases, skipping: skipping,
              groupNames: groupNames)
          )
        }
        start = range.upperBound
      }
      var existing = [ExistingOutput](repeating: .absent, count: count)
      for await (lower, part) in group {
        existing.replaceSubrange(lower..<(lower + part.count), with: part)
      }
      return existing
    }
  }

  /// Inspects the files of `range`.
  private static func inspect(
    _ range: Range<Int>, of list: FileList, settings: FileSettings,
    bases: BaseDirectories, skipping: Set<Int>, groupNames: [Int: [RawPath]]
  ) -> [ExistingOutput] {
    var folder = FolderNames()
    var result: [ExistingOutput] = []
    result.reserveCapacity(range.count)
    for index in range {
      let file = list.files[index]
      // Checked before any name is built or any index hashed: most files of a run beside
      // the sources end here.
      if case .besideSources = settings.plan.destination, settings.operation != .test,
        !file.outputListedBeside
      {
        // Not there when the folder was listed; if it appears meanwhile, publishing (with
        // RENAME_NOREPLACE) finds it and judges it then.
        result.append(.absent)
        continue
      }
      guard skipping.isEmpty || !skipping.contains(index),
        let name = settings.plan.outputName(for: list.name(of: file))
      else {
        result.append(.absent)
        continue
      }
      let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
      folder.update(for: target)
      guard folder.mayHold(name) else {
        result.append(.absent)
        continue
      }
      result.append(
        judge(
          target, index: index, list: list, settings: settings, bases: bases,
          alsoNamed: groupNames[index] ?? []))
    }
    return result
  }

  /// What the entry at `target` means for file `index`.
  private static func judge(
    _ target: RelativeLocation, index: Int, list: FileList, settings: FileSettings,
    bases: BaseDirectories, alsoNamed: [RawPath]
  ) -> ExistingOutput {
    let file = list.files[index]
    let status = list.listedStatus(of: file)
    do {
      switch settings.operation {
      case .compress:
        // The owner the listing saw (kept when outputs take it, as root).
        let sourceOwner: (() -> (user: UInt32, group: UInt32)?)? =
          settings.inMirror && settings.copiesOwnership ? { (file.userID, file.groupID) } : nil
        return try ExistingOutput.inspect(
          target, sourceName: list.name(of: file), source: status, inMirror: settings.inMirror,
          alsoNamed: alsoNamed, sourceOwner: sourceOwner, nameless: !settings.usesHeaderNameAndTime)
      case .decompress, .test:
        let source = sourceLocation(of: index, list: list, settings: settings, bases: bases)
        return try ExistingOutput.inspectRestore(
          target, source: status, isize: { ExistingOutput.lastISIZE(of: source, size: file.size) },
          inMirror: settings.inMirror,
          owner: settings.copiesOwnership ? (file.userID, file.groupID) : nil)
      }
    } catch {
      // Unreadable: let the job meet the error and report it.
      return .stale
    }
  }

  /// In a mirror being compressed into, the outputs judged ``ExistingOutput/foreign`` that
  /// squeeze made for another name of a hard-link group, judged ``ExistingOutput/stale``
  /// instead, so a re-run replaces them (under a temporary name renamed over them, never
  /// writing through the inode they share) rather than failing on them every night.
  ///
  /// A file replaced under one name of a hard-link group (an editor saving by rename, a
  /// package upgrade) leaves at that name's output the group's output, whose header (RFC 1952
  /// FNAME) names another member: by the header alone it is some other file's. It is taken
  /// for squeeze's on either of two proofs:
  ///
  /// - the mirror's manifest (``MirrorManifest``) lists its path as a further hard-link name
  ///   with the identity it has now (inode and generation): squeeze made it there, and an
  ///   entry anyone put in its place since has another identity;
  /// - otherwise (a mirror without a manifest, or one a killed run did not get to record),
  ///   it has more than one link and is the very inode at the output path of a listed file
  ///   whose name its FNAME gives, which the re-run rules already own as that file's output.
  ///
  /// Neither claims a file squeeze did not make: a file written by someone else has an
  /// inode and a generation of its own. A hand-made hard link of squeeze's output would
  /// pass the second proof, and replacing that name loses nothing: its bytes are the other
  /// file's output, which stays under that file's name.
  ///
  /// - Parameter existing: what the plan found at each file's output path.
  /// - Returns: `existing`, with the outputs so proven judged stale.
  static func recognizingGroupOutputs(
    _ existing: [ExistingOutput], list: FileList, settings: FileSettings,
    bases: BaseDirectories
  ) -> [ExistingOutput] {
    guard settings.operation == .compress,
      case .mirror(let mirrorIndex, _) = settings.plan.destination,
      mirrorIndex >= 0
    else { return existing }
    let candidates = existing.indices.filter { existing[$0] == .foreign }
    guard !candidates.isEmpty else { return existing }
    let manifest = MirrorManifest.read(in: bases.descriptor(mirrorIndex)).entries
    var filesByName: [RawPath: [Int]]? = nil
    var result = existing
    for index in candidates {
      let file = list.files[index]
      guard let name = settings.plan.outputName(for: list.name(of: file)) else { continue }
      let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
      if let recorded = manifest[target.relativePath], recorded.kind == .file,
        (try? EntryIdentity.of(target)) == recorded
      {
        result[index] = .stale
        continue
      }
      guard let (header, status) = ExistingOutput.header(at: target), status.linkCount > 1,
        let named = header.name
      else { continue }
      if filesByName == nil {
        var byName: [RawPath: [Int]] = [:]
        for (other, file) in list.files.enumerated() {
          byName[list.name(of: file), default: []].append(other)
        }
        filesByName = byName
      }
      let owners = filesByName?[RawPath(bytes: named)] ?? []
      let shared = owners.contains { other in
        guard other != index, existing[other] == .upToDate || existing[other] == .stale,
          let otherName = settings.plan.outputName(for: list.name(of: list.files[other]))
        else { return false }
        let otherTarget = settings.plan.target(
          named: otherName, of: list.files[other], in: list, bases: bases)
        guard let owned = try? otherTarget.entryStatus() else { return false }
        return owned.kind == .regular && owned.isSameFile(as: status)
      }
      if shared { result[index] = .stale }
    }
    return result
  }

  /// Where file `index` itself is.
  static func sourceLocation(
    of index: Int, list: FileList, settings: FileSettings, bases: BaseDirectories
  ) -> RelativeLocation {
    let file = list.files[index]
    return RelativeLocation(
      base: bases.descriptor(list.root(of: file).base),
      directory: list.relativePath(ofDirectory: file.directory), name: list.name(of: file),
      symlinks: settings.sourceSymlinks)
  }

  /// Judges what sits at the paths of a mirror's links and hard-link followers.
  static func inspectMirrorEntries(
    _ mirror: MirrorPlan, existing: [ExistingOutput], list: FileList,
    settings: FileSettings, bases: BaseDirectories
  ) -> MirrorPlan {
    var mirror = mirror
    for position in mirror.links.indices {
      let link = list.links[mirror.links[position].link]
      guard
        let location = settings.plan.mirrorLocation(
          named: list.name(of: link), inDirectory: link.directory, of: list, bases: bases)
      else { continue }
      (mirror.links[position].existing, mirror.links[position].retimeOnly) = judgeLink(
        at: location, link: link, list: list, settings: settings)
    }
    for position in mirror.followers.indices {
      let follower = mirror.followers[position]
      mirror.followers[position].existing = judgeFollower(
        follower, existing: existing, list: list, settings: settings, bases: bases,
        groupNames: mirror.groupNames[follower.leader] ?? [])
    }
    return mirror
  }

  /// What the entry where `link` is mirrored means: up to date (same target and time),
  /// to retime only, to replace, or in the way.
  private static func judgeLink(
    at location: RelativeLocation, link: FileList.Link, list: FileList,
    settings: FileSettings
  ) -> (ExistingOutput, retimeOnly: Bool) {
    let status: FileStatus
    do throws(SystemError) {
      status = try location.entryStatus()
    } catch  where error == .noSuchFile {
      return (.absent, false)
    } catch {
      // Could not be examined: as an output that cannot be read, it is replaced (making the
      // link meets a lasting error again and reports it), never taken for absent and then
      // found in the way.
      return (.stale, false)
    }
    switch status.kind {
    case .symbolicLink:
      guard (try? location.symbolicLinkTarget()) == list.target(of: link) else {
        return (.stale, false)
      }
      // A link left with another owner (its owner could not be set, or the run was killed
      // before it was) is made again; times alone are set in place.
      if settings.copiesOwnership
        && (status.userID != link.userID || status.groupID != link.groupID)
      {
        return (.stale, false)
      }
      return status.modificationTime == link.modificationTime ? (.upToDate, false) : (.stale, true)
    case .regular where settings.operation == .compress:
      // The output of a file that has become this link.
      guard
        let source = GzipNaming.decompressedName(
          of: location.name, suffix: settings.plan.naming.suffix),
        ExistingOutput.namesSource(location, sourceName: source)
      else { return (.foreign, false) }
      return (.stale, false)
    case .regular: return (.foreign, false)
    case .directory: return (.folderInTheWay(empty: location.isEmptyFolder()), false)
    default: return (.inTheWay(status.kind), false)
    }
  }

  /// What sits where a further name of a hard-link group goes: up to date when it already
  /// is the group's output and that output is kept (current, and no `--force`, which writes
  /// it anew under a new inode the name must then be linked to), else whether it may be
  /// replaced.
  private static func judgeFollower(
    _ follower: MirrorPlan.Follower, existing: [ExistingOutput], list: FileList,
    settings: FileSettings, bases: BaseDirectories, groupNames: [RawPath]
  ) -> ExistingOutput {
    let file = list.files[follower.file]
    let leaderFile = list.files[follower.leader]
    guard let name = settings.plan.outputName(for: list.name(of: file)),
      let leaderName = settings.plan.outputName(for: list.name(of: leaderFile))
    else { return .absent }
    let target = settings.plan.target(named: name, of: file, in: list, bases: bases)
    let leaderTarget = settings.plan.target(
      named: leaderName, of: leaderFile, in: list, bases: bases)
    let status: FileStatus
    do throws(SystemError) {
      status = try target.entryStatus()
    } catch  where error == .noSuchFile {
      return .absent
    } catch {
      // Could not be examined: linking meets the error again and reports it, or, when it
      // is gone, makes the link.
      return .stale
    }
    switch status.kind {
    case .regular:
      if let leader = try? leaderTarget.entryStatus(), leader.isSameFile(as: status) {
        return existing[follower.leader] == .upToDate && !settings.force ? .upToDate : .stale
      }
      let judged = judge(
        target, index: follower.file, list: list, settings: settings, bases: bases,
        alsoNamed: groupNames)
      return judged == .upToDate ? .stale : judged
    case .symbolicLink: return .stale
    default: return .inTheWay(status.kind)
    }
  }
}
