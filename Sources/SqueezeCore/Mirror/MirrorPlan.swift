import SqueezeSystem

/// What a mirror run (`-o`, compressing or restoring) does besides its files' outputs,
/// decided before any work starts: which folders it mirrors (and from which source folders),
/// which symbolic links it stores and what sits at their paths now, which files are further
/// names of a hard-link group (linked, not compressed again), and which entries clash.
///
/// A mirror is a backup: `squeeze -d -o R M/` after `squeeze -o M S/`
/// gives back S: names, contents, modes, times, owners as root, symbolic links as links,
/// empty folders, folder metadata and hard-link groups (as `rsync -aH`).
struct MirrorPlan: Sendable {
  /// One folder of the mirror.
  struct Folder: Sendable {
    /// Its path below the mirror ("" for the mirror's top).
    var path: RawPath
    /// The source folders mirrored here, first one first (its metadata is given to the
    /// folder); empty for the mirror's top when only file arguments land there.
    var sources: [Int32]
    /// The folder this one is in (an index into ``folders``), -1 for the top.
    var parent: Int
  }

  /// A symbolic link to store, and what sits at its path now.
  struct PlannedLink: Sendable {
    /// The link's index in the file list.
    var link: Int
    /// What is at the mirror path: `absent`, `upToDate` (same target and time), `stale`
    /// (a link to replace, or an output of a file that became this link), `foreign`,
    /// `inTheWay`, or `folderInTheWay`.
    var existing: ExistingOutput
    /// Only the link's time differs: it is retimed, not replaced.
    var retimeOnly = false
  }

  /// A further name of a hard-link group: made a hard link of the group's output.
  struct Follower: Sendable {
    /// The file's index in the list.
    var file: Int
    /// The group's first name, the one compressed (or restored).
    var leader: Int
    /// What sits at the follower's output path now; `upToDate` when it already is the
    /// leader's output.
    var existing: ExistingOutput
  }

  /// The mirror's folders, each after the folder holding it.
  var folders: [Folder] = []
  /// For each listed folder (by index), its ``folders`` index, or -1 when it is not
  /// mirrored (a dropped argument).
  var folderOfDirectory: [Int] = []
  /// True for ``folders`` entries that are mirrored folders (created, and given their
  /// source's metadata); false for the top when no contents argument lands there.
  var isMirrored: [Bool] = []
  /// True for ``folders`` entries that could be made (``MirrorFolders/prepare(_:)``); all
  /// true until then.
  var usable: [Bool] = []
  /// Set when ``MirrorFolders/prepare(_:)`` met a full file system: no folder after it was
  /// made, and the run stops before its files (``FullDisk``).
  var fullDisk: FullDisk? = nil
  /// The identities of the mirrored folders ``MirrorFolders/prepare(_:)`` made or found in
  /// place, by path: recorded in the mirror's manifest at the end of the run.
  var made: [RawPath: EntryIdentity] = [:]
  /// What ``MirrorFolders/prepare(_:)`` found where each folder goes, by ``folders`` index:
  /// nil for the mirror's top (never counted) and for folders that are not mirrored or could
  /// not be made.
  var folderStates: [FolderState?] = []
  /// The links to store.
  var links: [PlannedLink] = []
  /// The further names of hard-link groups.
  var followers: [Follower] = []
  /// For each group's leader, the names of the group's members (an existing output whose
  /// FNAME is any of them belongs to the group).
  var groupNames: [Int: [RawPath]] = [:]
  /// Files left out of the compressor: followers, and files that clash.
  var droppedFiles: Set<Int> = []
  /// Files that fail before starting: clashes with a link or folder, by index.
  var failedFiles: [Int: FileFailure] = [:]
  /// Failures of links and folders (clashes), reported as the run's.
  var failures: [DiscoveryFailure] = []
  /// Arguments left out (they collide with an earlier one), by root index: nothing of them
  /// is mirrored or pruned.
  var leftOutRoots: Set<Int> = []

  /// The further names of hard-link groups that already are their group's up-to-date
  /// output, in folders the run can use: up to date whether or not the run gets as far as
  /// linking them, so a run stopped before that (a signal, a full disk) counts them up to
  /// date, not as files not done.
  func followersUpToDate(in list: FileList) -> Int {
    followers.count {
      $0.existing == .upToDate && isUsable(directory: list.files[$0.file].directory)
    }
  }

  /// True when listed folder `directory`'s mirror folder exists (or will).
  func isUsable(directory: Int32) -> Bool {
    let folder = folderOfDirectory[Int(directory)]
    return folder >= 0 && usable[folder]
  }

  /// Where folder `path` is: `base` and the path split into its folder and name.
  static func location(ofFolder path: RawPath, base: Int32) -> RelativeLocation {
    guard let slash = path.bytes.lastIndex(of: UInt8(ascii: "/")) else {
      return RelativeLocation(base: base, directory: "", name: path.isEmpty ? "." : path)
    }
    return RelativeLocation(
      base: base, directory: RawPath(bytes: path.bytes[..<slash]),
      name: RawPath(bytes: path.bytes[(slash + 1)...]))
  }

  /// Plans the folders, links, groups and clashes of `list`.
  ///
  /// - Parameters:
  ///   - linksHardLinks: hard-link groups become hard links in the mirror (off with
  ///     `--shard`, where each name goes to its own shard, and with `--rm`).
  ///   - leftOutRoots: arguments left out, by root index (``ArgumentCollisions``).
  static func make(
    list: FileList, settings: FileSettings, linksHardLinks: Bool,
    leavingOut leftOutRoots: Set<Int> = []
  ) -> MirrorPlan {
    var plan = MirrorPlan()
    plan.leftOutRoots = leftOutRoots
    plan.collectFolders(of: list)
    var claimed = plan.claimFolders(of: list)
    plan.collectLinks(of: list, settings: settings, claimed: &claimed)
    plan.failClashingFiles(of: list, settings: settings, claimed: claimed)
    if linksHardLinks { plan.collectGroups(of: list) }
    return plan
  }

  /// The mirror's folders from the listed ones: one per mirror path, in listing order (a
  /// folder is listed after the folder holding it).
  private mutating func collectFolders(of list: FileList) {
    var indexByPath: [RawPath: Int] = [:]
    folderOfDirectory = Array(repeating: -1, count: list.directories.count)
    for (index, directory) in list.directories.enumerated() {
      let root = list.roots[Int(directory.root)]
      guard !leftOutRoots.contains(Int(directory.root)) else { continue }
      let path = list.mirrorPath(ofDirectory: Int32(index))
      // The folder holding a file or link argument is not mirrored: its entries land at
      // the top, which takes no metadata from it.
      let mirrored = !(directory.parent < 0 && root.isFileArgument)
      if let existing = indexByPath[path] {
        folderOfDirectory[index] = existing
        if mirrored {
          folders[existing].sources.append(Int32(index))
          isMirrored[existing] = true
        }
        continue
      }
      let parent: Int
      if path.isEmpty {
        parent = -1
      } else if directory.parent >= 0 {
        parent = folderOfDirectory[Int(directory.parent)]
      } else {
        parent = ensureTop(&indexByPath)
      }
      indexByPath[path] = folders.count
      folderOfDirectory[index] = folders.count
      folders.append(Folder(path: path, sources: mirrored ? [Int32(index)] : [], parent: parent))
      isMirrored.append(mirrored)
      usable.append(true)
    }
  }

  /// The top's index, added (not mirrored) when it is not there yet.
  private mutating func ensureTop(_ indexByPath: inout [RawPath: Int]) -> Int {
    if let top = indexByPath[""] { return top }
    indexByPath[""] = folders.count
    folders.append(Folder(path: "", sources: [], parent: -1))
    isMirrored.append(false)
    usable.append(true)
    return folders.count - 1
  }

  /// An entry of the mirror that a folder or link has taken: its kind and whose it is.
  struct Claim {
    var isFolder: Bool
    var source: RawPath
  }

  /// The names each mirror folder's subfolders take, by folder index.
  private func claimFolders(of list: FileList) -> [Int: [RawPath: Claim]] {
    var claimed: [Int: [RawPath: Claim]] = [:]
    for (index, folder) in folders.enumerated() where folder.parent >= 0 && isMirrored[index] {
      let name = MirrorPlan.location(ofFolder: folder.path, base: -1).name
      let source = list.displayPath(ofDirectory: folder.sources[0])
      claimed[folder.parent, default: [:]][name] = Claim(isFolder: true, source: source)
    }
    return claimed
  }

  /// The links to store; a link whose mirror path a folder or an earlier link has taken
  /// fails.
  private mutating func collectLinks(
    of list: FileList, settings: FileSettings, claimed: inout [Int: [RawPath: Claim]]
  ) {
    for (index, link) in list.links.enumerated() {
      let folder = folderOfDirectory[Int(link.directory)]
      guard folder >= 0 else { continue }
      let name = list.name(of: link)
      let source = list.displayPath(of: link)
      if let other = claimed[folder]?[name] {
        failures.append(
          DiscoveryFailure(
            path: source,
            cause: MirrorPlan.clash(
              settings.plan.mirrorDisplay(folders[folder].path.appending(name)), other.source)))
        continue
      }
      claimed[folder, default: [:]][name] = Claim(isFolder: false, source: source)
      links.append(PlannedLink(link: index, existing: .absent))
    }
  }

  /// Files whose output path a folder or link has taken fail, naming both sources.
  private mutating func failClashingFiles(
    of list: FileList, settings: FileSettings, claimed: [Int: [RawPath: Claim]]
  ) {
    guard !claimed.isEmpty else { return }
    for (index, file) in list.files.enumerated() {
      let folder = folderOfDirectory[Int(file.directory)]
      guard folder >= 0, let names = claimed[folder],
        let output = settings.plan.outputName(for: list.name(of: file)),
        let other = names[output]
      else { continue }
      let display = settings.plan.mirrorDisplay(folders[folder].path.appending(output))
      failedFiles[index] = .nameClash(display, otherSource: other.source)
    }
  }

  /// The message for an entry whose mirror path `path` another source (`other`) takes.
  static func clash(_ path: RawPath, _ other: RawPath) -> String {
    "'\(path.displayString)' is also where '\(other.displayString)' is mirrored; not written"
  }

  /// Hard-link groups among the selected files: the first name is compressed, the others
  /// become hard links of its output.
  private mutating func collectGroups(of list: FileList) {
    var groups: [FileIdentity: [Int]] = [:]
    for (index, file) in list.files.enumerated() where file.linkCount > 1 {
      guard folderOfDirectory[Int(file.directory)] >= 0, failedFiles[index] == nil else {
        continue
      }
      groups[FileIdentity(device: file.device, inode: file.inode), default: []].append(index)
    }
    for members in groups.values where members.count > 1 {
      let leader = members[0]
      groupNames[leader] = members.map { list.name(of: list.files[$0]) }
      for member in members.dropFirst() {
        followers.append(Follower(file: member, leader: leader, existing: .absent))
        droppedFiles.insert(member)
      }
    }
    followers.sort { $0.file < $1.file }
  }
}
