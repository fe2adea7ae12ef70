import SqueezeSystem

/// Everything discovery found: the folders walked and the regular files selected, stored
/// compactly (one shared byte arena for all names, fixed-size records), because a run may
/// list hundreds of thousands of files: a file costs its record (72 bytes) plus its name.
///
/// Paths are rebuilt on demand from a file's folder chain; each argument is a ``Root``.
struct FileList: Sendable {
  /// A command-line argument's starting point.
  struct Root: Sendable {
    /// The argument as given: the prefix of displayed paths.
    var argument: RawPath
    /// True when the argument named a single file rather than a folder.
    var isFileArgument: Bool
    /// The open folder files of this root are relative to: the argument's folder, or for a
    /// file argument the folder holding it (an index into the run's ``BaseDirectories``).
    var base: Int
    /// Identity of the root folder (`st_dev`, `st_ino`).
    var identity: FileIdentity
    /// In a mirror (`-o`), the folder below the mirror this argument's entries land in, as
    /// rsync and cp map arguments: `a/x` lands in `x`, `a/x/` (contents) and file and link
    /// arguments at the mirror's top (""). See ``ArgumentMapping``.
    var destination: RawPath = ""
    /// The argument is a symbolic link, mirrored as a link (`-o` without a trailing slash).
    var isLinkArgument = false
    /// A file argument of `-t` or `-l` read as gzip reads it: through a symbolic link, or a
    /// named pipe or device (`<(cmd)` is `/dev/fd/63`, a link to a pipe). Its file is opened
    /// following links and may be a pipe or device (``SourceFile``).
    var isFollowedArgument = false
  }

  /// One folder that was walked.
  struct Directory: Sendable {
    /// The folder containing this one, or -1 for a root's own folder.
    var parent: Int32
    /// The ``Root`` this folder belongs to.
    var root: Int32
    /// This folder's name in `names` (empty for a root's own folder).
    var nameOffset: UInt32
    var nameLength: UInt16
    /// Permission bits of the source folder (mirrored folders are created with them).
    var permissions: UInt16
    /// The folder's identity (`st_dev`, `st_ino`).
    var identity: FileIdentity
    /// Checked when listed: the folder has no default ACL, so files created in it get the
    /// bits asked for, less the umask (see ``CreationPermissions``). False when unchecked.
    var hasNoDefaultACL = false
    /// Owner and group of the source folder (a mirror's folders get them as root).
    var userID: UInt32 = 0
    var groupID: UInt32 = 0
    /// Access and modification times of the source folder when listed (a mirror's folders
    /// get them once their contents are written).
    var accessTime = Timestamp(seconds: 0, nanoseconds: 0)
    var modificationTime = Timestamp(seconds: 0, nanoseconds: 0)

    /// Copies the metadata a mirror gives its folders from `status`.
    mutating func takeMetadata(of status: FileStatus) {
      userID = status.userID
      groupID = status.groupID
      accessTime = status.accessTime
      modificationTime = status.modificationTime
    }
  }

  /// One symbolic link selected for a mirror (`-o`): stored as a link with the same target.
  struct Link: Sendable {
    /// The folder holding it, an index into `directories`.
    var directory: Int32
    /// Its name and its target in `names`.
    var nameOffset: UInt32
    var nameLength: UInt16
    var targetOffset: UInt32
    var targetLength: UInt16
    /// Owner and group (set on the mirrored link as root).
    var userID: UInt32
    var groupID: UInt32
    /// The link's own access and modification times.
    var accessTime: Timestamp
    var modificationTime: Timestamp
  }

  /// One selected regular file.
  struct File: Sendable {
    /// The folder holding it, an index into `directories`.
    var directory: Int32
    /// Its name in `names`.
    var nameOffset: UInt32
    var nameLength: UInt16
    /// Size in bytes when listed.
    var size: Int64
    /// Modification time when listed.
    var modificationTime: Timestamp
    /// Identity when listed (`st_dev`, `st_ino`): opening must find the same file.
    var device: UInt64
    var inode: UInt64
    /// Hard-link count when listed.
    var linkCount: UInt32
    /// Permission bits when listed (`st_mode & 0o7777`): a restore is up to date only with
    /// the `.gz` file's bits.
    var permissions: UInt16 = 0
    /// Whether the folder listing also held this file's output name beside it: `a.txt.gz`
    /// for `a.txt` when compressing, `a.txt` for `a.txt.gz` when restoring (`-d`). When it
    /// did not, writing beside it need not look for an existing output (one that appears
    /// meanwhile is caught when it is renamed into place, with `RENAME_NOREPLACE`).
    var outputListedBeside = true
    /// Owner and group when listed: as root, `--link-dest` links an earlier output only when
    /// it has them, judged without a further `fstatat(2)` of the source per file. Last, where
    /// they fill the record's padding but for 8 bytes.
    var userID: UInt32 = 0
    var groupID: UInt32 = 0
  }

  var roots: [Root] = []
  var directories: [Directory] = [] {
    didSet { extendDirectoryPaths() }
  }
  /// Each folder's path relative to its root, computed once when the folder is added (a
  /// file's paths are built many times: to open it, to name its output, in messages).
  private var directoryPaths: [RawPath] = []
  var files: [File] = []
  /// Symbolic links to mirror as links (`-o`; empty otherwise).
  var links: [Link] = []
  /// All folder, file and link names and link targets, back to back.
  var names: [UInt8] = []
  /// The most bytes `names` takes: ``maximumNameBytes``, lower in tests.
  var nameCapacity = Self.maximumNameBytes

  /// The most bytes of names one list holds: 4 GiB, what the records' 32-bit offsets reach
  /// (they stay 32-bit to keep a file's record small). About 17 million names of 255 bytes,
  /// or 100 million of 40.
  static let maximumNameBytes = Int(UInt32.max)

  /// Why an entry past ``maximumNameBytes`` is not listed, for its failure.
  static let fullMessage =
    "not listed: this run's list holds 4 GiB of names, all it can; split the run (--shard k/n, or fewer paths at a time)"

  init() {}

  /// Total size of all files in bytes.
  var totalBytes: Int64 { files.reduce(0) { $0.addingSaturated($1.size) } }

  /// Adds a name (or a link's target) to the arena.
  ///
  /// - Returns: where it is, or nil when the arena cannot take it: it would pass
  ///   ``nameCapacity``, or the name is longer than a record's 16-bit length (file names are
  ///   at most 255 bytes, link targets 4,095 on Linux).
  mutating func store(_ name: RawPath) -> (offset: UInt32, length: UInt16)? {
    store(name.bytes)
  }

  /// Adds the name of `entry` in `listing` to the arena, copied from where it lies (the
  /// returned place and nil as for a path).
  mutating func store(
    _ entry: DirectoryListing.Entry, of listing: DirectoryListing
  ) -> (offset: UInt32, length: UInt16)? {
    let start = Int(entry.offset)
    // Through a buffer pointer: appending an array slice took about 120 instructions a name.
    return listing.names.withUnsafeBufferPointer {
      store(UnsafeBufferPointer(rebasing: $0[start..<(start + Int(entry.length))]))
    }
  }

  private mutating func store<Bytes: Collection<UInt8>>(
    _ name: Bytes
  ) -> (offset: UInt32, length: UInt16)? {
    guard let length = UInt16(exactly: name.count), name.count <= nameCapacity - names.count,
      let offset = UInt32(exactly: names.count)
    else { return nil }
    names.append(contentsOf: name)
    return (offset, length)
  }

  func name(offset: UInt32, length: UInt16) -> RawPath {
    let start = Int(offset)
    return RawPath(bytes: names[start..<(start + Int(length))])
  }

  /// The file's name (its last path component).
  func name(of file: File) -> RawPath {
    name(offset: file.nameOffset, length: file.nameLength)
  }

  /// The folder of `directory` relative to its root ("" for the root's own folder).
  func relativePath(ofDirectory directory: Int32) -> RawPath {
    directoryPaths[Int(directory)]
  }

  /// Computes the paths of folders added since the last call.
  private mutating func extendDirectoryPaths() {
    while directoryPaths.count < directories.count {
      let folder = directories[directoryPaths.count]
      guard folder.parent >= 0, folder.nameLength > 0 else {
        directoryPaths.append("")
        continue
      }
      // Joined in one array (as RawPath.appending joins: a slash unless the parent path is
      // empty or ends in one): the name made a path of its own first cost an allocation.
      let start = Int(folder.nameOffset)
      let parent = directoryPaths[Int(folder.parent)].bytes
      let slash = !parent.isEmpty && parent.last != UInt8(ascii: "/")
      var path: [UInt8] = []
      path.reserveCapacity(parent.count + (slash ? 1 : 0) + Int(folder.nameLength))
      path.append(contentsOf: parent)
      if slash { path.append(UInt8(ascii: "/")) }
      names.withUnsafeBufferPointer {
        path.append(
          contentsOf: UnsafeBufferPointer(rebasing: $0[start..<(start + Int(folder.nameLength))]))
      }
      directoryPaths.append(RawPath(bytes: path))
    }
  }

  /// The link's name.
  func name(of link: Link) -> RawPath {
    name(offset: link.nameOffset, length: link.nameLength)
  }

  /// The link's target, as stored in it.
  func target(of link: Link) -> RawPath {
    name(offset: link.targetOffset, length: link.targetLength)
  }

  /// The link's path as the user would write it.
  func displayPath(of link: Link) -> RawPath {
    let root = roots[Int(directories[Int(link.directory)].root)]
    if root.isFileArgument { return root.argument }
    return root.argument.trimmingTrailingSlashes.appending(
      relativePath(ofDirectory: link.directory).appending(name(of: link)))
  }

  /// The folder's path as the user would write it.
  func displayPath(ofDirectory directory: Int32) -> RawPath {
    let root = roots[Int(directories[Int(directory)].root)]
    return root.argument.trimmingTrailingSlashes.appending(relativePath(ofDirectory: directory))
  }

  /// The folder's path below the mirror: its root's destination, then its path below the
  /// root.
  func mirrorPath(ofDirectory directory: Int32) -> RawPath {
    roots[Int(directories[Int(directory)].root)].destination.appending(
      relativePath(ofDirectory: directory))
  }

  /// The root a file belongs to.
  func root(of file: File) -> Root {
    roots[Int(directories[Int(file.directory)].root)]
  }

  /// The index of the root a file belongs to.
  func rootIndex(of file: File) -> Int {
    Int(directories[Int(file.directory)].root)
  }

  /// The file's path relative to its root (`sub/dir/name`).
  func relativePath(of file: File) -> RawPath {
    relativePath(ofDirectory: file.directory).appending(name(of: file))
  }

  /// The file's path as the user would write it: a file argument as given, otherwise the
  /// folder argument followed by the path below it.
  func displayPath(of file: File) -> RawPath {
    let root = root(of: file)
    if root.isFileArgument { return root.argument }
    return root.argument.trimmingTrailingSlashes.appending(relativePath(of: file))
  }

  /// What discovery recorded about `file` (identity, size, times, link count, permission
  /// bits), in the shape of a status: how existing outputs are judged before the file is
  /// opened.
  func listedStatus(of file: File) -> FileStatus {
    FileStatus(
      device: file.device, inode: file.inode,
      mode: FileStatus.regularFileType | UInt32(file.permissions),
      linkCount: UInt64(file.linkCount), size: file.size,
      modificationTime: file.modificationTime)
  }

  /// The identity of the folder holding `file`.
  func folderIdentity(of file: File) -> FileIdentity {
    directories[Int(file.directory)].identity
  }

  /// Permission bits of a folder when listed.
  func permissions(ofDirectory directory: Int32) -> UInt16 {
    directories[Int(directory)].permissions
  }
}
