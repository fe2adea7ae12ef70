import CSystem
import Glibc

/// A file named relative to an open directory: `base` (a directory descriptor the run keeps
/// open) plus a relative folder path and a name, so nothing depends on the current
/// directory and paths deeper than `PATH_MAX` still work.
///
/// Opening resolves the path without following symbolic links unless ``symlinks`` says
/// otherwise (see ``FileDescriptor/open(_:in:flags:permissions:symlinks:)``).
package struct RelativeLocation: Sendable, Hashable {
  /// The directory the path is relative to; owned by the run, not by this value.
  package var base: Int32
  /// The folder below `base`, empty for `base` itself.
  package var directory: RawPath
  /// The file's name within `directory`.
  package var name: RawPath
  /// Which symbolic links opening may follow (`--follow-symlinks` relaxes it).
  package var symlinks: SymlinkPolicy

  /// The entry `name` in `directory` below the open folder `base`, reached following only
  /// the links `symlinks` allows.
  package init(base: Int32, directory: RawPath, name: RawPath, symlinks: SymlinkPolicy = .never) {
    self.base = base
    self.directory = directory
    self.name = name
    self.symlinks = symlinks
  }

  /// `directory/name`.
  package var relativePath: RawPath { directory.appending(name) }

  /// The same folder with another name.
  package func sibling(named other: RawPath) -> RelativeLocation {
    RelativeLocation(base: base, directory: directory, name: other, symlinks: symlinks)
  }

  /// Calls `body` with a directory descriptor and a path relative to it that names this
  /// file: `base` and `directory/name` when short enough, otherwise a descriptor opened on
  /// `directory` (slice by slice) and `name`.
  func withParent<R>(
    _ body: (Int32, RawPath) throws(SystemError) -> R
  ) throws(SystemError) -> R {
    let path = relativePath
    if path.count < FileDescriptor.pathSliceLimit { return try body(base, path) }
    let parent = try FileDescriptor.open(
      directory, in: base, flags: .folder, symlinks: symlinks.forFolders)
    return try body(parent.rawValue, name)
  }

  /// Opens the file, following symbolic links only as ``symlinks`` allows.
  ///
  /// - Throws: ``SystemError``; `ELOOP` when a link is met that may not be followed.
  package func open(flags: OpenFlags, permissions: mode_t = 0) throws(SystemError) -> FileDescriptor
  {
    guard directory.count + 1 + name.count < FileDescriptor.pathSliceLimit else {
      return try FileDescriptor.open(
        relativePath, in: base, flags: flags, permissions: permissions, symlinks: symlinks)
    }
    // The common case, once per file: no joined path on the heap.
    let descriptor = try RawPath.withJoinedCString(directory, name) {
      (cPath) throws(SystemError) -> Int32 in
      try FileDescriptor.openDirect(
        cPath, in: base, flags: flags.rawValue | O_CLOEXEC, permissions: permissions,
        symlinks: symlinks)
    }
    return FileDescriptor(owning: descriptor)
  }

  /// The file's status without following a final symbolic link (`fstatat`).
  ///
  /// - Throws: ``SystemError``, `ENOENT` when it does not exist.
  package func status() throws(SystemError) -> FileStatus {
    try withParent { (directory, path) throws(SystemError) in
      try FileStatus.of(path, in: directory)
    }
  }

  /// Removes the file (`unlinkat`).
  ///
  /// - Throws: ``SystemError`` from `unlinkat(2)`.
  package func remove() throws(SystemError) {
    try withParent { (directory, path) throws(SystemError) in
      _ = try path.withCString { (cPath) throws(SystemError) in
        try retryingOnInterrupt { unlinkat(directory, cPath, 0) }
      }
    }
  }

  /// Creates the folders of `directory` that do not exist yet (`mkdir -p` below `base`),
  /// with `permissions` (before the umask).
  ///
  /// With the default policy (``SymlinkPolicy/never``) each folder is created in its parent
  /// opened without following links (`mkdirat` on a descriptor from `RESOLVE_NO_SYMLINKS`),
  /// so a link on the way fails with `ELOOP` instead of creating folders wherever it points;
  /// with the others (a path the user named) links on the way are followed.
  ///
  /// - Throws: ``SystemError`` from the first `mkdirat` or open that fails for a reason
  ///   other than `EEXIST`.
  package func createDirectories(permissions: mode_t = 0o777) throws(SystemError) {
    if symlinks == .never {
      try createDirectoriesNotFollowingLinks(permissions: permissions)
      return
    }
    var prefix: RawPath = directory.isAbsolute ? "/" : ""
    for component in directory.components {
      let parent = prefix
      prefix = prefix.appending(component)
      let folder = RelativeLocation(base: base, directory: parent, name: component)
      do {
        try folder.withParent { (parent, path) throws(SystemError) in
          _ = try path.withCString { (cPath) throws(SystemError) in
            try retryingOnInterrupt { mkdirat(parent, cPath, permissions) }
          }
        }
      } catch  where error.code == EEXIST {
        continue
      }
    }
  }

  private func createDirectoriesNotFollowingLinks(permissions: mode_t) throws(SystemError) {
    var owned: Int32 = -1
    defer { if owned >= 0 { close(owned) } }
    var parent = directory.isAbsolute ? AT_FDCWD : base
    var components = directory.components
    if directory.isAbsolute { components.insert("/", at: 0) }
    for component in components {
      if component != "/" {
        do throws(SystemError) {
          _ = try component.withCString { (cName) throws(SystemError) in
            try retryingOnInterrupt { mkdirat(parent, cName, permissions) }
          }
        } catch  where error.code == EEXIST {
          // Already there: it is checked by the open below.
        }
      }
      let next = try FileDescriptor.open(
        component, in: parent, flags: OpenFlags(rawValue: SQUEEZE_O_PATH | O_DIRECTORY),
        symlinks: .never
      ).release()
      if owned >= 0 { close(owned) }
      owned = next
      parent = next
    }
  }
}
