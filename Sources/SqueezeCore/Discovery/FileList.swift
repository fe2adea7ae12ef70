/// Everything discovery found: the folders walked and the regular files selected, stored
/// compactly (one shared byte arena for all names, fixed-size records), because a run may
/// list hundreds of thousands of files: a file costs its record (56 bytes) plus its name.
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
    /// Whether the folder listing also held this name with the compressed suffix (`a.txt`
    /// and `a.txt.gz`): when it did not, compressing beside it need not look for an existing
    /// output (one that appears meanwhile is caught when it is renamed into place).
    var outputListedBeside = true
  }

  var roots: [Root] = []
  var directories: [Directory] = [] {
    didSet { extendDirectoryPaths() }
  }
  /// Each folder's path relative to its root, computed once when the folder is added (a
  /// file's paths are built many times: to open it, to name its output, in messages).
  private var directoryPaths: [RawPath] = []
  var files: [File] = []
  /// All folder and file names, back to back.
  var names: [UInt8] = []

  init() {}

  /// Total size of all files in bytes.
  var totalBytes: Int64 { files.reduce(0) { $0 + $1.size } }

  /// Adds a name to the arena.
  mutating func store(_ name: RawPath) -> (offset: UInt32, length: UInt16) {
    let offset = UInt32(names.count)
    names.append(contentsOf: name.bytes)
    return (offset, UInt16(name.count))
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
      let start = Int(folder.nameOffset)
      let name = RawPath(bytes: names[start..<(start + Int(folder.nameLength))])
      directoryPaths.append(directoryPaths[Int(folder.parent)].appending(name))
    }
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

  /// The identity of the folder holding `file`.
  func folderIdentity(of file: File) -> FileIdentity {
    directories[Int(file.directory)].identity
  }

  /// Permission bits of a folder when listed.
  func permissions(ofDirectory directory: Int32) -> UInt16 {
    directories[Int(directory)].permissions
  }
}
