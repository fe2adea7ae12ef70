import CSystem
import Glibc

/// Operations on one folder entry that never pass through a symbolic link on the way to it:
/// the folder holding the entry is opened first (`O_PATH`, with ``RelativeLocation/symlinks``:
/// by default `RESOLVE_NO_SYMLINKS`, so a link anywhere on the way fails with `ELOOP`), and
/// the `*at` call then names only the entry itself, with `AT_SYMLINK_NOFOLLOW` where the call
/// has it. This is what keeps a mirror (and a restore from a mirror someone else filled)
/// from ever writing outside its folder: a `mkdirat(base, "evil/x")` would follow `evil`.
extension RelativeLocation {
  /// Calls `body` with a descriptor of the folder holding this entry and the entry's name.
  ///
  /// - Throws: ``SystemError`` from opening the folder (`ELOOP` for a link on the way,
  ///   `ENOENT`, `ENOTDIR`), or what `body` throws.
  func withFolder<R>(_ body: (Int32, RawPath) throws(SystemError) -> R) throws(SystemError) -> R {
    if directory.isEmpty { return try body(base, name) }
    let folder = try FileDescriptor.open(
      directory, in: base, flags: OpenFlags(rawValue: SQUEEZE_O_PATH | O_DIRECTORY),
      symlinks: symlinks.forFolders)
    return try body(folder.rawValue, name)
  }

  /// The entry's status, not following a link at the entry or on the way (`fstatat`).
  ///
  /// - Throws: ``SystemError``: `ENOENT` when absent, `ELOOP` for a link on the way.
  package func entryStatus() throws(SystemError) -> FileStatus {
    try withFolder { (folder, name) throws(SystemError) in try FileStatus.of(name, in: folder) }
  }

  /// The status of the file the entry resolves to: the entry's own, or when it is a
  /// symbolic link, the status of what the link leads to (`fstatat` without
  /// `AT_SYMLINK_NOFOLLOW`; links on the way to the entry are treated as ``entryStatus()``
  /// treats them).
  ///
  /// - Throws: ``SystemError``: `ENOENT` when absent or a link leads nowhere, `ELOOP` for a
  ///   link on the way or a loop of links.
  package func resolvedStatus() throws(SystemError) -> FileStatus {
    try withFolder { (folder, name) throws(SystemError) in
      try FileStatus.of(name, in: folder, followingSymlinks: true)
    }
  }

  /// Creates the entry as a folder (`mkdirat`) with `permissions` (before the umask).
  ///
  /// - Throws: ``SystemError`` from `mkdirat(2)` (`EEXIST` when something is there).
  package func makeDirectory(permissions: mode_t) throws(SystemError) {
    try withFolder { (folder, name) throws(SystemError) in
      _ = try name.withCString { (cName) throws(SystemError) in
        try retryingOnInterrupt { mkdirat(folder, cName, permissions) }
      }
    }
  }

  /// Removes the entry: a file or link (`unlinkat`), or with `folder`, an empty folder
  /// (`AT_REMOVEDIR`).
  ///
  /// - Throws: ``SystemError`` from `unlinkat(2)`, `ENOTEMPTY` for a folder with entries.
  package func removeEntry(folder isFolder: Bool = false) throws(SystemError) {
    try withFolder { (folder, name) throws(SystemError) in
      _ = try name.withCString { (cName) throws(SystemError) in
        try retryingOnInterrupt { unlinkat(folder, cName, isFolder ? AT_REMOVEDIR : 0) }
      }
    }
  }

  /// Creates the entry as a symbolic link to `target` (`symlinkat`; the target is stored as
  /// given, never resolved).
  ///
  /// - Throws: ``SystemError`` from `symlinkat(2)` (`EEXIST` when something is there).
  package func makeSymbolicLink(to target: RawPath) throws(SystemError) {
    try withFolder { (folder, name) throws(SystemError) in
      _ = try target.withCString { (cTarget) throws(SystemError) in
        try name.withCString { (cName) throws(SystemError) in
          try retryingOnInterrupt { symlinkat(cTarget, folder, cName) }
        }
      }
    }
  }

  /// The target of the symbolic link at the entry (`readlinkat`), as raw bytes.
  ///
  /// - Throws: ``SystemError`` from `readlinkat(2)` (`EINVAL` when it is not a link).
  package func symbolicLinkTarget() throws(SystemError) -> RawPath {
    try withFolder { (folder, name) throws(SystemError) in
      try RelativeLocation.symbolicLinkTarget(of: name, in: folder)
    }
  }

  /// The target of the symbolic link `name` in the open folder `folder` (`readlinkat`).
  ///
  /// - Throws: ``SystemError`` from `readlinkat(2)` (`EINVAL` when it is not a link).
  package static func symbolicLinkTarget(of name: RawPath, in folder: Int32) throws(SystemError)
    -> RawPath
  {
    try name.withCString { (cName) throws(SystemError) -> RawPath in
      var size = 256
      while true {
        var buffer = [UInt8](repeating: 0, count: size)
        let count = buffer.withUnsafeMutableBytes { raw in
          readlinkat(folder, cName, raw.baseAddress!.assumingMemoryBound(to: CChar.self), size)
        }
        if count < 0 {
          if errno == EINTR { continue }
          throw SystemError.current
        }
        if count < size { return RawPath(bytes: buffer[..<count]) }
        size *= 4
      }
    }
  }

  /// Gives the entry (a link is not followed) access and modification times to the
  /// nanosecond (`utimensat` with `AT_SYMLINK_NOFOLLOW`).
  ///
  /// - Throws: ``SystemError`` from `utimensat(2)`.
  package func setTimes(access: Timestamp, modification: Timestamp) throws(SystemError) {
    try withFolder { (folder, name) throws(SystemError) in
      var times = (access.timespec, modification.timespec)
      _ = try name.withCString { (cName) throws(SystemError) in
        try withUnsafePointer(to: &times) { (pointer) throws(SystemError) in
          try pointer.withMemoryRebound(to: timespec.self, capacity: 2) {
            (spec) throws(SystemError) in
            try retryingOnInterrupt { utimensat(folder, cName, spec, AT_SYMLINK_NOFOLLOW) }
          }
        }
      }
    }
  }

  /// Gives the entry (a link is not followed) an owner and group (`fchownat` with
  /// `AT_SYMLINK_NOFOLLOW`); only root may give them away.
  ///
  /// - Throws: ``SystemError`` from `fchownat(2)`.
  package func setOwner(user: UInt32, group: UInt32) throws(SystemError) {
    try withFolder { (folder, name) throws(SystemError) in
      _ = try name.withCString { (cName) throws(SystemError) in
        try retryingOnInterrupt { fchownat(folder, cName, user, group, AT_SYMLINK_NOFOLLOW) }
      }
    }
  }

  /// Sets the permission bits of the folder at the entry: `fchmod` on the folder opened with
  /// `O_NOFOLLOW`, or, when it cannot be opened for reading (a `-wx` folder of a user who is
  /// not root), `fchmodat` once `fstatat` has shown it is a folder and not a link.
  ///
  /// - Throws: ``SystemError``; `ENOTDIR` when the entry is not a folder.
  package func setFolderPermissions(_ permissions: mode_t) throws(SystemError) {
    try withFolder { (folder, name) throws(SystemError) in
      do throws(SystemError) {
        let opened = try FileDescriptor.open(
          name, in: folder, flags: [.folder, OpenFlags(rawValue: O_NOFOLLOW)], symlinks: .never)
        _ = try retryingOnInterrupt { fchmod(opened.rawValue, permissions) }
      } catch  where error.code == EACCES {
        guard try FileStatus.of(name, in: folder).kind == .directory else {
          throw SystemError(code: ENOTDIR)
        }
        _ = try name.withCString { (cName) throws(SystemError) in
          try retryingOnInterrupt { fchmodat(folder, cName, permissions, 0) }
        }
      }
    }
  }

  /// How ``rename(to:_:)`` treats an entry at the destination.
  package enum RenameMode: Sendable {
    /// Fail with `EEXIST` when the destination exists (`RENAME_NOREPLACE`; where the file
    /// system refuses that flag, a hard link then removing the old name:
    /// ``NoReplaceRename``).
    case noReplace
    /// Replace a file or link at the destination atomically (`renameat`).
    case replace
    /// Swap the two entries atomically, whatever they are (`RENAME_EXCHANGE`): how a folder
    /// takes the place of a file, or a file the place of an empty folder. File systems that
    /// refuse `RENAME_NOREPLACE` (FUSE) refuse this too, with `EINVAL`, and it has no safe
    /// substitute: the caller reports it.
    case exchange
  }

  /// Renames this entry to `destination` (`renameat2`), neither path passing a link.
  ///
  /// - Throws: ``SystemError`` from `renameat2(2)` (`EEXIST` with `.noReplace` when the
  ///   destination exists; `EINVAL` with `.exchange` where the file system refuses it), or
  ///   from ``NoReplaceRename/rename(_:in:to:in:)``'s fallback with `.noReplace`.
  package func rename(to destination: RelativeLocation, _ mode: RenameMode) throws(SystemError) {
    try withFolder { (fromFolder, fromName) throws(SystemError) in
      try destination.withFolder { (toFolder, toName) throws(SystemError) in
        _ = try fromName.withCString { (cFrom) throws(SystemError) in
          try toName.withCString { (cTo) throws(SystemError) in
            switch mode {
            case .replace:
              _ = try retryingOnInterrupt { renameat(fromFolder, cFrom, toFolder, cTo) }
            case .noReplace:
              try NoReplaceRename.rename(cFrom, in: fromFolder, to: cTo, in: toFolder)
            case .exchange:
              _ = try retryingOnInterrupt {
                squeeze_renameat2(fromFolder, cFrom, toFolder, cTo, SQUEEZE_RENAME_EXCHANGE)
              }
            }
          }
        }
      }
    }
  }

  /// Makes `destination` another name of the file at this entry (`linkat`, the entry itself
  /// not followed if it is a link).
  ///
  /// - Throws: ``SystemError`` from `linkat(2)` (`EEXIST` when the destination exists,
  ///   `EXDEV` across file systems).
  package func hardLink(at destination: RelativeLocation) throws(SystemError) {
    try withFolder { (fromFolder, fromName) throws(SystemError) in
      try destination.withFolder { (toFolder, toName) throws(SystemError) in
        _ = try fromName.withCString { (cFrom) throws(SystemError) in
          try toName.withCString { (cTo) throws(SystemError) in
            try retryingOnInterrupt { linkat(fromFolder, cFrom, toFolder, cTo, 0) }
          }
        }
      }
    }
  }

  /// True when this process may list, search and write the folder at the entry
  /// (`faccessat` with `AT_EACCESS`: root may whatever the bits say).
  package func isWritableFolder() -> Bool {
    (try? withFolder { (folder, name) throws(SystemError) in
      try name.withCString { (cName) throws(SystemError) in
        _ = try retryingOnInterrupt {
          faccessat(folder, cName, R_OK | W_OK | X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW)
        }
      }
    }) != nil
  }

  /// True when the folder at the entry has no entries (or cannot be listed: false).
  package func isEmptyFolder() -> Bool {
    guard
      let folder = try? FileDescriptor.open(
        relativePath, in: base, flags: .folder, symlinks: symlinks.forFolders),
      let entries = try? DirectoryReader.entries(of: folder.rawValue)
    else { return false }
    return entries.isEmpty
  }
}
