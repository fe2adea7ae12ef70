import SqueezeGzip
import SqueezeSystem

/// What to select while walking.
package struct DiscoveryOptions: Sendable {
  /// Which files are wanted.
  package enum Wanted: Sendable {
    /// Files to compress: compressed names are skipped.
    case uncompressed
    /// Files to decompress (`-d`): only compressed names; a file argument without a known
    /// suffix is skipped with a warning, as gzip does.
    case compressedByName
    /// Files to test or list (`-t`, `-l`): compressed names in folders, and any file named
    /// as an argument.
    case compressedOrNamed
    /// Every regular file (`-c`: gzip compresses even a `.gz` file to standard output).
    case anything
  }

  /// Which files are wanted.
  package var wanted = Wanted.uncompressed
  /// The compressed suffix (`-S`, default `.gz`).
  package var suffix: RawPath = ".gz"
  /// `--include`, `--exclude`, `--older-than`, `--shard`.
  package var selection = Selection()
  /// Follow symbolic links (`--follow-symlinks`).
  package var followSymlinks = false
  /// Stay on each argument's file system (`--one-file-system`).
  package var oneFileSystem = false
  /// Folders never entered: the output folder when it lies inside an input.
  var excludedFolders: Set<FileIdentity> = []
  /// Files never compressed: the run's task log when it lies inside an input.
  var excludedFiles: Set<FileIdentity> = []
  /// Keep the path and reason of every skip (for `-v` and `--dry-run`), not just counts.
  package var recordsSkippedPaths = false
  /// Set the stale temporaries of killed runs met on the way aside for the run to remove
  /// (`DiscoveryResult/staleTemporaries`), rather than skip them: discovery itself
  /// removes nothing.
  package var findsStaleTemporaries = true
  /// A mirror (`-o`): arguments map as rsync's (`ArgumentMapping`) and, unless links are
  /// followed, symbolic links are listed to be stored as links (a link argument without a
  /// trailing slash too).
  package var mirrorsTree = false
  /// Leave out the archive marker (`ArchiveMarker`), an unfinished snapshot's marker
  /// (`SnapshotMarker`) and the mirror's manifest (`MirrorManifest`) at an argument's top:
  /// restores ignore them.
  package var skipsArchiveMarker = false
  /// The most bytes of names the list takes (`FileList/maximumNameBytes`; lower in tests).
  package var nameCapacity = FileList.maximumNameBytes
  /// Threads that read an argument's folders at once (`ParallelListing`); 1 reads them one
  /// after another. Links are never followed on several threads: which of two ways to the
  /// same file or folder is taken depends on the walk's order.
  package var listingThreads = 1

  /// The defaults: files to compress, `.gz`, no selection, links not followed, one
  /// listing thread.
  package init() {}

  /// True when links are listed as links rather than skipped or followed.
  var recordsLinks: Bool { mirrorsTree && !followSymlinks }
}

/// A path discovery could not handle, or a word about an argument.
struct DiscoveryFailure: Sendable, Error, CustomStringConvertible {
  /// The path, as displayed.
  var path: RawPath
  /// What went wrong.
  var cause: String

  var description: String { "\(path.displayString): \(cause)" }
}

/// What a walk produced.
struct DiscoveryResult: Sendable {
  /// The selected files.
  var files = FileList()
  /// How many entries were skipped, by reason.
  var skipCounts: [SkipReason: Int] = [:]
  /// Each skipped path and why (only with ``DiscoveryOptions/recordsSkippedPaths``).
  var skipped: [(path: RawPath, reason: SkipReason)] = []
  /// Arguments that do not exist, folders that cannot be read, and the like: failures.
  var failures: [DiscoveryFailure] = []
  /// Words to the user that are not failures: an argument that is not a regular file or has
  /// the wrong suffix (skipped, as gzip warns), a followed link that leads outside its
  /// argument.
  var warnings: [DiscoveryFailure] = []
  /// Stale temporaries of killed runs met on the way (``DiscoveryOptions/findsStaleTemporaries``),
  /// by folder record and name: the run removes them before its work.
  var staleTemporaries: [(directory: Int32, name: RawPath)] = []

  /// Total number of skipped entries.
  var skippedCount: Int { skipCounts.values.reduce(0, +) }
}

/// Walks the arguments and lists the regular files to work on, recursively, without following
/// symbolic links unless asked.
///
/// Each folder is opened relative to its argument's open folder, read completely with
/// `getdents64` (a file costs one `fstatat`), sorted by name, and closed before its
/// subfolders are walked (``FolderScan``): only one folder is open at a time on each
/// listing thread however deep the tree, so a 1,000-level tree works under a small
/// `ulimit -n`. With ``DiscoveryOptions/listingThreads`` above 1 an argument's folders are
/// read on that many threads at once (``ParallelListing``) and recorded in the same order.
/// With `--follow-symlinks` every folder and file is taken once (by device and inode), so
/// link loops end, and links that lead outside their argument are reported.
struct Discovery {
  let options: DiscoveryOptions
  let bases: BaseDirectories
  let namer: TemporaryNamer
  var result = DiscoveryResult()
  /// Files already taken, by identity (`--follow-symlinks` only).
  private var seenFiles: Set<FileIdentity> = []
  /// The last folder whose path a message needed, and that path (``shownPath(ofDirectory:)``).
  private var shownFolder: (directory: Int32, path: RawPath)? = nil

  /// Prepares a walk.
  init(options: DiscoveryOptions, bases: BaseDirectories, namer: TemporaryNamer) {
    self.options = options
    self.bases = bases
    self.namer = namer
    result.files.nameCapacity = options.nameCapacity
  }

  /// Walks every argument in order and returns what was found.
  static func run(
    arguments: [RawPath], options: DiscoveryOptions, bases: BaseDirectories, namer: TemporaryNamer
  ) -> DiscoveryResult {
    var walk = Discovery(options: options, bases: bases, namer: namer)
    for argument in arguments { walk.add(argument: argument) }
    return walk.result
  }

  /// Adds one command-line argument: a folder (walked), a regular file (taken directly) or
  /// something else (skipped with a warning, or a failure).
  mutating func add(argument: RawPath) {
    let status: FileStatus
    do {
      // A trailing slash makes the kernel resolve a link to a folder, as with `ls dir/`.
      status = try FileStatus.of(
        argument, in: Descriptor.currentDirectory, followingSymlinks: options.followSymlinks)
    } catch {
      fail(argument, error.description)
      return
    }
    switch status.kind {
    case .directory:
      addFolder(argument: argument, status: status)
    case .regular:
      addFileArgument(argument, status: status)
    case .symbolicLink where options.recordsLinks:
      addLinkArgument(argument, status: status)
    // -t and -l read what an argument names, as gzip -t and -l (and -dc) do: a link is
    // followed, a pipe or device read. Entries met while walking folders are not.
    case .symbolicLink where options.wanted == .compressedOrNamed:
      addFollowedArgument(argument)
    case .fifo where options.wanted == .compressedOrNamed,
      .characterDevice where options.wanted == .compressedOrNamed:
      addFileArgument(argument, status: status, followed: true)
    case .symbolicLink:
      fail(
        argument,
        "is a symbolic link, not followed (use --follow-symlinks, or name the folder with a trailing '/')"
      )
    default:
      let reason = SkipReason(kind: status.kind) ?? .device
      skip(argument, reason)
      warn(argument, "is \(status.kind), not a regular file or folder; ignored")
    }
  }

  /// A symbolic link named as an argument of `-t` or `-l`: what it leads to is read (a file,
  /// pipe or device); a link to a folder is refused as elsewhere (a trailing slash names
  /// the folder).
  private mutating func addFollowedArgument(_ argument: RawPath) {
    let status: FileStatus
    do {
      status = try FileStatus.of(argument, in: Descriptor.currentDirectory, followingSymlinks: true)
    } catch {
      fail(argument, error.description)
      return
    }
    switch status.kind {
    case .regular, .fifo, .characterDevice:
      addFileArgument(argument, status: status, followed: true)
    case .directory:
      fail(
        argument,
        "is a symbolic link to a folder, not followed (use --follow-symlinks, or name the folder with a trailing '/')"
      )
    default:
      let reason = SkipReason(kind: status.kind) ?? .device
      skip(argument, reason)
      warn(argument, "leads to \(status.kind), not a regular file or folder; ignored")
    }
  }

  /// A file named as an argument; `followed` when it is read through a link, or is a pipe
  /// or device (`-t`, `-l`: ``FileList/Root/isFollowedArgument``).
  private mutating func addFileArgument(
    _ argument: RawPath, status: FileStatus, followed: Bool = false
  ) {
    let name = argument.lastComponent
    if options.excludedFiles.contains(FileIdentity(status)) {
      skip(argument, .taskLog)
      warn(argument, "is this run's task log (--task-log); not compressed")
      return
    }
    switch options.wanted {
    case .uncompressed where isCompressedName(name):
      skip(argument, .alreadyCompressed)
      warn(argument, "already has a compressed suffix; unchanged")
      return
    case .compressedByName
    where GzipNaming.decompressedName(of: name, suffix: options.suffix) == nil:
      skip(argument, .notCompressed)
      warn(argument, "unknown suffix; ignored")
      return
    default:
      break
    }
    if let reason = options.selection.skipReason(forFile: name, modified: status.modificationTime) {
      skip(argument, reason)
      return
    }
    guard
      let directory = addParentRoot(
        of: argument, identity: FileIdentity(status), followed: followed)
    else {
      return
    }
    if options.followSymlinks && !seenFiles.insert(FileIdentity(status)).inserted {
      skip(argument, .alreadyListed)
      return
    }
    guard let stored = result.files.store(name) else {
      fail(argument, FileList.fullMessage)
      return
    }
    appendRecord(stored, status: status, directory: directory)
  }

  /// A symbolic link named as an argument of a mirror (no trailing slash): stored as a link.
  private mutating func addLinkArgument(_ argument: RawPath, status: FileStatus) {
    let name = argument.lastComponent
    if let reason = options.selection.skipReason(forFile: name, modified: status.modificationTime) {
      skip(argument, reason)
      return
    }
    guard let directory = addParentRoot(of: argument, identity: FileIdentity(status)) else {
      return
    }
    let root = result.files.roots[Int(result.files.directories[Int(directory)].root)]
    do {
      let target = try RelativeLocation.symbolicLinkTarget(
        of: name, in: bases.descriptor(root.base))
      append(link: name, target: target, status: status, directory: directory, display: argument)
      result.files.roots[result.files.roots.count - 1].isLinkArgument = true
    } catch {
      fail(argument, "cannot read symbolic link: \(error)")
    }
  }

  /// Records the root of a file or link argument: the folder holding it.
  ///
  /// - Returns: the index of that folder's ``FileList/Directory``, or nil (reported).
  private mutating func addParentRoot(
    of argument: RawPath, identity: FileIdentity, followed: Bool = false
  ) -> Int32? {
    let base: Int
    let folder: FileStatus
    do {
      base = try bases.open(argument.parent)
      folder = try FileStatus.of(".", in: bases.descriptor(base))
    } catch {
      fail(argument, "cannot open its folder: \(error)")
      return nil
    }
    let rootIndex = Int32(result.files.roots.count)
    var root = FileList.Root(
      argument: argument, isFileArgument: true, base: base, identity: identity)
    root.isFollowedArgument = followed
    result.files.roots.append(root)
    let directory = Int32(result.files.directories.count)
    var record = FileList.Directory(
      parent: -1, root: rootIndex, nameOffset: 0, nameLength: 0,
      permissions: UInt16(folder.permissions & 0o7777), identity: FileIdentity(folder))
    record.takeMetadata(of: folder)
    result.files.directories.append(record)
    return directory
  }

  private mutating func addFolder(argument: RawPath, status: FileStatus) {
    if options.excludedFolders.contains(FileIdentity(status)) {
      fail(argument, "is the output folder (-o); nothing in it is compressed")
      return
    }
    let base: Int
    do {
      base = try bases.open(argument)
    } catch {
      fail(argument, "cannot open folder: \(error)")
      return
    }
    let rootIndex = Int32(result.files.roots.count)
    let identity = FileIdentity(status)
    var root = FileList.Root(
      argument: argument, isFileArgument: false, base: base, identity: identity)
    if options.mirrorsTree {
      root.destination = ArgumentMapping.destination(of: argument, isFolder: true)
    }
    result.files.roots.append(root)
    let top = Int32(result.files.directories.count)
    var topRecord = FileList.Directory(
      parent: -1, root: rootIndex, nameOffset: 0, nameLength: 0,
      permissions: UInt16(status.permissions & 0o7777), identity: identity)
    topRecord.takeMetadata(of: status)
    result.files.directories.append(topRecord)
    let context = FolderScan.Context(
      options: options, namer: namer, base: bases.descriptor(base), argument: argument,
      rootDevice: status.device, rootRealPath: options.followSymlinks ? argument.realPath : nil)
    if options.listingThreads > 1 && !options.followSymlinks {
      let before = result
      // No set of the folders met while recording: ParallelListing files a scan only when
      // each of its subfolders is met for the first time, and a folder met twice stops it
      // and has everything recorded undone below, so the set would never find one (its
      // hashing was about 90 instructions a file).
      var unchecked: Set<FileIdentity>? = nil
      let outcome = ParallelListing.read(
        identity: identity, context: context, threads: options.listingThreads, top: top
      ) { scan, directory in
        record(scan, directory: directory, visited: &unchecked).map { ($0.entry, $0.record) }
      }
      guard case .folderReachedTwice = outcome else { return }
      // A bind mount: what was recorded is undone, and the serial walk below decides which
      // way to the folder is listed and which is skipped, as without threads.
      result = before
      shownFolder = nil
    }
    var visited: Set<FileIdentity>? = [identity]
    var pending: [Int32] = [top]
    while let directory = pending.popLast() {
      let children = walk(directory: directory, context: context, visited: &visited)
      pending.append(contentsOf: children.reversed())
    }
  }

  /// Lists one folder and records it; returns its subfolders (already recorded) in name order.
  private mutating func walk(
    directory: Int32, context: FolderScan.Context, visited: inout Set<FileIdentity>?
  ) -> [Int32] {
    let scan = FolderScan.read(result.files.relativePath(ofDirectory: directory), context: context)
    return record(scan, directory: directory, visited: &visited).map(\.record)
  }

  /// Records what a folder's scan found, in its order: files, links and subfolders into the
  /// list, skips, failures and warnings into the result.
  ///
  /// - Returns: the subfolders to walk, in name order: each one's position among the scan's
  ///   subfolder entries, and its record's index.
  private mutating func record(
    _ scan: FolderScan, directory: Int32, visited: inout Set<FileIdentity>?
  ) -> [(entry: Int, record: Int32)] {
    if let failure = scan.failure {
      fail(shownPath(ofDirectory: directory), failure)
      return []
    }
    result.files.directories[Int(directory)].hasNoDefaultACL = scan.hasNoDefaultACL
    for name in scan.staleTemporaries {
      result.staleTemporaries.append((directory, scan.name(name)))
    }
    let firstFile = result.files.files.count
    var subfolders: [(entry: Int, record: Int32)] = []
    var subfolderEntries = 0
    for entry in scan.entries {
      switch entry {
      case .file(let name, let status):
        if options.followSymlinks && !seenFiles.insert(FileIdentity(status)).inserted {
          skip(.alreadyListed, name, of: scan, in: directory)
        } else {
          append(file: name, of: scan, status: status, directory: directory)
        }
      case .link(let name, let target, let status):
        append(
          link: scan.name(name), target: scan.linkTargets[target], status: status,
          directory: directory,
          display: shownPath(ofDirectory: directory).appending(scan.name(name)))
      case .subfolder(let name, let status):
        if let subfolder = addSubfolder(
          name, of: scan, status: status, in: directory, visited: &visited)
        {
          subfolders.append((subfolderEntries, subfolder))
        }
        subfolderEntries += 1
      case .skipped(let name, let reason):
        skip(reason, name, of: scan, in: directory)
      case .failed(let name, let cause):
        fail(shownPath(ofDirectory: directory).appending(scan.name(name)), scan.messages[cause])
      case .warned(let name, let cause):
        warn(shownPath(ofDirectory: directory).appending(scan.name(name)), scan.messages[cause])
      }
    }
    finish(scan, directory: directory, firstFile: firstFile)
    return subfolders
  }

  /// The path of `directory` as the user would write it, for messages: made for the first
  /// message about a folder's entries and kept for the next ones (a path made for every
  /// folder cost about 1,000 instructions each, and most folders have nothing to say).
  private mutating func shownPath(ofDirectory directory: Int32) -> RawPath {
    if let shownFolder, shownFolder.directory == directory { return shownFolder.path }
    let path = result.files.displayPath(ofDirectory: directory)
    shownFolder = (directory, path)
    return path
  }

  /// Counts the entry `name` of `directory`'s scan as skipped, and keeps its path when asked
  /// (``DiscoveryOptions/recordsSkippedPaths``; built only then).
  private mutating func skip(
    _ reason: SkipReason, _ name: FolderScan.Name, of scan: FolderScan, in directory: Int32
  ) {
    result.skipCounts[reason, default: 0] += 1
    if options.recordsSkippedPaths {
      result.skipped.append(
        (shownPath(ofDirectory: directory).appending(scan.name(name)), reason))
    }
  }

  /// Records a subfolder to walk, unless a link (or a bind mount) led to it a second time:
  /// a folder already in `visited`, which is nil when ParallelListing has made sure of it.
  ///
  /// - Returns: its record's index, or nil when it is not walked.
  private mutating func addSubfolder(
    _ name: FolderScan.Name, of scan: FolderScan, status: FileStatus, in directory: Int32,
    visited: inout Set<FileIdentity>?
  ) -> Int32? {
    let identity = FileIdentity(status)
    if let inserted = visited?.insert(identity).inserted, !inserted {
      // Only links can reach a folder twice: a loop when it is on the way here.
      skip(
        isAncestor(identity, of: directory) ? .symlinkLoop : .alreadyListed, name, of: scan,
        in: directory)
      return nil
    }
    guard let stored = result.files.store(name, of: scan.listing) else {
      fail(shownPath(ofDirectory: directory).appending(scan.name(name)), FileList.fullMessage)
      return nil
    }
    var record = FileList.Directory(
      parent: directory, root: result.files.directories[Int(directory)].root,
      nameOffset: stored.offset, nameLength: stored.length,
      permissions: UInt16(status.permissions & 0o7777), identity: identity)
    record.takeMetadata(of: status)
    result.files.directories.append(record)
    return Int32(result.files.directories.count - 1)
  }

  /// Ends a folder's recording: which of its files already have an output beside them (from
  /// the listing just read), and the compressed names that are not such an output, skipped.
  /// A restore's files (`-d`) learn the same of their restored names (`a.txt` beside
  /// `a.txt.gz`).
  private mutating func finish(_ scan: FolderScan, directory: Int32, firstFile: Int) {
    if options.wanted == .compressedByName {
      for index in firstFile..<result.files.files.count {
        let name = result.files.name(of: result.files.files[index])
        result.files.files[index].outputListedBeside =
          GzipNaming.decompressedName(of: name, suffix: options.suffix).map(
            scan.listing.contains) ?? true
      }
    }
    guard options.wanted == .uncompressed else {
      for name in scan.compressedNames {
        skip(.alreadyCompressed, name, of: scan, in: directory)
      }
      return
    }
    // A folder with no name ending in the suffix has no output beside any of its files: no
    // output name to build and look up for each of them.
    if !scan.listing.hasName(endingIn: options.suffix) {
      for index in firstFile..<result.files.files.count {
        result.files.files[index].outputListedBeside = false
      }
      for name in scan.compressedNames { skip(.alreadyCompressed, name, of: scan, in: directory) }
      return
    }
    var outputs = Set<RawPath>()
    for index in firstFile..<result.files.files.count {
      let name = result.files.name(of: result.files.files[index]).addingSuffix(options.suffix)
      result.files.files[index].outputListedBeside = scan.listing.contains(name)
      if result.files.files[index].outputListedBeside { outputs.insert(name) }
    }
    for name in scan.compressedNames where !outputs.contains(scan.name(name)) {
      skip(.alreadyCompressed, name, of: scan, in: directory)
    }
  }

  /// True when the folder `identity` is `directory` or one of its parents.
  private func isAncestor(_ identity: FileIdentity, of directory: Int32) -> Bool {
    var current = directory
    while current >= 0 {
      if result.files.directories[Int(current)].identity == identity { return true }
      current = result.files.directories[Int(current)].parent
    }
    return false
  }

  /// Records a link to mirror; `display` names it if the list is full.
  private mutating func append(
    link name: RawPath, target: RawPath, status: FileStatus, directory: Int32, display: RawPath
  ) {
    let names = result.files.names.count
    guard let stored = result.files.store(name), let storedTarget = result.files.store(target)
    else {
      result.files.names.removeSubrange(names...)
      fail(display, FileList.fullMessage)
      return
    }
    result.files.links.append(
      FileList.Link(
        directory: directory, nameOffset: stored.offset, nameLength: stored.length,
        targetOffset: storedTarget.offset, targetLength: storedTarget.length,
        userID: status.userID, groupID: status.groupID, accessTime: status.accessTime,
        modificationTime: status.modificationTime))
  }

  /// Records a file to work on (its path is built only if the list is full, for the
  /// failure: a path made for every file cost an allocation each).
  private mutating func append(
    file name: FolderScan.Name, of scan: FolderScan, status: FileStatus, directory: Int32
  ) {
    guard let stored = result.files.store(name, of: scan.listing) else {
      fail(shownPath(ofDirectory: directory).appending(scan.name(name)), FileList.fullMessage)
      return
    }
    appendRecord(stored, status: status, directory: directory)
  }

  /// Records a file to work on whose name is stored at `stored`.
  private mutating func appendRecord(
    _ stored: (offset: UInt32, length: UInt16), status: FileStatus, directory: Int32
  ) {
    result.files.files.append(
      FileList.File(
        directory: directory, nameOffset: stored.offset, nameLength: stored.length,
        size: status.size, modificationTime: status.modificationTime, device: status.device,
        inode: status.inode, linkCount: UInt32(clamping: status.linkCount),
        permissions: UInt16(status.permissions & 0o7777), userID: status.userID,
        groupID: status.groupID))
  }

  private func isCompressedName(_ name: RawPath) -> Bool {
    GzipNaming.hasCompressedSuffix(name, suffix: options.suffix)
  }

  private mutating func skip(_ path: RawPath, _ reason: SkipReason) {
    result.skipCounts[reason, default: 0] += 1
    if options.recordsSkippedPaths { result.skipped.append((path, reason)) }
  }

  private mutating func fail(_ path: RawPath, _ cause: String) {
    result.failures.append(DiscoveryFailure(path: path, cause: cause))
  }

  private mutating func warn(_ path: RawPath, _ cause: String) {
    result.warnings.append(DiscoveryFailure(path: path, cause: cause))
  }
}

extension SkipReason {
  /// The skip reason for a file of a kind squeeze does not compress; nil for regular files
  /// and folders.
  init?(kind: FileKind) {
    switch kind {
    case .characterDevice, .blockDevice: self = .device
    case .fifo: self = .fifo
    case .socket: self = .socket
    case .symbolicLink: self = .symbolicLink
    case .unknown: self = .device
    case .regular, .directory: return nil
    }
  }
}
