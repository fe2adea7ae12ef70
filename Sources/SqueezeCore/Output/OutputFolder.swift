import SqueezeSystem

/// The `-o` folder: created when missing (only the folder itself, never a missing parent, as
/// rsync makes only the last element of its destination), opened once, and checked writable (`faccessat`, without writing anything), so an output that cannot be
/// created, is read-only or not ours to write stops the run at once with one message instead
/// of one error per file (with status 74 when its file system has no room for it). A full
/// disk later, writing the outputs, stops the run at its first output (``FullDisk``).
enum OutputFolder {
  /// Why the output folder cannot be used.
  struct Unusable: Error, CustomStringConvertible {
    var path: RawPath
    var action: String
    var cause: SystemError
    /// The missing parent when that is why the folder cannot be created.
    var missingParent: RawPath? = nil
    var description: String {
      if let missingParent {
        return
          "cannot create output folder '\(path.displayString)': '\(missingParent.displayString)' does not exist (squeeze makes only the last folder of --output, as rsync does)"
      }
      return "cannot \(action) output folder '\(path.displayString)': \(cause)"
    }
  }

  /// Prepares `path` for writing.
  ///
  /// Only `path` itself is made when missing: a missing parent fails the run, so a backup
  /// to `/mnt/backup/photos` while the disk is not mounted at `/mnt/backup` stops with one
  /// message instead of filling the file system below, as `rsync -a S/ D/` stops (`mkdir
  /// "D" failed: No such file or directory`, exit status 11).
  ///
  /// - Parameter ownerMayNeedAccess: an argument's contents go to the folder's top (`a/x/`),
  ///   so the folder mirrors that source folder and carries its permission bits: when they
  ///   leave its owner without `rwx` (a `0555` source), squeeze, being the owner, gives
  ///   itself `rwx` while it works (the bits are set back once the work is done), as for
  ///   every folder of the mirror.
  /// - Returns: its index in `bases` and its identity (to keep discovery out of it).
  /// - Throws: ``Unusable`` naming the step that failed (and the missing parent, when
  ///   that is why `path` cannot be made).
  static func prepare(
    _ path: RawPath, bases: BaseDirectories, ownerMayNeedAccess: Bool = false
  ) throws(Unusable) -> (base: Int, identity: FileIdentity) {
    do throws(SystemError) {
      try RelativeLocation(
        base: Descriptor.currentDirectory, directory: path.parent, name: path.lastComponent,
        symlinks: .always
      )
      .makeDirectory(permissions: 0o777)
    } catch  where error == .fileExists {
      // There already: opened and checked below.
    } catch  where error == .noSuchFile {
      throw Unusable(path: path, action: "create", cause: error, missingParent: path.parent)
    } catch {
      throw Unusable(path: path, action: "create", cause: error)
    }
    let base: Int
    do {
      base = try bases.open(path)
    } catch {
      throw Unusable(path: path, action: "open", cause: error)
    }
    let descriptor = bases.descriptor(base)
    let identity: FileIdentity
    do {
      let status = try FileStatus.of(".", in: descriptor)
      identity = FileIdentity(status)
      if ownerMayNeedAccess && status.userID == ProcessControl.effectiveUserID
        && status.permissions & 0o700 != 0o700
      {
        try Descriptor.setPermissions(descriptor, status.permissions | 0o700)
      }
      // Writable and searchable for this process (effective ids; EROFS on a read-only
      // mount), checked without writing anything, so an up-to-date re-run changes nothing.
      try Descriptor.checkWritableFolder(descriptor)
    } catch {
      throw Unusable(path: path, action: "write to", cause: error)
    }
    return (base, identity)
  }
}
